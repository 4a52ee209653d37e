"""Dashboard: certifications with status, categories passed, failed nodes, runtime, age; the fleet
by node state; `/` filters the table, `:` opens the command bar, enter drills into a certification,
x deletes it (after a question whose default answer keeps it).

Under the table, the failures pane lists the infrastructure faults the highlighted certification's diagnoses
named (a degraded link between cliques, a clique's uplink) and every node it blamed: `f` (or tab) moves there,
enter opens a row's evidence, l its log, so each fault is one key from the next."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Input, Static

from nvcre_tui.badges import cut_middle
from nvcre_tui.engine.api.nodes import NO_NODES, NODES_WITHHELD
from nvcre_tui.engine.api.vocabulary import PHASE_GLYPHS, RESULT_FAILED, RESULT_GLYPHS, RESULT_INCOMPLETE, RESULT_PASSED, RESULT_RUNNING
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.certifications import certification_rows, deleting_result, deletion_said
from nvcre_tui.engine.views.eta import UNKNOWN
from nvcre_tui.engine.views.failures import OUT_OF_REACH, UNBLAMED, failure_rows, fault_rows, reach_rows, unblamed_failures
from nvcre_tui.engine.views.nodes import node_states, states_scope
from nvcre_tui.engine.session import store_now
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import RUNNING_AGAIN, TESTED_NOW, UNDER_SUSPICION, UNDER_TEST, diagnosis_suspects, fleet_summary, suspicion_said
from nvcre_tui.engine.views.waiting import categories_held, pods_waiting, waiting_to_start
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.failures_pane import FailuresPane
from nvcre_tui.widgets.fitted_footer import FittedFooter
from nvcre_tui.widgets.fitted_list import cut_at_word
from nvcre_tui.widgets.item_line import ItemLine
from nvcre_tui.widgets.keyed_rows import literal, selected_key, update_rows
from nvcre_tui.widgets.node_state import NodeState

RESULT_STYLE = {RESULT_PASSED: "verdict-passed", RESULT_FAILED: "verdict-failed", RESULT_RUNNING: "verdict-running",  # theme variables
                RESULT_INCOMPLETE: "verdict-inconclusive"}


MIN_NAME = 16  # the fewest cells a certification's name keeps in the table, cut in its middle


# Short: Running whole on 80 columns. "Blamed" as the failures pane's title counts them: failed and suspect nodes (the
# certification's failedNodes); "✗ nodes" beside the fleet line's "✗ 2 failed" read 21 as convicted.
COLUMNS = ("Certification", "Result", "Passed", "Blamed", "Runtime", "Left", "Age", "Running")  # Left: views.eta


FIRST_NAME_CUT = 4  # the fewest cells of the first name shown cut ("nccl…"): fewer say nothing, "+N" alone then


def fit_names(names: Sequence[str], width: int) -> str:
    """As many of `names` as fit whole in `width` cells, in order, then "+N" for the rest ("nccl-all-reduce, +2"): the
    table cut the last one mid-name ("nccl-all-reduce, ncc") and hid those after it unsaid. When no name fits whole,
    the first one cut with "…" ("· nccl-all-red…"): "+1" alone, on 80 columns beside a long certification name, hid
    the one category that ran; "+N" alone only where not even FIRST_NAME_CUT cells of it fit."""
    for kept in range(len(names), 0, -1):
        rest = len(names) - kept
        text = ", ".join([*names[:kept], f"+{rest}"] if rest else names[:kept])
        if cell_len(text) <= width:
            return text
    if not names:
        return ""
    tail = f", +{len(names) - 1}" if len(names) > 1 else ""
    room = width - cell_len(tail) - 1  # the cells left for the first name, "…" after it
    if room < FIRST_NAME_CUT:
        return f"+{len(names)}"
    cut, used = "", 0
    for character in names[0]:
        used += cell_len(character)
        if used > room:
            break
        cut += character
    return f"{cut.rstrip()}…{tail}"


def first_whole(names: Sequence[str]) -> int:
    """The cells `names` need to show the first of them whole and count the rest ("· nccl-all-reduce, +2"): what a
    long certification name leaves the Running column, as far as MIN_NAME allows."""
    return cell_len(names[0]) + cell_len(f", +{len(names) - 1}") if len(names) > 1 else sum(map(cell_len, names))


WAITING_PADDING = 4  # #waiting's padding (0 1) and the glyph before each line ("· ")


def held_said(held: Sequence[tuple[str, str]], width: int) -> list[str]:
    """The lines under the table for categories waiting for another Workflow's nodes (categories_held), those waiting
    alike on one line, named while it fits `width` cells, the rest counted: "communication/nccl-alltoall +4 more: waits
    for an earlier category on the same nodes". One line each, a weekly certification's five categories waiting for
    its first took the 3 rows there, cut mid-sentence ("waits for an earlier category on the"), the last two unsaid."""
    grouped: dict[str, list[str]] = {}
    for category, why in held:
        grouped.setdefault(why, []).append(category)
    lines = []
    for why, categories in grouped.items():
        for kept in range(len(categories), 0, -1):
            rest = len(categories) - kept
            line = ", ".join(categories[:kept]) + (f" +{rest} more" if rest else "") + f": {why}"
            if cell_len(line) <= width:
                break
        lines.append(line)
    return lines


def running_again(state: NodeState, counts: dict[str, int]) -> str:
    """What follows the running count while tests run on nodes a failure marks (drawn ✗, ! or ?): " (+19 more with a
    failure on record)"."""
    if state is NodeState.RUNNING and counts.get(RUNNING_AGAIN):
        return f" (+{counts[RUNNING_AGAIN]} {RUNNING_AGAIN})"
    return ""


