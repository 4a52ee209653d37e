"""Wall display: full screen, read-only, high contrast. Rotates through the certifications report.wall_subjects
names (running, the latest finished, and every failure nothing newer replaced) with big counters, the rack map and
the latest failures: the infrastructure faults its diagnoses named (their cliques marked on the map), then
its failed and suspect nodes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Digits, Static

from nvcre_tui.badges import Badge, Cut, Piece, fitted
from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.api.provenance import status_written_at
from nvcre_tui.engine.api.nodes import NODES_WITHHELD, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE, WORKLOAD_FAILED
from nvcre_tui.engine.names import natural_key
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.queries import HistoryQuery
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.report.wall_subjects import wall_subjects
from nvcre_tui.engine.session import SimSession, store_now
from nvcre_tui.engine.units import count, format_age
from nvcre_tui.engine.views.certifications import deleting_result
from nvcre_tui.engine.views.diagnosis import clique_marks, infrastructure_faults
from nvcre_tui.engine.views.eta import time_left
from nvcre_tui.engine.views.failures import OUT_OF_REACH, FailureRow, failure_rows, fault_rows, reach_rows, unblamed_failures
from nvcre_tui.engine.views.nodes import certification_nodes, node_domain, node_states, targeted_nodes
from nvcre_tui.engine.views.snapshot import Snapshot, same_objects
from nvcre_tui.engine.views.suspicion import (TESTED_NOW, UNDER_SUSPICION, blamed_and_running, state_word, suspect_legend, suspects_under_test,
                                              under_suspicion)
from nvcre_tui.engine.views.waiting import categories_held, categories_waiting_for_nodes, waiting_to_start
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.fitted_list import Entry, FittedList, wrapped
from nvcre_tui.widgets.legend import Legend
from nvcre_tui.widgets.node_state import NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap
from nvcre_tui.widgets.verdict_mark import conviction_said

ROTATE_SECONDS = 15.0
COUNTERS = (("passed", "PASSED"), ("failed", "FAILED"), ("suspect", "SUSPECT"), ("inconclusive", "INCONCLUSIVE"), ("running", "RUNNING"))
# The states too calm for a big counter, counted on the line under them: with the counters they add up to the fleet.
TALLIED = ("waiting", "untested", "excluded")
# A suspect whose test's pods are not placed yet (seconds on the simulator): one line that reads as waiting. The node's
# own line ("waiting for pods: scheduling 2 pod(s); it fails after 5m00s of this") took three lines a suspect and
# read as stuck; the node screen says it whole.
WAITS_FOR_PODS = "waits for pods"
URGENT = ("failed", "suspect")  # the states the failures list names, in this order (a suspect under test among them)


def finished_ago(cert: dict[str, Any], stamped_now: datetime) -> timedelta | None:
    """How long ago the certification finished, on the clock its Age counts on (`stamped_now`: session.store_now, as
    the dashboard and `list` count it): on an API server, since nvcre last wrote its status (status_written_at, the
    server's stamp), not since its completionTime, which the engine stamps on its own clock (a --sim-runner fleet's
    simulated time, running ahead of the server's: the wall said "finished 59m ago" beside a dashboard Age of 30m); on
    the embedded store, which stamps everything on the fleet's clock, since its completionTime. Never below zero (a
    viewer's clock may be behind the one that stamped it); None while it runs, or when no time of its end is readable."""
    if not cond.is_terminal(cert):
        return None
    try:
        ended = status_written_at(cert) or parse_time(certification_status(cert).get("completionTime"))
    except ValueError:
        return None
    return max(timedelta(0), stamped_now - ended)


# Where a failed workload's message turns into the tool's raw words: a quoted output line, a peer's address, NCCL's " : ".
_RAW = re.compile(r"'|<| : ")


def gist(message: str) -> str:
    """What a failed workload's message says before the tool's raw words: its first clause (the exit code and the rest
    follow after "; "), up to a quoted output line or a peer's address: "memory failed on GPU 5: Xid 79 (GPU has fallen
    off the bus) detected", "nccl output unreadable: no nccl-tests result rows: NCCL failed"."""
    first = message.split("; ", 1)[0]
    return _RAW.split(first, 1)[0].rstrip(" :")


def said(row: FailureRow) -> str:
    """A blamed node as the wall says it: the reason, then the measured values as the failures pane shows them (the
    engine's message carries them at 4 decimals after its own words, cut off on the wall), else the message; the
    category last. A failed workload is said by its reason, as the failures pane says it, with the diagnosis's verdict
    where one convicted it ("WorkloadFailed: intermittent, failed 4 of 5 tests"), else the gist of its message: the rest
    is the engine's raw words (a tool's output line, a peer's address, an exit code), unreadable across a room. The
    category as the failures pane says it: the others that blamed the node counted ("· communication/nccl-all-reduce +2")."""
    convicted = conviction_said(row.message)
    if row.measured != "-":  # with the verdict where a diagnosis convicted it, as the report says it ("diagnose: faulty")
        shown = f"{convicted.split(',', 1)[0]}, {row.measured}" if convicted else row.measured
    elif row.reason == WORKLOAD_FAILED:
        shown = convicted or gist(row.message)
    else:
        shown = row.message
    text = f"{row.reason}: {shown}" if shown else row.reason
    return f"{text} · {row.categories_said}" if row.category else text  # "+2": as the failures pane counts the others


def said_unblamed(row: FailureRow) -> str:
    """A failure that blamed no node as the wall says it: its reason, then what the failures pane's Measured column
    says of it ("no node blamed: MeasurementUnavailable: avgStepTimeSec unavailable (value <= 30)"), else the first
    clause of a failed group's message, cut at the tool's raw words (gist), a failed category's message whole (the
    engine's own words: "no node blamed: WorkflowValidationFailed: no eligible nodes match (...)"; of a threshold out
    of reach, the reach alone). The engine's whole message ('Threshold "avgStepTimeSec" not evaluated: no measured value, expression: ...
    (training: the only logged step is warm-up ...') ran across the pane, unreadable across a room."""
    if row.measured != "-":
        shown = row.measured
    elif row.node != row.category:  # a failed group
        shown = gist(row.message)
    elif row.reason.endswith(OUT_OF_REACH):  # the reach, not the diagnosis's list of the nodes it left inconclusive
        shown = row.message.split("; ", 1)[0]
    else:
        shown = row.message
    return f"{row.reason}: {shown}" if shown else row.reason


def out_of_reach(snapshot: Snapshot, cert_name: str) -> list[Entry]:
    """The failed categories whose threshold no test came near (reach_rows), said before their nodes, as the failures
    pane and the drill-down say it first: the wall listed 32 ✗ nodes, a fleet-wide failure to the room."""
    return [Entry(NodeState.FAILED.glyph, row.node, row.message) for row in reach_rows(snapshot, cert_name)]


def urgent_nodes(states: dict[str, tuple[str, str]], under_test: set[str], blamed: Mapping[str, FailureRow] | None = None) -> list[Entry]:
    """The failed nodes, then the suspects (with those a diagnosis tests now, drawn running), each by name; a node
    in `blamed` (failure_rows by node) said as the failures pane says it, a suspect under test whose pods wait as
    WAITS_FOR_PODS, any other by its state's detail."""
    blamed = blamed or {}
    shown = {name: ("suspect" if name in under_test else state,
                    said(blamed[name]) if name in blamed else WAITS_FOR_PODS if name in under_test and state == NodeState.WAITING.value else detail)
             for name, (state, detail) in states.items()}
    urgent = sorted(((URGENT.index(state), name, detail) for name, (state, detail) in shown.items() if state in URGENT),
                    key=lambda entry: (entry[0], natural_key(entry[1])))  # gpu-node-100 after gpu-node-99, as the map
    return [Entry(NodeState(URGENT[rank]).glyph, name, detail) for rank, name, detail in urgent]


TALLY_LINES, TALLY_PADDING = 2, 2  # #tally's max-height, and its padding left and right (the CSS below)
TITLE_PADDING = 2  # #title's padding left and right (the CSS below)
TITLE_NAME_LEAST = 12  # a certification's name in the title line, cut in its middle (its end tells a burn-in's runs apart)
TITLE_RESULT_LEAST = 9  # its result in the title line, cut at its end: "  RUNNING", "  WAITING…" (for what: the line below)


def waits_said(before: str, grouped: Mapping[str, list[str]], width: int, lines: int = TALLY_LINES) -> str:
    """Why categories wait (`grouped`: their categories by reason), said after the tally's counts (`before`): each reason
    with its categories named while the whole fits `lines` lines of `width` columns, else the first named and the
    others counted ("communication/nccl-loopback +4 more wait for ..."), else counted alone ("5 categories wait for
    ..."), else counted without their reasons ("1 category waits": the dashboard and the drill-down say for what).
    Named whole, eight categories' names ran past the tally's two lines on 80 and 120 columns and the cut took what
    they wait for: "...; communication/nccl-loopback, communication/nccl-loopback-nvswitch,"; beside a diagnosis's note
    one category's reason did the same: "...; communication/nccl-all-gather waits"."""
    def said(name: Callable[[list[str]], str]) -> str:
        return "".join(f"; {name(categories)} {reason if len(categories) == 1 else re.sub(r'^waits', 'wait', reason)}"
                       for reason, categories in grouped.items())

    namings: tuple[Callable[[list[str]], str], ...] = (
        ", ".join,
        lambda categories: categories[0] + (f" +{len(categories) - 1} more" if len(categories) > 1 else ""),
        lambda categories: categories[0] if len(categories) == 1 else f"{len(categories)} categories",
    )
    for name in namings:
        text = said(name)
        if width <= 0 or len(wrapped(before + text, width)) <= lines:
            return text
    waiting = sum(len(categories) for categories in grouped.values())
    return "" if not waiting else "; 1 category waits" if waiting == 1 else f"; {waiting} categories wait"


# What the title says when the store holds no certification: whether there never was one, or what was last there.
# "no certification yet" after every certification had been deleted told the room the fleet was never tested. The wall
# writes nothing: it remembers what it showed, and reads the history's last archived certification.


def last_archived(history: HistoryQuery | None) -> Mapping[str, Any] | None:
    """The history's newest archived certification (of the session's own store), with when it was archived
    (`archivedAt`), None when there is none or the history cannot be read (the node screen says why)."""
    if history is None:
        return None
    try:
        archived = history.certifications(last=1)
        return {**archived[-1], "archivedAt": history.archived_at(archived[-1]["id"])} if archived else None
    except InputError:
        return None


class Departed:
    """How many certifications left the store while the wall watched, counted as they leave (by uid: one deleted and
    made again under its name is another). The set of every name the wall had seen grew by one per certification for
    as long as it ran: weeks, in an operations room."""

    def __init__(self) -> None:
        self._present: frozenset[str] = frozenset()
        self.count = 0

    def see(self, certifications: Iterable[Mapping[str, Any]]) -> None:
        """The store's certifications now."""
        now = frozenset(str(c["metadata"].get("uid") or c["metadata"]["name"]) for c in certifications)
        self.count += len(self._present - now)
        self._present = now


def none_left(shown: tuple[str, str] | None, gone: int, archived: Mapping[str, Any] | None, now: datetime, *,
              wall_clock: bool = False) -> str:
    """The title with no certification in the store: `shown` (name, result) the last one this wall showed, `gone`
    how many it saw in all that are no longer there; `archived` the history's newest (last_archived). `wall_clock`:
    `now` is the wall clock (a cluster's session: store_now), which stamped its `archivedAt`, where its completionTime
    may be a --sim-runner fleet's simulated time running ahead: it finished no later than it was archived (it said
    "finished 0s ago" of one archived minutes before). On the simulator both are the fleet's time."""
    if shown is not None:
        name, result = shown
        others = gone - 1
        said = f"{name} ({result})" if result else name
        return (f"no certification left: {said} and {others} other{'s' if others > 1 else ''} were deleted" if others > 0
                else f"no certification left: {said} was deleted")
    if archived is not None:
        try:
            ended = parse_time(archived.get('completionTime'))
            if wall_clock and archived.get("archivedAt"):
                ended = min(ended, parse_time(archived.get("archivedAt")))
            ago = f", finished {format_age(max(0.0, (now - ended).total_seconds()))} ago"
        except ValueError:
            ago = ""
        return f"no certification left; the last archived: {archived.get('name')} {archived.get('result') or ''}".rstrip() + ago
    return "no certification yet"


class WallMap(RackMap, can_focus=False):
    """The rack map as the wall shows it: a display. It never takes focus, so `right` and `space` rotate
    (the wall's keys) instead of moving a cursor, and the map's own keys (`enter`: open a node) are neither
    taken nor listed by `?` here. A click selects nothing either (the tooltip still names the node under the mouse).
    Its cells name their nodes where the room allows (200x60: the fleet's 32 glyphs took 2 of its 45 lines)."""

    NAMED_CELLS = True

    def on_click(self, event: events.Click) -> None:
        event.prevent_default()  # not RackMap's handler: no cursor, and no NodeSelected that nothing on the wall answers


class CountDigits(Digits):
    """A counter's big digits, as wide as its box (the wall's CSS): Digits asks for a layout of the whole screen whenever
    its text changes width (9 to 10 running, a count to "-"), which a widget of a fixed width does not need, and redraws
    itself at every update, though the count is the same."""

    def update(self, value: str) -> None:
        if value != self.value:
            self._value = value  # Digits keeps its text here (Textual 8: pyproject pins it)
            self.refresh()


class WallScreen(NvcreScreen):
    """The operations-room screen. No key here writes anything."""

    BINDINGS = [
        Binding("right,space", "rotate", "Next", id="wall.next"),
        Binding("escape", "leave", "Leave", id="wall.leave"),
    ]
    # No HELP_WIDGETS: the map here is a display that never takes focus, so none of its keys work on the wall.
    DEFAULT_CSS = """
    WallScreen #title { height: 1; text-style: bold; padding: 0 1; background: $panel; }
    WallScreen #counters { height: 5; }
    WallScreen #tally { height: auto; max-height: 2; padding: 0 1; text-overflow: ellipsis; }  /* TALLY_LINES, TALLY_PADDING; wraps at words: one line cut its counts on 80 columns */
    WallScreen .counter { width: 1fr; height: 5; border: round $panel; border-title-align: left; border-title-color: $text; border-title-style: bold; }
    WallScreen .counter CountDigits { width: 1fr; }  /* the box's: a count of another width lays nothing out */
    WallScreen #box-inconclusive { min-width: 18; }  /* its title whole on 80 columns (the border keeps 6 cells of it) */
    WallScreen #body { height: 1fr; }
    WallScreen RackMap { width: 3fr; }
    WallScreen #failures { width: 2fr; border-left: solid $panel; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.index = 0
        self._rotated = False  # action_rotate moved the index since the last show
        self.current: str | None = None
        self._departed = Departed()  # how many certifications this wall saw leave the store (the room may have watched them)
        self._shown: tuple[str, str] | None = None  # the last one it showed, with its result then
        self._nodes_seen: list[dict[str, Any]] | None = None  # the Nodes the map was laid out from
        self._said: dict[str, str | Text] = {}  # what the title and tally lines say (_say)
        self._reach_seen: tuple[CertificationView, list[Entry]] | None = None  # a view and its out_of_reach entries

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="counters"):
            for state, title in COUNTERS:
                with Vertical(classes="counter", id=f"box-{state}") as box:
                    box.border_title = title  # in the border: the box's 3 inner rows are the Digits' 3 rows, whole
                    yield CountDigits("0", id=f"count-{state}")
        yield Static(id="tally", markup=False)
        yield Legend(spared=[NodeState(state) for state in TALLIED])  # the tally says them with their glyphs
        with Horizontal(id="body"):
            yield WallMap(id="map")
            yield FittedList("Failures", id="failures")

    def on_mount(self) -> None:
        super().on_mount()
        # The wall has no header: its title line carries the badges (the store's silence, who holds the engine). They
        # change with no object changing, and the title followed them only at the next redraw: on a quiet cluster up to
        # IDLE_TICK_SECONDS late, a lost API server (or a dead engine, or the server back) said seconds after the header.
        self.watch(self.app, "sub_title", self._badges_changed, init=False)
        if self.nvcre.live:
            self.set_interval(ROTATE_SECONDS, self.action_rotate, name="rotate")

    def _badges_changed(self, _badges: str) -> None:
        self._snapshot_changed(self.nvcre.snapshot)

    def show(self, snapshot: Snapshot) -> None:
        subjects = wall_subjects(snapshot.views)
        if self.current in subjects and not self._rotated:
            # The one shown stays until the rotation moves on: by position alone, a certification submitted (named before
            # it) or leaving the rotation put another in its place at once, and the one after it was skipped a round.
            self.index = subjects.index(self.current)
        self._rotated = False
        self.current = subjects[self.index % len(subjects)] if subjects else None
        every = node_states(snapshot, self.current)  # the map draws the fleet; the counters count the certification's nodes
        scope = certification_nodes(snapshot, self.current) if self.current else None
        # Every category waits (another certification, or an earlier category, holds its nodes): none of its nodes runs
        # anything yet. Its targeted nodes wait; the counters read 0 and the line says how many it targets, never the
        # whole fleet as if every node were in it.
        targeted = targeted_nodes(snapshot, self.current) if self.current and scope is None else None
        cert = snapshot.certification(self.current) if self.current else None
        ended = cert is not None and cond.is_terminal(cert)  # without starting a category: its nodes as they are, none waiting
        if targeted is not None:
            if not ended:
                every = {name: (NodeState.WAITING.value, "") if name in targeted else state for name, state in every.items()}
            scope = targeted
        states = every if scope is None else {name: state for name, state in every.items() if name in scope}
        counts = Counter(state for state, _ in states.values())
        withheld = self.nodes_withheld()  # no node states at all: the counters read "-", never 0 failed
        blamed = {row.node: row for row in failure_rows(snapshot, self.current)} if self.current else {}
        # SUSPECT counts what the report and `certification list` count as suspects (blamed only with their whole group,
        # among their failed nodes); a running diagnosis's narrowing set is under suspicion, counted on the line below
        # (SUSPECT read 2 where the list said no failed node).
        suspicion = under_suspicion(states, blamed)
        counts["suspect"] -= len(suspicion)
        self.query_one(Legend).set_words({NodeState.SUSPECT: suspect_legend(states, suspicion)})  # as the map draws them !
        for state, _ in COUNTERS:
            self.query_one(f"#count-{state}", CountDigits).update("-" if withheld else str(counts[state]))
        tested = suspects_under_test(snapshot, states, self.current)  # drawn running: said here, or they would go unsaid
        # First: the line is cut at the screen's edge, and on 80 columns this note was what the cut took.
        # Said under the counter that holds them: a suspect whose test's pods are not placed yet is drawn waiting (it read
        # "2 running are suspects under test" beside RUNNING 0).
        note = "".join(f"{len(held)} {state} {'are' if len(held) > 1 else 'is'} {UNDER_SUSPICION}, {TESTED_NOW}; "
                       for state in (NodeState.RUNNING.value, NodeState.WAITING.value)
                       if (held := [node for node in tested if states[node][0] == state]))
        again = blamed_and_running(snapshot, states, self.current)  # drawn ✗ ! ?: RUNNING read 0 for an hour of work
        note += f"{count(len(again), 'blamed node')} running a test now; " if again else ""
        # Why categories wait, after the counts: the line holds two rows, and three categories' reasons ahead of the counts
        # left "of 32 nodes targeted: ... 32 ◷ waiting" off the wall while every counter read 0 (the title says WAITING
        # already). Categories waiting for the same thing are named together.
        waits = list(categories_held(snapshot, self.current) if self.current else [])
        waits += [(category, f"waits: {reason}") for category, reason in (categories_waiting_for_nodes(snapshot, self.current) if self.current else [])]
        grouped: dict[str, list[str]] = {}
        for category, reason in waits:
            grouped.setdefault(reason, []).append(category)
        tally = (f"no node counts and no map: {NODES_WITHHELD}" if withheld else note
                 + (("nothing ran; " if ended else "nothing runs yet; ") if targeted is not None else "")
                 + f"of {count(len(states), 'node')}{' targeted' if targeted is not None else ''}: the counters above + "
                 + (f"{len(suspicion)} {NodeState.SUSPECT.glyph} {UNDER_SUSPICION} + " if suspicion else "")
                 + " + ".join(f"{counts[s]} {NodeState(s).glyph} {s}" for s in TALLIED)
                 + (f"; {count(len(every) - len(states), 'other node')} not in it" if len(every) > len(states) else ""))
        self._say("#tally", tally + waits_said(tally, grouped, self.app.size.width - TALLY_PADDING, TALLY_LINES))
        summary = certification_status(cert or {}).get("summary") or {}
        # Said in words: "FAILED  2/3  (1/2)" read from across the room as two of three failed.
        position = f"  ({self.index % len(subjects) + 1} of {len(subjects)})" if len(subjects) > 1 else ""
        passed = f"  {summary['passedCategories']} categories passed" if summary.get("passedCategories") else ""
        session = self.nvcre.session
        ago = finished_ago(cert, store_now(session) if session is not None else self.nvcre.now()) if cert is not None else None
        finished = f"  finished {format_age(ago.total_seconds())} ago" if ago is not None else ""  # why a finished one is still shown
        # Its summary says RUNNING while every category waits to start (the line below: "nothing runs yet"): WAITING, and why.
        why = waiting_to_start(snapshot, self.current) if self.current else None
        result = f"{NodeState.WAITING.value.upper()} {why}" if why is not None else summary.get("result", "")
        if self.current and (deleting := deleting_result(snapshot, self.current)) is not None:
            # held by a finalizer, nothing advances it (the dashboard says what holds it): RUNNING for good, or no status
            # at all where it was deleted before the engine gave it one (it said WAITING to start); a finished one keeps its result
            result = deleting
        self._departed.see(snapshot.certifications)
        if self.current is not None:
            self._shown = (self.current, result)
            left = time_left(snapshot, self.current, self.nvcre.now(), self.nvcre.stamped_now())  # as the dashboard's Left
            title = f"{self.current}  {result}{passed}{f'  {left.said}' if left is not None else ''}{position}{finished}"
            # in parts, as the line gives up room for the badges' uncut parts (below): the count of categories passed
            # first, then the end (time left, place in the rotation, when it finished), its result, its name in its middle
            parts = [Badge((Piece(self.current, Cut.MIDDLE, least=TITLE_NAME_LEAST, first=2),
                            Piece(f"  {result}", Cut.END, least=TITLE_RESULT_LEAST, first=1))),
                     *([Badge((Piece(passed.strip()),), drop=0)] if passed else []),
                     Badge((Piece(title[len(self.current) + 2 + len(result) + len(passed) + 2:], Cut.END, first=0),))]
        else:  # every one deleted (or none ever): said as such, never as a fleet that was never tested
            session = self.nvcre.session
            # the history is asked only when this wall showed none (at each refresh while the store holds none)
            archived = last_archived(session.history if session is not None and self._shown is None else None)
            title = none_left(self._shown, self._departed.count, archived,
                              store_now(session) if session is not None else self.nvcre.now(),
                              wall_clock=session is not None and not isinstance(session, SimSession))
        # The store's silence first: the line is cut at the screen's edge, and all under it is stale while it lasts
        # (on 80 columns a certification's title left no room for it).
        warnings = [said for said in (self.nvcre.store_warning(), self.nvcre.stall_warning()) if said]
        # The badges fitted to what the line leaves them (the read-only mark and the namespace whole, names cut); the
        # title leaves them the room their uncut parts need first: a running one's title (its time left, its place in the
        # rotation) took the whole line at 80 columns, and the read-only mark and the namespace went off its end
        calm = self.nvcre.calm_badges()
        room = self.app.size.width - TITLE_PADDING
        title_room = room - sum(cell_len(warning) + 3 for warning in warnings) - 3 - cell_len(fitted(calm, 0))
        if self.current is not None and cell_len(title) > title_room and title_room >= TITLE_NAME_LEAST:  # cut where that keeps them
            title = fitted([part for part in parts if part.text], title_room).rstrip()  # (a store warning may take the line whole)
        said = "   ".join([*warnings, title])
        badges = fitted(calm, room - cell_len(said) - 3)
        self._say("#title", Text(f"{said}   {badges}"))
        rack_map = self._show_map(snapshot, every)
        rack_map.set_words({name: state_word(states[name][0], name, suspicion) for name in suspicion})  # its tooltip, as the legend
        faults = infrastructure_faults(snapshot, self.current) if self.current else []
        rack_map.set_domain_marks(clique_marks(faults, LABEL_GPU_CLIQUE))
        # Infrastructure faults first: few, and no node's line says them (the nodes on a degraded link pass). A link two
        # categories named is one entry, as in the failures pane (it was listed once per category, twice on the wall).
        urgent = [Entry(NodeState.FAILED.glyph, row.node, row.categories_said) for row in (fault_rows(snapshot, self.current) if self.current else [])]
        urgent += self._out_of_reach(snapshot)  # the threshold, before the nodes it failed
        # Without the Nodes no node has a state: the blamed ones are still known from the Jobs, as the failures pane lists them
        # (the list stood empty under a FAILED title).
        listed = {name: (row.state, "") for name, row in blamed.items()} if withheld else states
        urgent += urgent_nodes(listed, set(tested), blamed)
        # Then the failures that blamed nobody (a measurement missing, a run cut short): the certification failed on them.
        urgent += [Entry(NodeState.FAILED.glyph, row.node, said_unblamed(row)) for row in (unblamed_failures(snapshot, self.current) if self.current else [])]
        self.query_one("#failures", FittedList).set_entries(urgent)  # as many as the pane holds, "+N more" below them

    def on_resize(self) -> None:
        self.refresh_now()  # the waiting categories named or counted to the new width (waits_said)

    def _out_of_reach(self, snapshot: Snapshot) -> list[Entry]:
        """out_of_reach of the certification shown, worked out again only when its read model changed (the same view
        object while nothing of it changed: it weighs every group's measurements, and the wall refreshes every second)."""
        view = snapshot.views.get(self.current) if self.current else None
        if view is None:
            return []
        if self._reach_seen is None or self._reach_seen[0] is not view:
            self._reach_seen = (view, out_of_reach(snapshot, view.name))
        return self._reach_seen[1]

    def _say(self, line: str, text: str | Text) -> None:
        """Update a line only when what it says changed: an update lays the whole screen out again and draws it anew (the
        map's every line with it), and the wall shows the same snapshot every second while a certification runs."""
        if self._said.get(line) != text:
            self._said[line] = text
            self.query_one(line, Static).update(text)

    def _show_map(self, snapshot: Snapshot, every: Mapping[str, tuple[str, str]]) -> RackMap:
        """The map, laid out anew only when the Nodes themselves changed; else only the cells whose state moved change,
        and only the lines showing them are drawn again. Laid out at every refresh, the map sorted and placed every node
        and drew every line again at each refresh (60 ms more CPU a refresh at 10,000 nodes: bench/tui_wall.py)."""
        rack_map = self.query_one(RackMap)
        if not same_objects(snapshot.nodes, self._nodes_seen):
            rack_map.set_nodes([NodeCell(node_name(n), node_domain(n, LABEL_GPU_CLIQUE), NodeState(every[node_name(n)][0]))
                                for n in snapshot.nodes])
            self._nodes_seen = list(snapshot.nodes)
        else:  # the same names and cliques: the same layout
            cell = rack_map.cell
            rack_map.update_states({name: NodeState(state) for name, (state, _) in every.items()
                                    if (shown := cell(name)) is not None and shown.state.value != state})
        return rack_map

    def action_rotate(self) -> None:
        self.index += 1
        self._rotated = True  # to the next by position, not back to the one shown
        self.refresh_now()

    def action_leave(self) -> None:
        if self.nvcre.wall:
            self.app.exit()
        else:
            self.app.pop_screen()
