"""Topology map: every node grouped by clique / rack (topology key selectable), coloured and marked by
state, live; the highlighted node's state is explained below; enter opens the node.

Overlay marks beside each state glyph: ↻ on nodes whose software baseline changed since their last archived
pass (stale: re-certify), or with `v` NVSentinel's view (its taint, validation state, reported failures). A clique
on a link a diagnosis found degraded says so in its header (✗link, ✗uplink)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer, Header, Input, Select, Static

from nvcre_tui.engine.api.bodies import meta_of
from nvcre_tui.engine.api.nodes import NODES_WITHHELD, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE, RACK_TOPOLOGY_KEYS
from nvcre_tui.engine.history.baseline import baseline_of
from nvcre_tui.engine.history.nvsentinel import MARKS, sentinel_view, unreadable_requests
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.protocol import VALIDATION_REQUEST
from nvcre_tui.engine.views.diagnosis import clique_marks, infrastructure_faults
from nvcre_tui.engine.views.nodes import node_domain, node_states, states_scope
from nvcre_tui.engine.views.snapshot import Snapshot, same_objects
from nvcre_tui.engine.views.suspicion import narrowing_set, state_word, suspect_legend
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.fitted_list import cut_at_word
from nvcre_tui.widgets.item_line import ItemLine
from nvcre_tui.widgets.legend import Legend
from nvcre_tui.widgets.node_state import STALE_GLYPH, NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap

Obj = dict[str, Any]
DEFAULT_KEYS = (LABEL_GPU_CLIQUE, *RACK_TOPOLOGY_KEYS.values())
EXPLAIN_LINES = 3  # the node line under the map (#explain's height, less its border)


def _next_cells(rack_map: RackMap) -> str:
    """What z makes the map's cells: "auto", "compact" or "full"."""
    if rack_map.compact is None:
        return "full" if rack_map.auto_compact else "compact"
    if rack_map.compact == rack_map.auto_compact:
        return "auto"
    return "full" if rack_map.compact else "compact"


