"""One node: its labels and state, every live result across categories and certifications, its archived
history (with a bus bandwidth trend and whether its baseline went stale) and NVSentinel's view of it.
Where a category diagnosed, a Job's row marks the node with the diagnosis's verdict, not with that Job's blame
(a diagnosis may clear a node its screening group blamed).

The history comes from the session's read-only `history` query and NVSentinel's ValidationRequests from
the session's `validation_requests` cache: the screen never opens the database or the store itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Static

from nvcre_tui.engine.api.bodies import meta_of
from nvcre_tui.engine.api.nodes import NODES_WITHHELD, is_cordoned, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import FAILED, LABEL_GPU_CLIQUE, LABEL_GPU_COUNT, LABEL_GPU_PRODUCT
from nvcre_tui.engine.history.baseline import FIELDS, baseline_of
from nvcre_tui.engine.history.nvsentinel import sentinel_view
from nvcre_tui.engine.history.queries import shown_value, state_said
from nvcre_tui.engine.history.sparkline import sparkline
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, with_unit
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.protocol import VALIDATION_REQUEST
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.nodes import node_history, node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import narrowing_set, state_word
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.detail import evidence_text, label, shown, shown_measurement
from nvcre_tui.widgets.diagnose_tests import clearance_text, passes_said
from nvcre_tui.widgets.fitted_list import ELLIPSIS, NO_BREAK, cut_at_word
from nvcre_tui.widgets.fitted_table import Column, Drop, FittedTable
from nvcre_tui.widgets.hanging import Hanging, HangingStatic, hanging
from nvcre_tui.widgets.node_state import STALE_GLYPH, NodeState
from nvcre_tui.widgets.verdict_mark import verdict_mark, verdict_only, verdict_said

SHOWN_LABELS = (LABEL_GPU_PRODUCT, LABEL_GPU_COUNT, LABEL_GPU_CLIQUE)
MARKING = (NodeState.FAILED, NodeState.SUSPECT, NodeState.INCONCLUSIVE)  # a Job's Result against the node
HISTORY_ROWS = 6  # the newest certifications shown; `nvcre history node NAME` lists them all
# The verdict before the long Job name. On a narrow screen the Job and its group's size go first, then the reason: the
# evidence box says all three of the highlighted Job.
# The group's name and size: a diagnosis's tests of one node differ by nothing else ("r2-confirm-0 (2 nodes)"); kept
# longer than the Job's full name, which the evidence box states.
RESULT_COLUMNS = (Column("Certification"), Column("Category"), Column("Result"), Column("Measurements"), Column("Reason", Drop.LAST),
                  Column("Group", Drop.LAST), Column("Job", Drop.FIRST))


def _glyph(state: str) -> str:
    try:
        return NodeState(state).glyph
    except ValueError:
        return "·"


class NodeScreen(NvcreScreen):
    """Results for one node, newest certification first; `l` opens the highlighted job's log."""

    BINDINGS = [
        Binding("l", "logs", "Logs", id="node.logs"),
        Binding("s", "sentinel", "NVSentinel", id="node.sentinel", tooltip="Scroll the top pane to NVSentinel's view (arrows scroll it)"),
        Binding("escape", "app.pop_screen", "Back", id="node.back"),
    ]
    DEFAULT_CSS = """
    NodeScreen #top { layout: horizontal; height: auto; max-height: 30%; overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1;
                      border-bottom: solid $panel; }
    NodeScreen #top:focus { background-tint: $accent 8%; }
    NodeScreen #summary { width: 1fr; height: auto; padding: 0 1; }
    NodeScreen #sentinel { width: 1fr; height: auto; padding: 0 1; }
    NodeScreen #results { height: 1fr; min-height: 3; }  /* on 12 lines the node and its verdict above stay in view */
    NodeScreen #history { height: auto; max-height: 20%; padding: 0 1; border-top: solid $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    NodeScreen #evidence-box { height: 8; max-height: 20%; border-top: solid $panel; padding: 0 1; }
    NodeScreen.-narrow #top { layout: vertical; }
    NodeScreen.-narrow #summary, NodeScreen.-narrow #sentinel { width: 1fr; }
    """
    # Below this width the node's summary and NVSentinel's view share no line: side by side (40 columns each) the
    # summary's Why was cut after "ThresholdViolation: diagnose: faulty," on 80x24; stacked, it reads whole first.
    NARROW = 100

    def __init__(self, name: str) -> None:
        super().__init__()
        self.node = name
        self._history: list[dict[str, Any]] = []
        self._archive_key: object = None  # what the archive and NVSentinel panes were last drawn from
        self._told = ""  # the unreadable-history notification last shown
        self._placed = False  # the cursor was put on the first Job that marks the node (once: then it is the user's)

    def compose(self) -> ComposeResult:
        yield Header()
        self.set_class(self.app.size.width < self.NARROW, "-narrow")
        # Focusable: on 80x24 the summary fills the pane and NVSentinel's view, stacked under it, was out of sight with no
        # key to reach it (only a mouse wheel scrolled it). `s` scrolls to it; tab and the arrows scroll the pane.
        with ScrollableContainer(id="top"):
            # Why wraps 2 columns in, not under its value: on 80x24 the value's column cost the pane the Why's last line.
            yield HangingStatic(id="summary", label_indent=2)
            yield HangingStatic(id="sentinel")
        yield FittedTable(RESULT_COLUMNS, id="results")
        yield HistoryLines(id="history")
        with VerticalScroll(id="evidence-box"):
            yield Static(id="evidence")
        yield CommandBar()
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < self.NARROW, "-narrow")

    def on_mount(self) -> None:
        self.query_one("#results").focus()
        super().on_mount()

    def show(self, snapshot: Snapshot) -> None:
        node = next((n for n in snapshot.nodes if node_name(n) == self.node), None)
        summary = Text()
        if node is None and self.nodes_withheld():  # "no such node" of a node its results were just read from
            summary.append(f"{self.node}: its Node is not shown: {NODES_WITHHELD}\n", style="bold")
        elif node is None:
            summary.append(f"{self.node}: no such node\n", style="bold")
        else:
            state, detail = node_states(snapshot).get(self.node, ("untested", ""))
            glyph = NodeState(state).glyph
            # A running diagnosis's narrowing set is drawn ! too, but is no suspect (a node blamed with its whole group,
            # among the failed nodes): said in the map's, the wall's and the Result column's words.
            said = state_word(state, self.node, narrowing_set(snapshot, {self.node: (state, detail)}) if state == NodeState.SUSPECT else ())
            label(summary, "Node", f"{self.node}   {glyph} {said}" + ("   (cordoned)" if is_cordoned(node) else ""))
            if detail:  # a verdict without the raw tool output after it (the log pane has it)
                label(summary, "Why", verdict_only(detail))
            for key in SHOWN_LABELS:
                label(summary, key.split("/")[-1], node_labels(node).get(key, "-"))
        self.query_one("#summary", HangingStatic).show(summary)  # Why wraps under its value
        self._show_archive(node)
        table = self.query_one("#results", FittedTable)
        self._history = node_history(snapshot, self.node)
        rows = {}
        marking: list[str] = []  # the Jobs whose Result marks the node ✗, ! or ?, in order
        for row in self._history:
            measured = ", ".join(f"{k} {shown_measurement(k, v, row['evidence'])}" for k, v in sorted(row["measurements"].items()))
            failures = row["failures"]
            verdict = verdict_mark(row["verdict"]) if failures or _failed(row) else None
            # What this Job says of the node, as the map and the drill-down say it (a failed group's member it did not
            # blame: inconclusive); where the category diagnosed, the diagnosis's verdict on a member of a failed Job.
            result = f"{verdict[0].glyph} {verdict[1]}" if verdict else f"{NodeState(row['state']).glyph} {row['state']}"
            if (verdict[0] if verdict else NodeState(row["state"])) in MARKING:
                marking.append(row["job"])
            reason = "; ".join(f"{f['reason']}" for f in failures) + (" (Job failed; the diagnosis cleared the node)"
                                                                     if verdict and verdict[0] is NodeState.PASSED else "")
            group = f"{row['group']} ({count(row['groupSize'], 'node')})" if row["group"] else count(row["groupSize"], "node")
            rows[row["job"]] = (row["certification"], row["category"], result, measured, reason, group, row["job"])
        table.set_rows(rows)  # in place; the cursor stays on the same job, not on the same row
        if table.row_count and not self._placed:
            # Opened on a failed node, the cursor sat on its first Job, one it passed (a diagnosis's screening test
            # before the rounds that failed it), the evidence box saying `✓ met` under `✗ failed`: it starts on the
            # first Job that marks the node, the evidence of its Why
            self._placed = True
            if marking:
                table.move_cursor(row=table.get_row_index(marking[0]), animate=False)
        if table.row_count:
            self._show_evidence(table.cursor_row)
        else:  # an empty table and an empty box said nothing of why
            self.query_one("#evidence", Static).update(Text(printable(f"no Job has run on {self.node} in the certifications shown", newlines=False)))

    # ----- archive and NVSentinel ------------------------------------------------------------------------

    def _show_archive(self, node: dict[str, Any] | None) -> None:
        session = self.nvcre.session
        query = session.history if session is not None else None
        requests_cache = session.validation_requests if session is not None else None
        baseline = baseline_of(node) if node is not None else {}
        archived = query.change_key() if query is not None else None
        key = (archived, meta_of(node or {}).get("resourceVersion"), requests_cache.version if requests_cache is not None else None)
        if key == self._archive_key and archived is not None:
            return  # nothing archived and nothing about the node changed: skip the database reads
        self._archive_key = key
        side = Text()
        names = dict(FIELDS)
        label(side, "Software", ", ".join(f"{names[k]} {baseline[k]}" for k, _ in FIELDS if k in baseline and k != "gpuProduct") or "-")
        history: list[dict[str, Any]] = []
        trend: dict[str, list[float]] = {}
        last_shown: dict[str, str] = {}
        unreadable = ""
        if query is None:
            label(side, "Baseline", "no history archive in this session")
        else:
            try:
                history = query.node(self.node)
                stale = query.staleness(self.node, baseline or None, history)
                # the CLI's read path (`nvcre history node`): one series per group size, each last value on its side of
                # the threshold that judged it
                trend, last_shown = query.trend(self.node, history), query.trend_last_shown(self.node, history)
            except Exception as error:  # noqa: BLE001 - an unreadable (or damaged) archive is said, never a traceback
                unreadable = printable(f"history unreadable: {error}", newlines=False)
                label(side, "Baseline", unreadable)
                if unreadable != self._told:  # a notification once, not on every redraw
                    self._told = unreadable
                    self.notify(unreadable, severity="error", title="history", markup=False)
            else:
                label(side, "Baseline", (f"{STALE_GLYPH} STALE: " if stale.stale else "") + stale.detail)
        requests = requests_cache.list(VALIDATION_REQUEST) if requests_cache is not None else []
        if node is not None:
            view = sentinel_view(node, requests)
            side.append("NVSentinel" + ("" if requests_cache is not None else " (no ValidationRequest CRD)") + f": {view.mark or '·'} {view.state or 'nothing reported'}\n", style="bold")
            for line in view.lines():
                side.append(f"  {shown(line)}\n")
        self.query_one("#sentinel", HangingStatic).show(side)
        self.query_one("#history", HistoryLines).update(Text("History: unreadable (see Baseline)") if unreadable else (history, trend, last_shown))

    # ----- live results ----------------------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_evidence(event.cursor_row)

    def _show_evidence(self, index: int) -> None:
        """The highlighted Job's failures and evidence, then the Job itself (a narrow table leaves out its name and group)."""
        text = Text()
        if 0 <= index < len(self._history):
            row = self._history[index]
            verdict = verdict_mark(row["verdict"]) if row["failures"] or _failed(row) else None
            cleared = row.get("clearance") if verdict is not None else None
            if verdict is not None:
                # a node the diagnosis cleared: what explained this Job's failure and the passes that cleared it, first
                # (the box is a few lines high); every test of its record after the Job's own lines
                this = cleared.of_test(str(row["group"])) if cleared is not None else None
                said = verdict_said(verdict, "Job") + (f": {this.said}" if this is not None else "")
                said += f"; {passes_said(cleared, row['evidence'])}" if cleared is not None else ""
                text.append(shown(f"Diagnosis: {said}") + "\n", style="bold")
            for failure in row["failures"]:
                text.append(shown(f"{failure['reason']}: {failure.get('message', '')}") + "\n", style="bold")
                evidence_text(text, failure.get("evidence"))
            if not row["failures"]:
                evidence_text(text, row["evidence"])
            text = text or Text("no failures for this node in this job\n")
            text.append(shown(f"Job {row['job']} ({count(row['groupSize'], 'node')}): l opens its log"))
            if cleared is not None:
                text.append("\n")
                clearance_text(text, cleared, row["evidence"])
        self.query_one("#evidence", Static).update(text or Text("no failures for this node in this job"))

    def action_sentinel(self) -> None:
        """The top pane focused and scrolled to NVSentinel's line (under the node's software and baseline)."""
        top, side = self.query_one("#top", ScrollableContainer), self.query_one("#sentinel", HangingStatic)
        top.focus()
        content = side.content
        lines = hanging(content.text, side.content_size.width).plain.splitlines() if isinstance(content, Hanging) else []
        line = next((index for index, text in enumerate(lines) if text.startswith("NVSentinel")), 0)
        top.scroll_to(y=side.virtual_region.y + side.styles.padding.top + line, animate=False)

    def action_logs(self) -> None:
        from nvcre_tui.screens.logs import LogsScreen

        table = self.query_one("#results", DataTable)
        if 0 <= table.cursor_row < len(self._history):
            self.app.push_screen(LogsScreen(str(self._history[table.cursor_row]["job"])))
        else:  # `l` did nothing, unsaid
            self.notify(printable(f"no Job has run on {self.node}: no log to open", newlines=False), markup=False)


