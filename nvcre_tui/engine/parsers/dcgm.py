"""`dcgmi diag` results (`-r 4 -j` JSON of DCGM 3.x / 4.x / hybrid, --iterations, or the text table).

`parse_dcgm` returns a DcgmResult whose `failure` is the node verdict: None when every test passed
(warnings allowed), else a Failure naming the test and GPU, e.g. "memory failed on GPU 1: ...". Output
that shows no pass blames no node: a test reporting a pass with no per-GPU result (NoDataCollected; the
3.x table's node-wide Deployment checks excepted) and a result whose entity index is no index
(`entity_id: -5`, `"0"`: WrongFormat, the field named) are never passed over.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from nvcre_tui.engine.parsers.base import as_lines, reading
from nvcre_tui.engine.parsers.dcgm_json import parse_dcgm_json
from nvcre_tui.engine.parsers.dcgm_model import NOTHING_RAN, RUNTIME_ERROR, TEST_FAILED, DcgmEntityResult, DcgmResult, DcgmTest, DcgmWarning
from nvcre_tui.engine.parsers.dcgm_table import parse_dcgm_table
from nvcre_tui.engine.parsers.prefixes import strip_line_prefixes

__all__ = [
    "NOTHING_RAN",
    "RUNTIME_ERROR",
    "TEST_FAILED",
    "DcgmEntityResult",
    "DcgmResult",
    "DcgmTest",
    "DcgmWarning",
    "parse_dcgm",
]


def parse_dcgm(source: Iterable[str] | str) -> DcgmResult:
    """Parse dcgmi diag output from lines (or one text): JSON when a line starts with `{` before any table.

    Raises ParseError(WrongFormat) for anything that is not dcgmi diag output, ParseError(NoDataCollected)
    for output that holds no test result and no runtime error.
    """
    with reading():
        return _parse(as_lines(source))


def _parse(lines: Iterator[str]) -> DcgmResult:
    head: list[str] = []
    for line in lines:
        head.append(line)
        text = strip_line_prefixes(line).lstrip()
        if text.startswith("{"):
            document = "".join(strip_line_prefixes(part) for part in itertools.chain(head, lines))
            return parse_dcgm_json(document)
        if text.startswith(("|", "+")):
            break
    return parse_dcgm_table(itertools.chain(head, lines))
