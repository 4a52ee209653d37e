"""A certification's summary, as the drill-down's top line shows it when selected: its result, its categories passed
and failed, its failed nodes, its runtime and wait, the infrastructure faults its diagnoses named. Each from what the
dashboard's row and failures pane show (certification_row, fault_rows), so the words are theirs."""

from __future__ import annotations

from datetime import datetime

from nvcre_tui.engine.api.vocabulary import FAILED, RESULT_GLYPHS
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.certifications import certification_row, deleting_result
from nvcre_tui.engine.views.failures import fault_rows
from nvcre_tui.engine.views.snapshot import Snapshot


def certification_summary(snapshot: Snapshot, name: str, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines of certification `name` ([] when it is not in `snapshot`): "Result ✗ FAILED", "Categories
    1/2 passed, 1 failed: communication/nccl-all-reduce" (`#2` where one runs twice), "Failed nodes 32", "Runtime 2m16s
    (+27m44s waited)", "Infra faults ..." (none: "none named")."""
    cert = snapshot.certification(name)
    view = snapshot.views.get(name)
    if cert is None or view is None:
        return []
    row = certification_row(snapshot, cert, now)
    failed = [category.name for category in view.categories if category.status.get("status") == FAILED]
    faults = fault_rows(snapshot, name)
    return [("Result", f"{RESULT_GLYPHS.get(row.result, '·')} {deleting_result(snapshot, name) or row.result}"),
            ("Categories", f"{row.passed} passed" + (f", {len(failed)} failed: {', '.join(failed)}" if failed else "")),
            ("Failed nodes", str(row.failed_nodes)),
            ("Runtime", row.runtime),
            ("Infra faults", "; ".join(f"{fault.node} ({fault.categories_said})" for fault in faults) or "none named")]