def timeline_rows(history: list[dict[str, Any]], trend: Mapping[str, list[float]], last_shown: Mapping[str, str]) -> list[tuple[str, str, list[str]]]:
    """The History pane's lines as (lead, separator, cells): the title with the bus bandwidth trend (HistoryQuery.trend: a
    series per category and group size, as `nvcre history node` prints it, each with its last value: trend_last_shown),
    then the archived certifications, newest first, each category a cell."""
    title = f"History ({len(history)} archived certification{'s' if len(history) != 1 else ''})"
    if not history:
        return [(f"{title}: none yet", "", [])]
    series = [f"{name.split('/')[-1]} busBW {sparkline(values, 16)} {with_unit(BUS_BANDWIDTH, last_shown[name])}" for name, values in trend.items()]
    rows = [(title + ("   " if series else ""), "   ", series)]
    # Names aligned to the longest shown, not to 28 columns: on 80 a 9-character name left 19 blank ones, and the
    # line's ellipsis took the category cells that say what failed and by how much
    width = max(len(str(entry["certification"])) for entry in history[-HISTORY_ROWS:])
    # The worst verdict alone (history.queries.verdicts_of): the cells after it say each category's. Aligned to the
    # longest shown too: padded to 12, "faulty" took the room of the value the first cell measured on 80 columns.
    worsts = [str((entry.get("verdicts") or [{}])[0].get("verdict") or entry.get("resultSaid") or entry["result"]) for entry in history[-HISTORY_ROWS:]]
    said = max(len(shown(worst)) for worst in worsts)
    for entry, worst in zip(reversed(history[-HISTORY_ROWS:]), reversed(worsts), strict=True):
        # A diagnosis's verdict beside its glyph (`✗ intermittent`), as `nvcre history node` and the report say it
        cells = [shown(f"{c['category'].split('/')[-1]} {_glyph(c['state'])}" + (f" {state_said(c)}" if state_said(c) != c["state"] else "")
                       + (f" {with_unit(BUS_BANDWIDTH, shown_value(c, BUS_BANDWIDTH, c['busBW']))}" if c["busBW"] is not None else "")
                       + (f" ({c['reason']})" if c["reason"] and c["state"] not in ("passed",) else "")) for c in entry["categories"]]
        # UTC, said (Z) as the CLI and the reports say it: a bare "00:27" read as local time
        when = f"{entry['completionTime'][:16].replace('T', ' ')}Z" if entry["completionTime"] else "-"
        rows.append((f"{when}  {shown(str(entry['certification'])):<{width}}  {_glyph(entry['result'])} {shown(worst):<{said}} ", "  ", cells))
    return rows


