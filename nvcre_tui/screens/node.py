"""One node: its labels and state, and every result it has across categories and certifications."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from nvcre_tui.engine.nodes import is_cordoned, node_labels, node_name
from nvcre_tui.engine.views import Snapshot, node_history, node_states
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.detail import evidence_text, label
from nvcre_tui.widgets.node_state import NodeState

SHOWN_LABELS = ("nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.clique")


class NodeScreen(NvcreScreen):
    """Results for one node, newest certification first; `l` opens the highlighted job's log."""

    BINDINGS = [
        Binding("l", "logs", "Logs", id="node.logs"),
        Binding("escape", "app.pop_screen", "Back", id="node.back"),
    ]
    DEFAULT_CSS = """
    NodeScreen #summary { height: auto; padding: 0 1; border-bottom: solid $panel; }
    NodeScreen #results { height: 1fr; }
    NodeScreen #evidence-box { height: 12; border-top: solid $panel; padding: 0 1; }
    """

    def __init__(self, name: str) -> None:
        super().__init__()
        self.node = name
        self._history: list[dict[str, object]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="summary")
        yield DataTable(cursor_type="row", id="results")
        with VerticalScroll(id="evidence-box"):
            yield Static(id="evidence")
        yield CommandBar()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#results", DataTable).add_columns("Certification", "Category", "Job", "Group", "Result", "Measurements", "Reason")
        self.query_one("#results").focus()
        super().on_mount()

    def show(self, snapshot: Snapshot) -> None:
        node = next((n for n in snapshot.nodes if node_name(n) == self.node), None)
        summary = Text()
        if node is None:
            summary.append(f"{self.node}: no such node\n", style="bold")
        else:
            state, detail = node_states(snapshot).get(self.node, ("untested", ""))
            glyph = NodeState(state).glyph
            label(summary, "Node", f"{self.node}   {glyph} {state}" + ("   (cordoned)" if is_cordoned(node) else ""))
            if detail:
                label(summary, "Why", detail)
            for key in SHOWN_LABELS:
                label(summary, key.split("/")[-1], node_labels(node).get(key, "-"))
        self.query_one("#summary", Static).update(summary)
        table = self.query_one("#results", DataTable)
        selected = self._history[table.cursor_row]["job"] if 0 <= table.cursor_row < len(self._history) else None
        table.clear()
        self._history = node_history(snapshot, self.node)
        for row in self._history:
            measured = ", ".join(f"{k} {v:.1f}" for k, v in sorted(row["measurements"].items()))  # type: ignore[union-attr]
            failures = row["failures"]
            result = "✗ failed" if failures else ("✗ validation" if row["validationFailed"] else ("✓ " if row["phase"] == "Succeeded" else "⋯ ") + str(row["phase"]))
            reason = "; ".join(f"{f['reason']}" for f in failures)  # type: ignore[union-attr]
            table.add_row(row["certification"], row["category"], row["job"], f"{row['groupSize']} nodes", result, measured, reason)
        if table.row_count:
            jobs = [row["job"] for row in self._history]
            table.move_cursor(row=jobs.index(selected) if selected in jobs else 0)  # the same job, not the same row
            self._show_evidence(table.cursor_row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_evidence(event.cursor_row)

    def _show_evidence(self, index: int) -> None:
        text = Text()
        if 0 <= index < len(self._history):
            row = self._history[index]
            for failure in row["failures"]:  # type: ignore[union-attr]
                text.append(f"{failure['reason']}: {failure.get('message', '')}\n", style="bold")
                evidence_text(text, failure.get("evidence"))
            if not row["failures"]:
                evidence_text(text, row["evidence"])  # type: ignore[arg-type]
        self.query_one("#evidence", Static).update(text or Text("no failures for this node in this job"))

    def action_logs(self) -> None:
        from nvcre_tui.screens.logs import LogsScreen

        table = self.query_one("#results", DataTable)
        if 0 <= table.cursor_row < len(self._history):
            self.app.push_screen(LogsScreen(str(self._history[table.cursor_row]["job"])))
