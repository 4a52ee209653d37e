"""Launcher prefixes before each line of tool output, in any mix: kubelet timestamps, mpirun tags, srun labels.

`kubectl logs --timestamps` puts an RFC 3339 time first, `kubectl logs --prefix` (one log read from several pods by
a label selector) the source in brackets before it ("[pod/NAME/CONTAINER] "); Open MPI `mpirun --tag-output` a "[jobid,rank]<stdout>:"
tag; Slurm `srun --label` the task id, a colon and a space ("0: ", padded when there are many tasks); MPICH and
Intel MPI `mpirun -prepend-rank` (`-l`) the rank in brackets ("[3] ") before every write, so a line printed in
several writes (an nccl-tests row: its size cells, then each half) carries the same tag again, glued to the cell
before it ("-1[3]    1626.5"): those copies are cut out too. `torchrun --tee 3` puts the worker's role and local rank
before each line it relays, with no space ("[default3]:"); PyTorch's own "[rank3]: " before an exception's lines is
no launcher prefix (it says which rank failed) and stays.
A log can carry several of them, in whatever order its launchers nested.
"""

from __future__ import annotations

import re
from datetime import datetime

from nvcre_tui.engine.parsers.base import split_kubelet_prefix

_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:", re.ASCII)
_SRUN_LABEL = re.compile(r"[ \t]*\d{1,7}: ", re.ASCII)
_RANK_TAG = re.compile(r"\[\d{1,7}\] ", re.ASCII)
# torchrun's "[{role}{local_rank}]:" (role "default" unless --role names one); never PyTorch's "[rank3]:".
_TORCHRUN_TEE = re.compile(r"\[(?!rank\d)[A-Za-z_][\w.-]{0,62}?\d{1,5}\]:", re.ASCII)
# kubectl's "[%s/%s/%s] " of kind, pod and container: DNS names (lower case, digits, '-' and '.').
_KUBECTL_SOURCE = re.compile(r"\[pod/[a-z0-9][-a-z0-9.]{0,252}/[a-z0-9][-a-z0-9]{0,62}\] ", re.ASCII)
_MAX_PREFIXES = 4


def split_line_prefixes(line: str) -> tuple[datetime | None, str]:
    """(kubelet timestamp or None, rest) with every launcher prefix removed, in whatever order they came."""
    when: datetime | None = None
    for _ in range(_MAX_PREFIXES):
        stamp, rest = split_kubelet_prefix(line)
        if rest is line:
            match = ((_MPI_TAG.match(line) or _RANK_TAG.match(line) or _KUBECTL_SOURCE.match(line)
                      or _TORCHRUN_TEE.match(line)) if line[:1] == "[" else _SRUN_LABEL.match(line))
            if match is None:
                return when, line
            rest = line[match.end() :]
            if match.re is _RANK_TAG:
                rest = rest.replace(match.group()[:-1], " ")  # its copies before later writes of the line
        when = when or stamp
        line = rest
    return when, line


def strip_line_prefixes(line: str) -> str:
    """The line without kubelet timestamp, mpirun tag and srun label (any mix)."""
    return split_line_prefixes(line)[1]


def prefix_tokens(tokens: list[str]) -> int:
    """How many leading whitespace-split tokens are launcher prefixes (a glued mpirun tag is cut off in place).

    The token-level twin of `split_line_prefixes`, for readers that split every line anyway.
    """
    start = 0
    while start < len(tokens) and start < _MAX_PREFIXES:
        token = tokens[start]
        if token[10:11] == "T" and token[4:5] == "-" and (token[-1:] == "Z" or token[-6:-5] in ("+", "-")):
            start += 1  # kubelet timestamp (shape only, as strip_kubelet_prefix)
        elif token[-1:] == ":" and token[:-1].isdigit() and token.isascii():
            start += 1  # srun --label
        elif token[:1] == "[" and token[-1:] == "]" and token[1:-1].isdigit() and token.isascii() and len(token) <= 9:
            start += 1  # MPICH/Intel MPI -prepend-rank; its copies glued to later cells are cut out in place
            if any(token in cell for cell in tokens[start:]):
                tokens[start:] = " ".join(tokens[start:]).replace(token, " ").split()
        elif token[:5] == "[pod/" and _KUBECTL_SOURCE.fullmatch(token + " "):
            start += 1  # kubectl logs --prefix
        elif token[:1] == "[" and (tee := _TORCHRUN_TEE.match(token)):
            rest = token[tee.end() :]
            if rest:  # "[default0]:#" or a size: glued, cut off in place
                tokens[start] = rest
                return start
            start += 1
        elif token[:1] == "[" and _MPI_TAG.match(token):
            rest = token[token.index(">:") + 2 :]
            if rest:  # "[1,0]<stdout>:#" or a size that filled its column
                tokens[start] = rest
                return start
            start += 1
        else:
            break
    return start
