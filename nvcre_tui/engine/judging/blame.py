"""Which host a failed run's own output names as the one at fault (reference B; issue 9 point 4).

The same evidence on the simulator and on a cluster: the lines the tools print when a rank dies.
In order of trust:
1. torchrun's "Root Cause (first observed failure)" block: `host : <name>`;
2. the first `host:pid:tid [gpu] NCCL WARN ...` line (NCCL names the host that saw the error) whose warning no
   other host printed: the same warning on several hosts (a setting NCCL could not parse, at start-up) singles
   none of them out;
3. nccl-tests' `<host>: Test NCCL failure ...` / `Test CUDA failure` line;
4. mpirun's "Process name: [[jobid,1],<rank>]" mapped to its host through the nccl-tests rank table.

The answer is a host as the pod saw it (`gethostname()`): on a cluster a pod hostname, which the
caller maps to a node; an unknown host convicts nobody. It comes with the evidence, the line that named the host,
which the Job's failure message carries: the pod's own status says only that a container exited non-zero.

Some output blames a cluster service instead of any node (`service_at_fault`): dcgmi that cannot reach
the GPU Operator's host engine proves nothing about the node its pod ran on, so the Job fails and no node
is blamed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcre_tui.engine.api.vocabulary import HARDWARE_FAILURE_DETECTED, SCHEDULING_BLOCKED
from nvcre_tui.engine.parsers.base import strip_kubelet_prefix

_MPI_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:", re.ASCII)
_ROOT_CAUSE = "Root Cause (first observed failure):"
_ROOT_HOST = re.compile(r"^\s*host\s*:\s*(\S+)\s*$", re.ASCII)
_NCCL_WARN = re.compile(r"^([A-Za-z0-9][\w.-]*):\d+:\d+ \[(\d+)\] NCCL WARN (.*)$", re.ASCII)
_TEST_FAILURE = re.compile(r"^([A-Za-z0-9][\w.-]*): Test (?:NCCL|CUDA) failure ", re.ASCII)
_MPI_PROCESS = re.compile(r"^\s*Process name:\s*\[\[\d+,\d+\],(\d+)\]", re.ASCII)
_RANK_LINE = re.compile(r"Rank\s+(\d{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d", re.ASCII)


#: Output naming a cluster service as the cause: (the service and how it failed, what dcgmi or a tool prints then).
#: dcgmi's runtime errors of the host engine itself convict no node: its connection lost, a host engine older than
#: the client (the GPU Operator's DCGM before 4.2 answers dcgmi 4.5's request with -12), a diagnostic already running
#: on it (NVSentinel's own, say).
_SERVICES_DOWN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the DCGM host engine unreachable", re.compile(r"unable to establish a connection to the specified host|"
                                                    r"unable to connect to host engine|host engine connection invalid|"
                                                    r"connection to the host engine is not valid", re.IGNORECASE)),
    ("the DCGM host engine older than dcgmi (upgrade the GPU Operator's DCGM, or use a dcgmi image of its version)",
     re.compile(r"API version mismatch", re.IGNORECASE)),
    ("the DCGM host engine busy with another diagnostic", re.compile(r"diag(?:nostic)? instance is already running|"
                                                                     r"diagnostic is already running", re.IGNORECASE)),
)


EVIDENCE_CHARS = 200  # a line quoted as evidence, at most


@dataclass(frozen=True)
class Blame:
    """Who the output names (a host, or the group member it maps to) and the line that names it."""

    name: str
    evidence: str


def _quoted(text: str) -> str:
    return " ".join(text.split())[:EVIDENCE_CHARS]


def _text(line: str) -> str:
    text = strip_kubelet_prefix(line.rstrip("\n"))
    tag = _MPI_TAG.match(text)
    return text[tag.end():] if tag else text


def host_at_fault(lines: Iterable[str]) -> Blame | None:
    """The host the output blames (see the module docstring) and the line that names it, or None when it names none."""
    root: str | None = None
    test: Blame | None = None
    warnings: list[tuple[str, str, str]] = []  # (host, CUDA device, warning) in order
    rank: int | None = None
    process = ""
    ranks: dict[int, str] = {}
    in_root = False
    for line in lines:
        text = _text(line)
        if "Rank" in text and (found := _RANK_LINE.search(text)):
            ranks.setdefault(int(found.group(1)), found.group(2))
            continue
        if _ROOT_CAUSE in text:
            in_root = True
            continue
        if in_root and root is None and (found := _ROOT_HOST.match(text)):
            root = found.group(1)
            continue
        if found := _NCCL_WARN.match(text):
            warnings.append((found.group(1), found.group(2), found.group(3).strip()))
        elif test is None and (found := _TEST_FAILURE.match(text)):
            test = Blame(found.group(1), _quoted(text))
        elif rank is None and (found := _MPI_PROCESS.match(text)):
            rank, process = int(found.group(1)), _quoted(text)
    mpirun = None
    if rank is not None and rank in ranks:
        mpirun = Blame(ranks[rank], f"mpirun: the first process to exit non-zero was rank {rank} on {ranks[rank]} ({process})")
    if root is not None:  # its own NCCL warning says what failed there, else torchrun's words
        return next((_warned(*w) for w in warnings if w[0] == root), Blame(root, f"torchrun's root cause (first observed failure) on host {root}"))
    return _lone_warning(warnings) or test or mpirun


def _warned(host: str, device: str, warning: str) -> Blame:
    return Blame(host, _quoted(f"{host} GPU {device}: NCCL WARN {warning}"))


def _lone_warning(warnings: list[tuple[str, str, str]]) -> Blame | None:
    """The host of the first NCCL warning that no other host printed too."""
    hosts: dict[str, set[str]] = {}
    for host, _, warning in warnings:
        hosts.setdefault(warning, set()).add(host)
    return next((_warned(*w) for w in warnings if len(hosts[w[2]]) == 1), None)


def service_at_fault(lines: Iterable[str]) -> str | None:
    """"<service and how it failed>: <the line>" when the output blames a cluster service, not a node; else None."""
    for line in lines:
        text = _text(line)
        for service, pattern in _SERVICES_DOWN:
            if pattern.search(text):
                return f"{service}: {_quoted(text)}"
    return None


def node_at_fault(lines: Iterable[str], members: Iterable[str], hosts: Mapping[str, str] | None = None) -> Blame | None:
    """The group member the output blames (its host mapped through `hosts`, pod hostname -> node, else taken as a
    node name) with the line that names it; None when the host is no member of the group (never a guess)."""
    found = host_at_fault(lines)
    if found is None:
        return None
    host, group = found.name, set(members)
    short = host.split(".", 1)[0]  # torchrun names socket.getfqdn(): <pod hostname>.<subdomain>.<ns>.svc.cluster.local
    for candidate in ((hosts or {}).get(host), (hosts or {}).get(short), host, short):
        if candidate in group:
            return Blame(candidate, found.evidence)
    return None


__all__ = ["Blame", "host_at_fault", "node_at_fault", "service_at_fault"]


# Reasons that name the node itself whatever the group's size: a health check flagged it, its pod could not be placed.
NODE_SPECIFIC_REASONS = frozenset({HARDWARE_FAILURE_DETECTED, SCHEDULING_BLOCKED})


def blamed_together(members: Sequence[str], blamed: Sequence[Mapping[str, object]], reason: str) -> bool:
    """Whether a group's Job blamed a node only with its whole multi-node group (a run that missed a threshold, or
    failed with no node named): that convicts none of them by itself (the console's and the report's `suspect`). A
    single-node group, a node blamed apart from others, or a node-specific reason convicts."""
    alone = len(members) <= 1 or len({f.get("name") for f in blamed}) < len(members)
    return not alone and reason not in NODE_SPECIFIC_REASONS