class TopologyScreen(NvcreScreen):
    """The fleet as racks of node cells."""

    BINDINGS = [
        Binding("slash", "filter", "Filter", id="topology.filter"),
        Binding("z", "compact", "Cells", id="topology.compact", tooltip="Cell width: automatic, compact (1 column), full (3 columns)"),
        Binding("v", "overlay", "NVSentinel", id="topology.overlay", tooltip="Overlay NVSentinel's view instead of the stale marks"),
        Binding("escape", "back", "Back", id="topology.back"),
    ]
    HELP_WIDGETS = (RackMap,)
    DEFAULT_CSS = """
    TopologyScreen #bar { height: 3; }
    TopologyScreen #key { width: 48; }
    TopologyScreen #scope { width: 1fr; height: 3; padding: 1 1 0 1; color: $text-muted; }
    TopologyScreen #filter { display: none; height: 1; border: none; padding: 0 1; }
    TopologyScreen #filter.-open { display: block; }
    TopologyScreen #explain { height: 4; padding: 0 1; border-top: solid $panel; }  /* EXPLAIN_LINES: a reason, its message, its value and threshold (2 cut them on 80 columns) */
    TopologyScreen #marks { height: auto; max-height: 3; padding: 0 1; }  /* wrapped between entries */
    """

    def __init__(self, certification: str | None = None) -> None:
        super().__init__()
        self.certification = certification
        self._states: dict[str, tuple[str, str]] = {}
        self._narrowing: set[str] = set()  # a running diagnosis's narrowing set among them (state_word)
        self._key = DEFAULT_KEYS[0]
        self._sentinel = False  # the overlay: False = stale marks, True = NVSentinel's view
        self._stale: dict[str, str] = {}
        self._stale_error: str | None = None  # why the archive could not say which nodes are stale
        self._stale_memo: tuple[object, str] | None = None
        self._sentinel_marks: dict[str, tuple[str, str]] = {}
        self._keys: list[str] = []  # the topology keys offered
        self._explained: str | None = None  # the explanation line shown
        self._clique_faults: dict[str, str] = {}  # clique -> the link faults touching it (its header's ✗link, ✗uplink)
        self._scope: str | None = None  # which certifications the states are read from, as shown
        self._nodes_seen: list[Obj] | None = None  # the Nodes the keys were read from
        self._marks_seen: tuple[object, list[Obj], list[Obj]] | None = None  # what the marks were computed from
        self._mark_entries: list[str] = []  # the overlay's legend: #marks says them, then the cell mode
        self._seen = False  # the certification mapped was in a snapshot (one never seen is not said deleted)
        self._uid: str | None = None  # its uid (a namesake created later is another one)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="bar"):
            yield Select([(key, key) for key in DEFAULT_KEYS], value=DEFAULT_KEYS[0], allow_blank=False, id="key", prompt="topology key")
            yield Static(id="scope", markup=False)  # which certifications the states come from (names may hold brackets)
        yield Legend()
        # The overlay's marks and the cell mode. Wrapped between its entries: one line cut NVSentinel's legend at 80
        # columns ("⧗ validating  ◔ "). Not markup: an archive error quotes paths, which may hold brackets.
        yield ItemLine(id="marks")
        yield Input(placeholder="filter nodes: regex, or !passed to hide a state", id="filter")
        yield RackMap(id="map")
        yield Static(id="explain", markup=False)  # states quote the cluster's messages (e.g. "[/dev/shm]")
        yield CommandBar()
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        self.query_one(RackMap).focus()
        super().on_mount()

    def show(self, snapshot: Snapshot) -> None:
        if self._certification_gone(snapshot):
            return
        states = node_states(snapshot, self.certification)
        rack_map = self.query_one(RackMap)
        if not same_objects(snapshot.nodes, self._nodes_seen):  # the Nodes themselves changed (not only their Jobs)
            keys = sorted({k for n in snapshot.nodes for k in node_labels(n) if k in DEFAULT_KEYS} | {DEFAULT_KEYS[0]})
            select = self.query_one("#key", Select)
            if keys != self._keys:
                select.set_options([(k, k) for k in keys])
                self._keys = keys
            select.value = self._key if self._key in keys else keys[0]
            self._nodes_seen = list(snapshot.nodes)
        scope = states_scope(snapshot, self.certification)
        if scope != self._scope:  # redrawn only when it changes (snapshots come twice a second)
            self._scope = scope
            self.query_one("#scope", Static).update(scope)
        layout_changed = not self._states or set(states) != set(self._states)
        if layout_changed:
            rack_map.set_nodes([NodeCell(node_name(n), node_domain(n, self._key), NodeState(states[node_name(n)][0]), states[node_name(n)][1])
                                for n in snapshot.nodes])
        else:  # a new state or only a new reason (a live run's): the cell's tooltip says the current one
            changes = {name: (NodeState(state), detail) for name, (state, detail) in states.items() if self._states.get(name) != (state, detail)}
            if changes:
                rack_map.update_states(changes)
        self._states = states
        narrowing = narrowing_set(snapshot, states, self.certification) if any(s == "suspect" for s, _ in states.values()) else []
        self._narrowing = set(narrowing)
        rack_map.set_words({name: state_word(states[name][0], name, narrowing) for name in narrowing if name in states})
        self.query_one(Legend).set_words({NodeState.SUSPECT: suspect_legend(states, narrowing)})
        faults = [f for f in infrastructure_faults(snapshot, self.certification) if f.topology_key == self._key and f.localised]
        rack_map.set_domain_marks(clique_marks(faults, self._key))
        # one subject once, though two categories (or certifications) named the same link
        self._clique_faults = {clique: "; ".join(dict.fromkeys(f.subject for f in faults if clique in f.cliques)) for f in faults for clique in f.cliques}
        self._show_marks(snapshot)
        self._explain(rack_map.highlighted)

    def _certification_gone(self, snapshot: Snapshot) -> bool:
        """The map of one certification (the drill-down's `m`) whose certification was deleted: emptied, said on its
        scope and node lines, and back to the drill-down, which says it once and leaves too. It drew the whole fleet
        ◦ untested under "certification burn-in", read as a certification that had tested nothing."""
        if self.certification is None:
            return False
        if not self._gone:
            cert = snapshot.certification(self.certification)
            uid = str(meta_of(cert or {}).get("uid") or "") or None
            if not self._seen or (cert is not None and uid == self._uid):
                self._seen = self._seen or cert is not None
                self._uid = self._uid if self._uid is not None else uid
                return False
            self._gone = True
            gone = f"certification {self.certification} was deleted"
            self._scope = gone
            self.query_one("#scope", Static).update(gone)
            self.query_one(RackMap).set_nodes([])
            self._states, self._narrowing, self._clique_faults = {}, set(), {}
            self._say(f"{gone}: nothing is left to map. esc: back")
        self.leave_once_on_top()
        return True

    def _show_marks(self, snapshot: Snapshot) -> None:
        """Stale marks from the session's archive, or NVSentinel's marks from the Nodes (and requests)."""
        session = self.nvcre.session
        requests = session.validation_requests if session is not None else None
        listed = requests.list(VALIDATION_REQUEST) if requests is not None else []
        query = session.history if session is not None else None
        seen = ((query.change_key() if query is not None else None, self._sentinel), list(snapshot.nodes), listed)
        if self._marks_seen is not None and seen[0] == self._marks_seen[0] and same_objects(seen[1], self._marks_seen[1]) and same_objects(listed, self._marks_seen[2]):
            return  # the same Nodes, requests, archive and overlay: the same marks
        self._marks_seen = seen
        views = {node_name(n): sentinel_view(n, listed) for n in snapshot.nodes}
        self._sentinel_marks = {name: (view.mark, view.state or "") for name, view in views.items() if view.mark}
        current = {node_name(n): baseline_of(n) for n in snapshot.nodes}
        memo = (query.change_key() if query is not None else None, repr(sorted(current.items())))
        if query is not None and memo != self._stale_memo:
            try:
                self._stale = {name: found.detail for name, found in query.stale_nodes(current).items() if name in current}
                self._stale_error = None
            except Exception as error:  # noqa: BLE001 - an unreadable archive shows no marks and says why
                self._stale, self._stale_error = {}, f"history unreadable, no stale marks: {error}"
            self._stale_memo = memo
        if self._sentinel:
            self.query_one(RackMap).set_marks({name: mark for name, (mark, _) in self._sentinel_marks.items()})
            unreadable = unreadable_requests(listed)  # left out of the marks: said, not dropped
            entries = ["NVSentinel:", *(f"{glyph} {meaning}" for _, glyph, meaning in MARKS)]
            entries += [] if requests is not None else ["(no ValidationRequest CRD)"]
            entries += [f"· {len(unreadable)} ValidationRequest(s) unreadable, first {unreadable[0]}"] if unreadable else []
            entries += ["· v: stale marks"]
        else:
            self.query_one(RackMap).set_marks(dict.fromkeys(self._stale, STALE_GLYPH))
            entries = [self._stale_error] if self._stale_error else [f"{STALE_GLYPH} stale: software changed since the last pass, re-certify",
                                                                      "· v: NVSentinel overlay"]
        self._mark_entries = entries if self._sentinel or self._stale or self._stale_error else []
        self._show_legend()

    def _show_legend(self) -> None:
        """#marks: the overlay's legend (when it marks anything), then the cell mode and what z makes it."""
        rack_map = self.query_one(RackMap)
        cells = [("· " if self._mark_entries else "") + rack_map.cells_said(), f"· z: {_next_cells(rack_map)}"]
        self.query_one("#marks", ItemLine).set_items([Text(printable(entry, newlines=False)) for entry in [*self._mark_entries, *cells]])

    @on(RackMap.CellsChanged)
    def _cells_changed(self) -> None:
        self._show_legend()

    def _explain(self, name: str | None) -> None:
        if self._gone:  # the line says so (_certification_gone)
            return
        if not name and self.nodes_withheld():  # an empty map under a legend read as a fleet with no node
            self._say(f"no map: {NODES_WITHHELD}")
            return
        if not name:
            self._say("arrows/hjkl move · enter opens a node · / filter · z cell width")
            return
        state, detail = self._states.get(name, ("untested", ""))
        extra = ""
        if name in self._stale:
            extra += f" · {STALE_GLYPH} {self._stale[name]}"
        if name in self._sentinel_marks:
            mark, sentinel = self._sentinel_marks[name]
            extra += f" · NVSentinel {mark} {sentinel}"
        cell = self.query_one(RackMap).cell(name)
        if cell is not None and cell.domain in self._clique_faults:  # what its header's ✗link says
            extra += f" · {cell.domain}: {self._clique_faults[cell.domain]}"
        said = state_word(state, name, self._narrowing)  # "! suspect" beside a legend saying "! under suspicion"
        self._say(f"{name}: {NodeState(state).glyph} {said}" + (f" — {detail}" if detail else "") + extra)

    def _say(self, text: str) -> None:
        """The explanation line, redrawn only when it changes (its height is fixed: no layout pass); what does not fit
        its EXPLAIN_LINES lines ends at a word with "…", never cut mid-word or mid-number."""
        explain = self.query_one("#explain", Static)
        width = explain.content_size.width
        fitted = "\n".join(cut_at_word(text, width, EXPLAIN_LINES)) if width > 0 else text
        if fitted != self._explained:
            self._explained = fitted
            explain.update(fitted, layout=False)

    def on_resize(self) -> None:
        self.call_after_refresh(lambda: self._explain(self.query_one(RackMap).highlighted))  # fitted to the new width

    @on(RackMap.NodeHighlighted)
    def _highlighted(self, event: RackMap.NodeHighlighted) -> None:
        self._explain(event.name)

    @on(RackMap.NodeSelected)
    def _selected(self, event: RackMap.NodeSelected) -> None:
        from nvcre_tui.screens.node import NodeScreen

        self.app.push_screen(NodeScreen(event.name))

    @on(Select.Changed, "#key")
    def _key_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self._key:
            self._key = event.value
            self._states = {}
            self.refresh_now()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-open")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.query_one(RackMap).filter = event.value

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(RackMap).focus()

    def action_overlay(self) -> None:
        """Switch the marks between stale nodes and NVSentinel's view."""
        self._sentinel = not self._sentinel
        self.refresh_now()

    def action_compact(self) -> None:
        """z: the next cell mode (automatic, compact, full; see RackMap.cycle_cells)."""
        self.query_one(RackMap).cycle_cells()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_class("-open"):
            box.value = ""
            box.remove_class("-open")
            self.query_one(RackMap).focus()
        else:
            self.app.pop_screen()