_VALUE_UNIT = re.compile(r"(\d) (?=\S*/s\b|GB\b|s\b)")  # "160.20 GB/s": one word to a cut (fitted_list.NO_BREAK)


def fitted_row(lead: str, separator: str, cells: list[str], width: int | None) -> str:
    """`lead` and as many whole `cells` as `width` holds, those left out counted (`+2 more`); a first cell too long for
    the line alone is cut at a word with "…", a value never parted from its unit (the line's ellipsis read
    `nccl-all-gather ✗ faulty 160.20…`). Everything where `width` is None."""
    whole = lead + separator.join(cells)
    if width is None or cell_len(whole) <= width:
        return whole
    kept: list[str] = []
    for index, cell in enumerate(cells):
        rest = len(cells) - index - 1
        if cell_len(lead + separator.join([*kept, cell]) + (f"{separator}+{rest} more" if rest else "")) > width:
            break
        kept.append(cell)
    left = len(cells) - len(kept)
    if kept:
        return lead + separator.join(kept) + f"{separator}+{left} more"
    first = _VALUE_UNIT.sub(lambda match: match.group(1) + NO_BREAK, cells[0])
    more = f"{separator}+{left - 1} more" if left > 1 else ""
    counted = (cut_at_word(first, width - cell_len(lead) - cell_len(more), 1) or [ELLIPSIS])[0]
    # The cells after it counted where that costs none of its words; else its "…" says there is more
    room = width - cell_len(lead)
    alone = counted if not more else f"{first} {ELLIPSIS}" if cell_len(first) + 2 <= room else (cut_at_word(first, room, 1) or [ELLIPSIS])[0]
    if alone == ELLIPSIS:  # not even its first word: every cell counted
        return lead + f"+{len(cells)} more"
    return lead + (counted + more if len(counted.split()) >= len(alone.split()) else alone).replace(NO_BREAK, " ")