def suspicion_item(counts: dict[str, int]) -> str | None:
    """The fleet line's count of a running diagnosis's narrowing set, after the suspect one, in the wall's words:
    "! 2 under suspicion (+2 tested now)" (those drawn suspect, then those its round tests, drawn running), or None
    with none. It said "! 2 suspect (+2 under test)", where the wall's SUSPECT is a node blamed with its whole group."""
    drawn, tested = counts.get(UNDER_SUSPICION, 0), counts.get(UNDER_TEST, 0)
    if not drawn and not tested:
        return None
    return f"{NodeState.SUSPECT.glyph} {drawn} {UNDER_SUSPICION}" + (f" (+{tested} {TESTED_NOW})" if tested else "")


def failures_title(name: str, said: Sequence[str], suspects: bool, rows: bool, width: int) -> str:
    """The failures pane's title: what it lists (`said`, the suspects under diagnosis first), then where the suspects
    are shown and the pane's keys, each only where it fits whole (0 width: not laid out yet, all of it). A title too
    long even bare ends at a word with "…": it was cut mid-word at the screen's edge ("(the drill-down"), and on 80
    columns a certification with failures lost its suspect count, said last, altogether."""
    bare = f"Failures · {name}: {'; '.join(said)}"
    where = " (the drill-down shows them)" if suspects else ""
    keys = " · f then enter evidence, l log" if rows else ""
    for title in (bare + where + keys, bare + keys, bare + where, bare):
        if not width or cell_len(title) <= width:
            return title
    return next(iter(cut_at_word(bare, width, 1)), "")


