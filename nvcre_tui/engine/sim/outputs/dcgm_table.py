"""The boxed text table of `dcgmi diag -r N` (no `-j`), in 3.x or 4.x wording."""

from __future__ import annotations

from collections.abc import Sequence

from nvcre_tui.engine.sim.outputs.dcgm import DISPLAY_3X, LEVEL4_TESTS, SOFTWARE_3X, Outcomes, outcome, worst

_RULE = "+---------------------------+------------------------------------------------+"
_CHUNK = 45


def _row(name: str, value: str) -> str:
    return f"| {name:<25s} | {value:<46s} |"


def _section(name: str) -> str:
    edge = "|" if name in ("Metadata", "Deployment") else "+"
    return f"{edge}-----  {name}  {'-' * (18 - len(name))}+{'-' * 48}{edge}"


def _wrapped(label: str, text: str) -> list[str]:
    """A long message cut every 45 characters, as dcgmi does, the label on the first row only."""
    chunks = [text[start : start + _CHUNK] for start in range(0, len(text), _CHUNK)] or [""]
    return [_row(label if index == 0 else "", chunk) for index, chunk in enumerate(chunks)]


def _grouped_3x(statuses: dict[int, str]) -> list[str]:
    """3.x per-test cells: "Pass - All", or one "<Status> - GPU(s): ..." row per status."""
    if len(set(statuses.values())) == 1:
        return [f"{next(iter(statuses.values()))} - All"]
    cells = []
    for status in ("Pass", "Warn", "Fail", "Skip"):
        gpus = [str(gpu) for gpu, value in statuses.items() if value == status]
        if gpus:
            cells.append(f"{status} - {'GPU' if len(gpus) == 1 else 'GPUs'}: {', '.join(gpus)}")
    return cells


def write_dcgm_table(gpus: Sequence[int], outcomes: Outcomes, *, version: str = "4",
                     tests: Sequence[tuple[str, str]] = LEVEL4_TESTS, driver: str = "570.133.20") -> str:
    """The text output of `dcgmi diag` for these outcomes; `version` is "3" or "4"."""
    dcgm_version = "4.5.2" if version == "4" else "3.3.9"
    lines = ["Successfully ran diagnostic for group.", _RULE, _row("Diagnostic", "Result"), _RULE.replace("-", "="),
             _section("Metadata"), _row("DCGM Version", dcgm_version), _row("Driver Version Detected", driver),
             _row("GPU Device IDs Detected", ", ".join("2330" for _ in gpus))]
    category = None
    for test_category, test in tests:
        if version == "3" and test != "software" and test not in DISPLAY_3X:
            continue
        if test_category != category:
            category = test_category
            lines.append(_section(category))
        results = {gpu: outcome(outcomes, test, gpu) for gpu in gpus}
        warnings = [(gpu, result.warning) for gpu, result in results.items() if result.warning]
        if version == "4":
            lines.append(_row(test, worst([result.status for result in results.values()])))
            for _, warning in warnings:
                lines += _wrapped("Warning", warning)
            lines += [_row("", f"GPU{gpu}: {result.status}") for gpu, result in results.items()]
            continue
        if test == "software":
            status = worst([result.status for result in results.values()])
            for name in SOFTWARE_3X:
                failing = name == "Page Retirement/Row Remap" and status != "Pass"
                lines.append(_row(name, status if failing else "Pass"))
                lines += [row for _, warning in warnings if failing for row in _wrapped("Error", warning)]
            continue
        cells = _grouped_3x({gpu: result.status for gpu, result in results.items()})
        lines += [_row(DISPLAY_3X[test] if index == 0 else "", cell) for index, cell in enumerate(cells)]
        for gpu, warning in warnings:
            lines += _wrapped("Warning", f"GPU {gpu} {warning}")
    lines.append(_RULE)
    return "\n".join(lines) + "\n"
