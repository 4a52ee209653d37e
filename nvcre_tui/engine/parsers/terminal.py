"""Terminal control sequences in tool output: what a wrapper or logger added to colour a line says nothing about it.

A row printed as `ESC[31m 1048576 ESC[0m ...` is the row `1048576 ...`; read without its colours, a coloured row
is never passed over as noise.
"""

from __future__ import annotations

import re

ESCAPE = "\x1b"
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]", re.ASCII)  # CSI sequences: colours, cursor moves
_COLOUR = re.compile(r"\x1b\[[0-9;:]*m", re.ASCII)  # SGR: colours and weights only


def without_terminal_control(text: str) -> str:
    """`text` without its CSI sequences (callers test `ESCAPE in text` first: it is rare)."""
    return _CSI.sub("", text)


def without_colours(text: str) -> str:
    """`text` without its colour sequences; any other control sequence stays, for the output to show neutralised."""
    return _COLOUR.sub("", text)
