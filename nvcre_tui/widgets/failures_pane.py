"""The dashboard's failures pane: the infrastructure faults the highlighted certification's diagnoses named and
every node it blamed, with the reason and the measured value (where none failed, the diagnosis's conviction); enter asks for its evidence, l for its log (messages
up: the screen decides).

Rows are replaced only when they change, so the cursor stays put between refreshes. The columns fit the width
(FittedTable): on 80 columns a row wraps rather than cut its measured value, and the Log column (whether `l` has a
log to open; it says so when not) goes first."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message

from nvcre_tui.engine.api.vocabulary import NodeState
from nvcre_tui.engine.views.failures import FailureRow
from nvcre_tui.widgets.fitted_table import Column, Drop, FittedTable
from nvcre_tui.widgets.verdict_mark import conviction_said

# The reason beside the node, the measured value after the category: what an on-call reads first, on any width. The
# category goes last, and only where a measured value (several checks) would not fit whole in a row's lines beside
# it: the drill-down (`enter`) names it. A node's name is never broken from its glyph; an infrastructure fault's
# subject wraps at words rather than cut the measured value's threshold.
COLUMNS = (Column("Node", glyph=True), Column("Reason"), Column("Category (+others)", Drop.LAST), Column("Measured"), Column("Log", Drop.FIRST))


class FailuresPane(FittedTable):
    """A table of FailureRow; posts EvidenceRequested / LogRequested for the row under the cursor."""

    HELP_NAME = "in the failures pane"  # how `?` says where its keys apply
    # Out of the footer (the pane's title says "enter evidence, l log", ? lists them): on 80 columns they cut ? and q off.
    BINDINGS = [
        Binding("enter", "evidence", "Evidence", show=False, id="failures.evidence", tooltip="The highlighted node's evidence (drill-down on it)"),
        Binding("l", "log", "Log", show=False, id="failures.log", tooltip="The log of the run that convicted the highlighted node"),
    ]

    class EvidenceRequested(Message):
        """Open the evidence of `row`."""

        def __init__(self, row: FailureRow) -> None:
            super().__init__()
            self.row = row

    class LogRequested(Message):
        """Open the log of `row`'s Job."""

        def __init__(self, row: FailureRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(COLUMNS, id=id)
        self.failures: list[FailureRow] = []

    @staticmethod
    def _key(row: FailureRow) -> str:
        return row.node

    def show_rows(self, rows: list[FailureRow]) -> None:
        """Show these rows; nothing happens when they are the ones shown (no flicker, cursor kept)."""
        if rows == self.failures:
            return
        self.failures = list(rows)
        shown = {}
        for row in rows:
            category = row.categories_said
            # No value failed (a flaky node crashed its tests): the diagnosis's conviction in its place, as the wall says it.
            measured = row.measured if row.measured != "-" else conviction_said(row.message) or "-"
            cells = (f"{NodeState(row.state).glyph} {row.node}", row.reason, category, measured, "log" if row.job else "-")
            shown[self._key(row)] = cells
        self.set_rows(shown)  # in place, cells as written (they come from the cluster's objects); the cursor stays on the same node

    def current(self) -> FailureRow | None:
        """The row under the cursor."""
        if not self.failures or not 0 <= self.cursor_row < len(self.failures):
            return None
        return self.failures[self.cursor_row]

    def action_evidence(self) -> None:
        row = self.current()
        if row is not None:
            self.post_message(self.EvidenceRequested(row))

    def action_log(self) -> None:
        row = self.current()
        if row is not None:
            self.post_message(self.LogRequested(row))
