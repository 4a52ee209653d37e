"""The boxed text table `dcgmi diag -r N` prints without `-j` (DCGM 3.x and 4.x wording).

3.x rows read `| GPU Memory | Pass - GPUs: 1, 2 |` then `|  | Fail - GPU: 0 |`; 4.x rows read
`| memory | Fail |` followed by one `|  | GPU1: Fail |` line per GPU. Warnings wrap over several
rows, cut every 45 characters, so continuation chunks are joined without adding spaces.
Rows count only inside the table's frame, after its `| Diagnostic | Result |` header: a `|`
line elsewhere (or in random bytes) is not a test result. A table whose last row no rule line closes was cut off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nvcre_tui.engine.parsers.base import NO_DATA, WRONG_FORMAT, ParseError
from nvcre_tui.engine.parsers.dcgm_model import (
    FAIL,
    NODE_LEVEL,
    DcgmEntityResult,
    DcgmResult,
    DcgmTest,
    DcgmWarning,
    normalize_status,
    normalize_test_name,
    summary_status,
    verdict,
)
from nvcre_tui.engine.parsers.prefixes import strip_line_prefixes

_SECTION = re.compile(r"^[+|]-+\s+([A-Za-z][\w ]*?)\s+-+[+|]", re.ASCII)
_GPU_STATUS = re.compile(r"^GPU\s*(\d+)\s*:\s*([A-Za-z][A-Za-z ]*)$", re.ASCII)  # 4.x "GPU1: Fail"
_GROUPED = re.compile(r"^([A-Za-z]+)\s+-\s+(All|GPUs?:\s*[\d,\s]+)$", re.ASCII)  # 3.x "Fail - GPU: 0"
_CHUNK = 45  # DATA_INFO_TAG_LEN in dcgmi/Diag.cpp
_NOTES = ("Warning", "Error", "Info")
_METADATA = {"DCGM Version": "version", "Driver Version Detected": "driver"}
_RULE = re.compile(r"^\+[-=+]{3,}\+$", re.ASCII)  # +----+----+ (and +====+====+ under the header)


@dataclass
class _OpenTest:
    category: str
    name: str
    status: str | None  # 4.x summary; None when the row carried 3.x grouped results
    results: list[DcgmEntityResult] = field(default_factory=list)
    warnings: list[list[str]] = field(default_factory=list)  # chunks per warning


def _grouped(status_text: str, scope: str, every_gpu: tuple[int, ...]) -> DcgmEntityResult:
    """A 3.x "<Status> - All" / "<Status> - GPU(s): ..." cell; "All" means every detected GPU."""
    if scope == "All":
        return DcgmEntityResult("all GPUs", every_gpu, normalize_status(status_text))
    gpus = tuple(int(part) for part in re.findall(r"\d+", scope))
    label = f"GPU {gpus[0]}" if len(gpus) == 1 else "GPUs " + ",".join(map(str, gpus))
    return DcgmEntityResult(label, gpus, normalize_status(status_text))


class _TableReader:
    def __init__(self) -> None:
        self.category = "Unknown"
        self.tests: list[DcgmTest] = []
        self.open: _OpenTest | None = None
        self.note: list[str] | None = None  # chunks of the warning or info being continued
        self.metadata: dict[str, str] = {}
        # 3.x "All" rows name no index: dcgmi lists one device id per GPU it tested, GPUs 0..n-1.
        self.every_gpu: tuple[int, ...] = ()
        self.rows = 0
        self.errors: list[str] = []
        self.framed = False  # a rule line was seen
        self.inside = False  # ... followed by the Diagnostic | Result header
        self.closed = False  # a rule line followed the last row: the table is whole

    def close(self) -> None:
        test, self.open, self.note = self.open, None, None
        if test is None:
            return
        results = tuple(test.results)
        warnings = tuple(DcgmWarning(" ".join("".join(chunks).split())) for chunks in test.warnings)
        status = test.status or summary_status(results)
        self.tests.append(DcgmTest(test.category, normalize_test_name(test.name), status, results, warnings))

    def feed(self, raw: str) -> None:
        line = strip_line_prefixes(raw).strip()
        if not self.inside:
            self._outside(line)
            return
        section = _SECTION.match(line)
        if _RULE.match(line):
            self.closed = True
        elif section:
            self.close()
            self.category = section.group(1).strip()
        elif line.startswith("|") and line.count("|") >= 2:
            # The value runs to the last "|": a warning may itself contain one.
            self.closed = False
            second, last = line.index("|", 1), line.rindex("|")
            self._row(line[1:second].strip(), line[second + 1 : last] if last > second else line[second + 1 :])

    def _outside(self, line: str) -> None:
        """Before the table: its frame, then its header; and the `Error:` lines of a run that printed none."""
        if _RULE.match(line):
            self.framed = True
        elif self.framed and line.startswith("|") and line.count("|") == 3 \
                and [cell.strip() for cell in line.strip("|").split("|")] == ["Diagnostic", "Result"]:
            self.inside = True
        elif line.startswith("Error:") and not self.tests:
            self.errors.append(line[len("Error:") :].strip() or line)
        else:
            self.framed = False

    def _row(self, name: str, cell: str) -> None:
        value = cell.strip()
        self.rows += 1
        if self.category == "Metadata" or name in _METADATA:
            if name in _METADATA:
                self.metadata[_METADATA[name]] = value
            elif name == "GPU Device IDs Detected":
                self.every_gpu = tuple(range(len([part for part in value.split(",") if part.strip()])))
            return
        if name.split(":")[0] in _NOTES:
            self._note(name, cell)
        elif not name:
            self._continuation(value, cell)
        else:
            self.close()
            grouped = _GROUPED.match(value)
            self.open = _OpenTest(self.category, name, None if grouped else normalize_status(value))
            if grouped:
                self.open.results.append(_grouped(grouped.group(1), grouped.group(2), self.every_gpu))

    def _note(self, name: str, cell: str) -> None:
        chunks = [_chunk(cell)]
        self.note = chunks
        if name.startswith("Info"):
            return
        if self.open is None:
            # An error row with no test above it (a deployment check that aborted the run) still
            # fails the node: it becomes a failed test named after its section.
            self.open = _OpenTest(self.category, self.category, FAIL)
        self.open.warnings.append(chunks)

    def _continuation(self, value: str, cell: str) -> None:
        gpu = _GPU_STATUS.match(value)
        grouped = _GROUPED.match(value)
        if self.open is not None and gpu:
            index = int(gpu.group(1))
            self.open.results.append(DcgmEntityResult(f"GPU {index}", (index,), normalize_status(gpu.group(2))))
            self.note = None
        elif self.open is not None and grouped:
            self.open.results.append(_grouped(grouped.group(1), grouped.group(2), self.every_gpu))
            self.note = None
        elif self.note is not None:
            self.note.append(_chunk(cell))


def _chunk(cell: str) -> str:
    """The text of a wrapped cell, keeping a trailing space that belongs to the chunk."""
    body = cell[1:] if cell.startswith(" ") else cell
    return body[:_CHUNK] if len(body) > _CHUNK else body.rstrip()


def parse_dcgm_table(lines: Iterable[str]) -> DcgmResult:
    """The DcgmResult of a `dcgmi diag` text table; ParseError when the lines hold none."""
    reader = _TableReader()
    for line in lines:
        reader.feed(line)
    reader.close()
    runtime_error = "; ".join(reader.errors) if reader.errors and not reader.tests else None
    if not reader.tests and runtime_error is None:
        if reader.inside:
            raise ParseError(NO_DATA, "dcgmi diag table holds no test results")
        raise ParseError(WRONG_FORMAT, "not dcgmi diag output (no JSON document, no framed result table "
                                       "with a 'Diagnostic | Result' header)")
    tests = tuple(reader.tests)
    # Rows end at a rule line; rows with none after them were cut off (a killed run): what they show fails a node,
    # what they do not show (the tests after the cut) never passes one.
    cut = f"the table stops after {tests[-1].name} with no closing frame (output cut off, or the run was killed)" \
        if reader.inside and tests and not reader.closed else None
    return DcgmResult("table", reader.metadata.get("version"), reader.metadata.get("driver"), tests,
                      runtime_error, 1, None, verdict(tests, runtime_error, None, None, node_level=NODE_LEVEL), incomplete=cut)