def timeline_text(history: list[dict[str, Any]], trend: Mapping[str, list[float]], last_shown: Mapping[str, str], width: int | None = None) -> Text:
    """The History pane: `timeline_rows`, each fitted to `width` (`fitted_row`: whole where None); the title bold."""
    text = Text(no_wrap=True, overflow="ellipsis")  # one line per certification; the CLI prints them whole
    for index, (lead, separator, cells) in enumerate(timeline_rows(history, trend, last_shown)):
        line = fitted_row(lead, separator, cells, width)
        if index == 0:
            title = lead.split(":")[0].rstrip()
            text.append(title, style="bold")
            line = line[len(title):]
        text.append(line + ("\n" if index or history else ""))
    return text


class HistoryLines(Widget):
    """The History pane: `timeline_text` fitted to its width at every render (a resize included)."""

    DEFAULT_CSS = "HistoryLines { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(id=id)
        self._said: Text | tuple[list[dict[str, Any]], Mapping[str, list[float]], Mapping[str, str]] = Text()

    def update(self, said: Text | tuple[list[dict[str, Any]], Mapping[str, list[float]], Mapping[str, str]]) -> None:
        """A line said as is, or (history, trend, last_shown) for `timeline_text`."""
        self._said = said
        self.refresh(layout=True)

    def render(self) -> Text:
        if isinstance(self._said, Text):
            return self._said
        return timeline_text(*self._said, width=self.content_size.width or None)


def _failed(row: Mapping[str, Any]) -> bool:
    """Whether a node_history row's Job failed (a diagnosis's verdict then speaks for the member, blamed or not)."""
    return row["phase"] == FAILED or bool(row["validationFailed"])