class DashboardScreen(NvcreScreen):
    """Certifications and the fleet at a glance."""

    BINDINGS = [
        Binding("enter", "open", "Drill down", id="dashboard.open"),
        Binding("c", "compose", "Compose", id="dashboard.compose"),
        # x and w out of the footer where it has no room (FittedFooter), listed by ?: on 80 columns they cut ? and q off.
        Binding("x", "delete_certification", "Delete", show=False, id="dashboard.delete",
                tooltip="Delete the highlighted certification (asks first): its runs stop; Workflows, Jobs and runs go with it"),
        Binding("m", "map", "Rack map", id="dashboard.map"),
        Binding("w", "wall", "Wall", show=False, id="dashboard.wall"),
        Binding("f", "failures", "Failures", id="dashboard.failures", tooltip="The failures pane: enter evidence, l log; f again: back to the table"),
        Binding("slash", "filter", "Filter", id="dashboard.filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="dashboard.clear"),
    ]
    DEFAULT_CSS = """
    DashboardScreen #fleet { height: auto; padding: 0 1; border-bottom: solid $panel; }
    DashboardScreen #certs { height: 1fr; min-height: 3; }  /* a row beside its header on 12 lines: the failures pane scrolls below */
    DashboardScreen #filter { dock: top; display: none; height: 1; border: none; padding: 0 1; }
    DashboardScreen #filter.-open { display: block; }
    DashboardScreen #empty { padding: 1 2; color: $text-muted; }
    DashboardScreen #waiting { display: none; height: auto; max-height: 4; padding: 0 1; border-top: solid $panel; }
    DashboardScreen #failures-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    DashboardScreen #failures { height: auto; max-height: 12; }
    """
    HELP_WIDGETS = (FailuresPane,)

    def __init__(self) -> None:
        super().__init__()
        self._waits_apart: dict[str, tuple[str, str]] = {}  # rows whose Runtime shows the run alone: (the run, the wait)
        self._left_apart: dict[str, str] = {}  # what running ones have left, while the Left column has no room

    def compose(self) -> ComposeResult:
        yield Header()
        yield ItemLine(id="fleet")
        yield Input(placeholder="filter certifications (regex)", id="filter")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="certs")
        namespace = self.nvcre.session.namespace if self.nvcre.session is not None else "default"
        self._none_yet = printable(f"No certifications in namespace {namespace} yet: press c to compose one (or run `nvcre certification "
                                   "run --cert-file F`); another namespace's: nvcre -n NS.")
        yield Static(self._none_yet, id="empty", markup=False)
        yield Static(id="waiting", markup=False)  # the highlighted certification's categories waiting for pods, and why
        yield Static(id="failures-title", markup=False)
        yield FailuresPane(id="failures")
        yield CommandBar()
        # 80 columns hold the keys a new user needs (? and q were cut off); x and w where there is room.
        yield FittedFooter(if_room=("dashboard.delete", "dashboard.wall"))

    def on_mount(self) -> None:
        table = self.query_one("#certs", DataTable)
        table.add_columns(*COLUMNS)
        table.focus()
        super().on_mount()

    def show(self, snapshot: Snapshot) -> None:
        states = node_states(snapshot)
        counts = fleet_summary(snapshot, states)
        # Merged: said, or an old failure still ✗ reads as the latest certification's.
        scope = f" {states_scope(snapshot)}" if len(snapshot.certifications) > 1 else ""
        if self.nodes_withheld():  # "0 nodes, 0 failed" beside a certification that blamed two read as a fact
            warning = self.app.theme_variables.get("text-warning", "")  # a sentence, wrapped at its words on 80 columns
            self.query_one("#fleet", ItemLine).set_items(
                [Text.assemble(("Fleet ", "bold"), "not shown:"), *(Text(word, style=warning) for word in NODES_WITHHELD.split())], gap=" ")
        elif not snapshot.nodes and self.on_a_cluster():  # "Fleet 0 nodes", then every count at 0, said nothing of why
            warning = self.app.theme_variables.get("text-warning", "")
            self.query_one("#fleet", ItemLine).set_items(
                [Text.assemble(("Fleet ", "bold"), "0 nodes:"), *(Text(word, style=warning) for word in NO_NODES.split())], gap=" ")
        else:
            fleet = [Text.assemble(("Fleet ", "bold"), f"{counts['nodes']} nodes", (scope, "bold"))]
            for state in NodeState:
                style = self.app.theme_variables.get(state.variable, "")
                fleet.append(Text(f"{state.glyph} {counts.get(state.value, 0)} {state.value}" + running_again(state, counts), style=style))
                if state is NodeState.SUSPECT and (suspicion := suspicion_item(counts)) is not None:
                    fleet.append(Text(suspicion, style=style))
            self.query_one("#fleet", ItemLine).set_items([*fleet, Text(f"cordoned {counts['cordoned']}")])  # wrapped between items only
        pattern = self.query_one("#filter", Input).value
        literally = ""
        try:
            wanted = re.compile(pattern) if pattern else None
        except re.error:  # matched as written, as the map's and the log's filters do: it was dropped, every row shown
            wanted, literally = re.compile(re.escape(pattern)), " (not a regex: matched as written)"
        rows = {}
        ran: dict[str, tuple[str, str]] = {}  # (the run alone, the wait) of the rows whose Runtime counts a wait
        session = self.nvcre.session
        for row in certification_rows(snapshot, self.nvcre.now(), stamped_now=store_now(session) if session is not None else None):
            if wanted and not wanted.search(row.name):
                continue
            glyph, word, variable = RESULT_GLYPHS.get(row.result, "·"), row.result, RESULT_STYLE.get(row.result, "")
            if (deleting := deleting_result(snapshot, row.name)) is not None:  # held: nothing advances it (said under the table)
                glyph, word, variable = "·", deleting, "text-warning"
            elif row.result == RESULT_RUNNING and waiting_to_start(snapshot, row.name) is not None:  # as the wall's title: nothing runs yet
                glyph, word, variable = NodeState.WAITING.glyph, NodeState.WAITING.value.upper(), NodeState.WAITING.variable
            result = Text(f"{glyph} {word}", style=self.app.theme_variables.get(variable, ""))
            # CertRow.running joins the variants with ", " (no variant has a comma): split to fit them whole.
            rows[row.name] = (row.name, result, row.passed, str(row.failed_nodes) if row.failed_nodes else "-", row.runtime, row.left,
                              row.age, row.running.split(", ") if row.running else [])
            if row.waited:
                ran[row.name] = (row.ran, row.waited)
        self._show_rows(rows, ran)
        empty = self.query_one("#empty", Static)
        # An empty table says why: none yet, or none the filter matches (it looked like none at all).
        if snapshot.certifications and not rows:
            empty.update(printable(f"No certification of {len(snapshot.certifications)} matches the filter {pattern!r}{literally}.", newlines=False))
        elif not snapshot.certifications:
            empty.update(self._none_yet)
        empty.display = not rows
        self._show_failures(snapshot)

    def _show_rows(self, rows: dict[str, tuple[Any, ...]], ran: dict[str, tuple[str, str]] | None = None) -> None:
        """The table's rows, the Running column fitted to the room the other columns leave on the screen's width, and
        names too long to leave Runtime, Age and Running in sight cut in their middle (`cut_middle`). Where that leaves
        Running too little room still, Runtime shows the run alone and the line under the table says the wait of the
        highlighted row (`ran`: the run alone and the wait, by row)."""
        table = self.query_one("#certs", DataTable)
        padding = 2 * table.cell_padding
        columns = table.ordered_columns
        width = table.scrollable_content_region.width if table.size.width else self.app.size.width  # not laid out yet: the screen's
        # A long name (a Kubernetes name runs to 253 characters) took the row: on 80 columns Runtime, Age and Running
        # were off the right edge. It keeps what the other columns and the first running category's whole name leave
        # (first_whole), at least MIN_NAME cells: beside "diagnose-and-train" Running read "· nccl-all-red…".
        kept = max([cell_len(COLUMNS[-1]), *(first_whole(cells[-1]) for cells in rows.values())])
        shown: tuple[str, ...] = COLUMNS

        def widths() -> tuple[int, int]:
            """(the name's cells, the Running column's room)."""
            natural = [max([cell_len(shown[index]), *(literal(cells[index]).cell_len for cells in rows.values())]) for index in range(len(shown) - 1)]
            named = min(natural[0], max(MIN_NAME, width - sum(natural[1:]) - padding * len(shown) - kept))
            others = named + sum(natural[1:]) + padding * (len(shown) - 1)
            return named, width - others - padding

        named, room = widths()
        # A certification that waited for nodes took Runtime 22 cells ("2m16s (+27m44s waited)"): on 80 columns beside a
        # name of 16, Running read "nc" (its header "Ru"). The wait goes first; the line under the table says it.
        self._waits_apart = {name: said for name, said in (ran or {}).items() if name in rows} if room < kept else {}
        if self._waits_apart:
            rows = {name: (*cells[:4], self._waits_apart[name][0], *cells[5:]) if name in self._waits_apart else cells
                    for name, cells in rows.items()}
            named, room = widths()
        # Then the Left column (views.eta), which took Running's first name on 80 columns: the line under the table says
        # the highlighted certification's time left instead.
        left = COLUMNS.index("Left")
        # ("unknown" goes unsaid there: the lines say why it waits, the wall says it)
        self._left_apart = {name: str(cells[left]) for name, cells in rows.items() if cells[left] not in ("-", UNKNOWN)} if room < kept else {}
        if room < kept:
            rows = {name: (*cells[:left], *cells[left + 1:]) for name, cells in rows.items()}
            shown = (*COLUMNS[:left], *COLUMNS[left + 1:])
            named, room = widths()
        room = max(room, cell_len(shown[-1]))
        fitted = {name: (cut_middle(cells[0], named), *cells[1:-1], fit_names(cells[-1], room)) for name, cells in rows.items()}
        # A column only ever widens: made again after a wider screen or longer names, so they shrink with it (and with
        # the Left column shown or not).
        if columns[-1].content_width > room or columns[0].content_width > named or len(columns) != len(shown):
            selected = selected_key(table)
            table.clear(columns=True)
            table.add_columns(*shown)
            update_rows(table, fitted, selected=selected)
        else:
            update_rows(table, fitted)

    def on_resize(self, event: events.Resize) -> None:
        if self._visible():
            self.refresh_now()  # the Running column fitted again to the new width

    def _show_waiting(self, snapshot: Snapshot, name: str | None) -> None:
        """Under the table, why the highlighted certification's categories in progress wait for their pods (the Job's
        reason, as the engine wrote it, and for how long): "running" alone said nothing of a run no pod was made for.
        One being deleted that a finalizer holds says that instead: nothing advances it."""
        view = snapshot.views.get(name) if name else None
        found = [waiting for category in (view.categories if view is not None else []) if (waiting := pods_waiting(snapshot, category))]
        said = [f"{w.category}: {w.said(self.nvcre.now())}" for w in found]
        said += held_said(categories_held(snapshot, name) if name else [], self.app.size.width - WAITING_PADDING)  # no Workflow yet
        held = deletion_said(snapshot, name) if name else None
        said = [held] if held is not None else said  # its pods and categories wait for nothing now
        if name in self._waits_apart:  # its Runtime shows the run alone on this width (_show_rows)
            said.insert(0, f"{name} waited {self._waits_apart[name][1]} for nodes before it ran (not in its Runtime)")
        if name in self._left_apart:  # no Left column on this width (_show_rows)
            said.insert(0, f"{name}: time left {self._left_apart[name]}")
        line = self.query_one("#waiting", Static)
        line.update("\n".join(printable(f"{PHASE_GLYPHS['Pending']} {text}", newlines=False) for text in said))
        line.display = bool(said)

    def _show_failures(self, snapshot: Snapshot) -> None:
        """The failures pane (and the line about pods waiting above it) follows the highlighted certification."""
        name = self._selected()
        self._show_waiting(snapshot, name)
        faults = fault_rows(snapshot, name) if name else []  # first: few, and no node's row says them
        # A threshold no test came near, before the nodes it failed (32 ThresholdViolation rows read as a fleet-wide failure)
        reach = reach_rows(snapshot, name) if name else []
        blamed = failure_rows(snapshot, name) if name else []
        unblamed = unblamed_failures(snapshot, name) if name else []  # failed groups (categories) that blamed nobody
        rows = faults + reach + blamed + unblamed
        title = self.query_one("#failures-title", Static)
        if name is None:
            title.update("Failures")
        else:
            found = [text for text, n in ((count(len(faults), "infrastructure fault"), faults), (f"{count(len(reach), 'threshold')} out of reach", reach),
                                          (f"{count(len(blamed), 'node')} blamed", blamed),
                                          (f"{len(unblamed)} with no node blamed", unblamed)) if n]
            # A diagnosis's suspects are no failures yet (the map and the drill-down show them): said, or "none"
            # read as a clean run while the wall listed them. First: after the failures, 80 columns cut them off.
            # Less the nodes blamed below: convicted by an earlier category and suspected again by a later one's
            # diagnosis, they were counted twice ("32 nodes under suspicion; 2 nodes blamed" of 32 nodes, the fleet line
            # and the wall saying 30 under suspicion).
            suspects = diagnosis_suspects(snapshot, name) - {row.node for row in blamed}
            weighed = [suspicion_said(len(suspects))] if suspects else []
            said = [*weighed, ", ".join(found)] if found else weighed or ["none"]
            title.update(failures_title(name, said, bool(suspects), bool(rows), title.content_size.width))
        pane = self.query_one(FailuresPane)
        pane.show_rows(rows)
        pane.display = bool(rows)

    @on(DataTable.RowHighlighted, "#certs")
    def _cert_highlighted(self) -> None:
        if self.nvcre.snapshot is not None:
            self._show_failures(self.nvcre.snapshot)

    def action_failures(self) -> None:
        from nvcre_tui.screens.drilldown import DrilldownScreen

        pane = self.query_one(FailuresPane)
        name = self._selected()
        if pane.has_focus:  # f again: back to the certifications (it did nothing there, offered in the footer all the same)
            self.query_one("#certs", DataTable).focus()
        elif pane.failures:
            pane.focus()
        elif name and self.nvcre.snapshot is not None and diagnosis_suspects(self.nvcre.snapshot, name):
            # No failure yet, but suspects under diagnosis (the pane's title says so): the drill-down opens on them.
            self.app.push_screen(DrilldownScreen(name))
        elif name is None:  # it said "no failures in the highlighted certification" with none in the table
            self.notify("no certification in the table: no failures to show (c composes one)")
        else:
            self.notify("no failures in the highlighted certification")

    @on(FailuresPane.EvidenceRequested)
    def _open_evidence(self, event: FailuresPane.EvidenceRequested) -> None:
        from nvcre_tui.screens.drilldown import DrilldownScreen

        name = self._selected()
        if name:
            self.app.push_screen(DrilldownScreen(name, focus=(event.row.workflow, event.row.node)))

    @on(FailuresPane.LogRequested)
    def _open_log(self, event: FailuresPane.LogRequested) -> None:
        from nvcre_tui.screens.logs import LogsScreen

        if event.row.job is None:
            what = ("none of its tests' runs is left" if event.row.cliques else "its run is gone" if event.row.reason.startswith(UNBLAMED)
                    else "a threshold out of reach has no log of its own" if event.row.reason == OUT_OF_REACH
                    else "no run convicted it on its own")
            self.notify(f"{event.row.node}: {what}: open its evidence (enter)", markup=False)
            return
        self.app.push_screen(LogsScreen(event.row.job))

    def _selected(self) -> str | None:
        table = self.query_one("#certs", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_open(self) -> None:
        from nvcre_tui.screens.drilldown import DrilldownScreen

        name = self._selected()
        if name:
            self.app.push_screen(DrilldownScreen(name))

    @on(DataTable.RowSelected, "#certs")
    def _row_selected(self) -> None:
        self.action_open()

    def action_delete_certification(self) -> None:
        name = self._selected()
        cert = self.nvcre.snapshot.certification(name) if name and self.nvcre.snapshot else None
        if cert is None:
            self.notify("no certification selected")
            return
        self.ask_to_delete(cert)

    def action_compose(self) -> None:
        self.nvcre.run_command("compose")

    def action_map(self) -> None:
        self.nvcre.run_command("racks")

    def action_wall(self) -> None:
        self.nvcre.run_command("wall")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-open")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("-open")
        self.query_one("#certs").focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self.refresh_now()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#certs").focus()
