"""The Textual app: opens a Session (the embedded simulator, or a cluster) and pushes screens; routes
nothing domain-specific. The session's engine, when this process runs one, works in a worker (never in
read-only mode or on the wall); screens re-render from snapshots of the session's watch cache that a timer
takes at most twice a second (k9s's poll-the-cache model: redraws never follow the event rate).

A session the CLI's opener opens is opened in a worker behind a screen saying where it connects (q and ctrl+c quit
meanwhile: a server may never answer). Quitting asks first only when this console is the engine of certifications
still running on a cluster (they stop advancing until another engine runs)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual.app import SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from nvcre_tui.badges import SIM_TIME_SAID, Badge, Cut, Piece, fitted
from nvcre_tui.commands import NvcreCommands, allowed_commands, help_lines, hint, run_colon_command
from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.api.damage import DamagedObject
from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import certifications_take, rbac_refused, with_grant
from nvcre_tui.engine.informer import Informer
from nvcre_tui.engine.lease import NO_HOLDER, nothing_advances
from nvcre_tui.engine.history.deletion import delete_certification
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.session import Session, SimSession, TitleCut, plays_the_fleet, store_now
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario
from nvcre_tui.engine.store.created import made_by_this_create
from nvcre_tui.engine.store.errors import AlreadyExists, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, ResourceStore
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.engine.store.kube.terminal import hold_terminal
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.units import count
from nvcre_tui.policy import Policy
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.screens.confirm import ConfirmModal
from nvcre_tui.screens.registry import BY_NAME
from nvcre_tui.theme import DEFAULT_THEME, ThemedApp
from nvcre_tui.widgets.command_bar import CommandBar

REFRESH_SECONDS = 0.5
TICK_SECONDS = 1.0  # while a certification runs, the screens redraw at least this often (durations move on)
# When all have finished, this often: their Age and the wall's "finished ... ago" move on too (they stood still at the
# time the last one finished, "finished 0s ago", until something in the cluster changed).
IDLE_TICK_SECONDS = 5.0
TAKE_OVER_SECONDS = 1.0  # a viewer console looks at the engine Lease this often (one local read)
CLUSTER_TAKE_OVER_SECONDS = 5.0  # on a cluster (one API request; a Lease runs 15 s before another may take it)
HIGH_CONTRAST = "nvcre-high-contrast"
CLOSE_SECONDS = 5.0  # the most quitting waits for a session the opener was still opening to close what it opened
NOTICE_SECONDS = 30.0  # a session's notice (e.g. at start-up) stays long enough to be read once the screen settled
HEADER_CHROME = 18  # the cells Textual's Header keeps beside its title: its icon (8) and its clock's place (10)
CROWDED = "-crowded-header"  # the app's class while the badges do not fit beside the title (app.tcss)
CROWDED_CHROME = 3  # then the icon's (3), the clock's place hidden
TITLE_GAP = " — "  # between the header's title and the badges (App.format_title)
SIM_TIME = f", {SIM_TIME_SAID}"  # after the word that says the fleet is simulated: its times are the simulated clock's
# How the header's badges give up room at 80 columns (badges.fitted), in this order: a context, server or scenario name
# cut in its middle to NAME_LEAST cells, who holds the engine cut at its end to VIEWER_LEAST ("viewer: engine held by…"),
# a scenario's name left out (with its separator; a context or server stays), who holds the engine to VIEWER_FLOOR ("viewer: engine…"), a warning cut
# at its end to WARNING_LEAST ("⚠ no answer from the store since…"), then who holds the engine left out, then a warning
# cut to WARNING_FLOOR. The read-only mark, the namespace and the simulated clock's mark never.
NAME_LEAST, VIEWER_LEAST, NAME_FLOOR, VIEWER_FLOOR, WARNING_LEAST, WARNING_FLOOR = 8, 24, 0, 16, 34, 12
NAME_CUT, VIEWER_CUT, NAME_LAST_CUT, VIEWER_LAST_CUT, WARNING_CUT, VIEWER_GOES, WARNING_LAST_CUT = range(7)


class NvcreApp(ThemedApp[None]):
    """nvcre console."""

    TITLE = "nvcre console"
    CSS_PATH = "app.tcss"
    COMMANDS = ThemedApp.COMMANDS | {NvcreCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        # ctrl+c leaves, as in other terminal tools (Textual's default only says "press ctrl+q"); a field copies with it.
        Binding("ctrl+c", "quit", "Quit", show=False, id="app.interrupt"),
        Binding("question_mark", "help", "Keys", id="app.help", tooltip="Every key binding"),
        # F1 as well: in a text field (compose's name, a filter) `?` is typed into the field, F1 never is.
        Binding("f1", "help", "Keys", show=False, id="app.help_f1", tooltip="Every key binding (also in a text field)"),
        Binding("colon", "command_bar", "Command", id="app.command", tooltip="Command bar (dashboard, map, drill-down, node, catalog): :certs :racks :node NAME :wall :theme NAME ..."),
        Binding("T", "cycle_theme", "Theme", show=False, id="app.theme"),
    ]

    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True)

    def __init__(
        self, *, scenario: Scenario | None = None, session: Session | None = None, state_path: Path | None = None,
        read_only: bool = False, wall: bool = False, live: bool = True, theme_name: str | None = None,
        opener: Callable[[], Awaitable[Session]] | None = None, freeze_heap: bool = False, connecting: str | None = None,
    ) -> None:
        """opener: opens the session (the CLI's, on a cluster or the simulator), behind a screen saying what it connects
        to (`connecting`: `<server> (<source>)`) that q and ctrl+c leave; without one, the embedded simulator opens
        before the first screen."""
        super().__init__(theme_name=theme_name or (HIGH_CONTRAST if wall else DEFAULT_THEME))
        self.scenario = scenario or (getattr(session, "scenario", None) if session else None) or default_scenario()
        self.session: Session | None = session
        self._opened_session = session is None
        self._opener = opener
        self._connecting = connecting
        self._opening: Worker[None] | None = None  # the opener at work, while the connecting screen shows
        self._leaving = False  # exit() was called: a session opened from now on is not shown (on_unmount closes it)
        self.startup_error: str | None = None  # a one-line reason the console could not start (the CLI prints it)
        self.state_path = state_path
        self.policy = Policy(read_only=read_only or wall)
        self.wall = wall
        self.live = live
        self._seen_version: int | None = None
        self._shown_at = 0.0  # time.monotonic() of the last snapshot the screens were given
        self._notices_shown = 0  # how many of the session's notices were notified
        self._damage_said: set[DamagedObject] = set()  # the damaged objects left out that the console named
        self.ui_store: ResourceStore | None = None
        self.informer: Informer | None = None
        self.save_error: InputError | None = None
        self._freeze_heap = freeze_heap
        self._release_terminal: Callable[[], None] | None = None
        self.sub_title = self._badges()

    def _badges(self) -> str:
        """The header's badges whole (the app's sub_title); format_title fits them to the header's room."""
        return "  ".join(badge.text for badge in self.badges())

    def badges(self) -> list[Badge]:
        """The header's badges, most urgent first, the session's title last: a narrow header cuts the end (the store not
        answering was seen at 220 columns only; at 80 the title, first, left no room for the read-only and viewer
        badges). Fitted to the header's room (badges.fitted): a warning cut at its end, names in their middle."""
        if self.session is None and self._opener is not None:  # not the simulator's name while it may be a cluster
            return [Badge((Piece(self._opening_text(), Cut.MIDDLE, least=NAME_LEAST, first=NAME_CUT),))]
        warnings = [said for said in (self.store_warning(), self.stall_warning()) if said is not None]
        return [*(Badge((Piece(said, Cut.END, least=WARNING_LEAST, first=WARNING_CUT, floor=WARNING_FLOOR, floor_first=WARNING_LAST_CUT),))
                  for said in warnings), *self.calm_badges()]

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's line: `title — badges` where the badges (the app's sub_title) fit beside it whole; else the
        badges alone, fitted (badges.fitted) to the whole header less a narrower icon and clock space (app.tcss's
        -crowded-header): the console's name says least."""
        if not sub_title or sub_title != self.sub_title:
            return super().format_title(title, sub_title)
        crowded = cell_len(sub_title) > self.size.width - HEADER_CHROME - cell_len(title) - cell_len(TITLE_GAP)
        self.set_class(crowded, CROWDED)
        if not crowded:
            return super().format_title(title, sub_title)
        return Content(fitted(self.badges(), self.size.width - CROWDED_CHROME)).stylize("dim")

    def on_resize(self) -> None:
        self.mutate_reactive(NvcreApp.sub_title)  # the header fits its badges to the new width (format_title)

    def store_warning(self) -> str | None:
        """The header's most urgent badge: the store gives no answer (or refuses the watches), and what is shown is
        the last known state; None while it answers."""
        cache = self.session.cache if self.session is not None else None
        if cache is not None and (silence := cache.silence()) is not None:
            return f"⚠ {silence}: showing the last known state"
        return None

    def stall_warning(self) -> str | None:
        """The header's next badge: a viewer sees RUNNING certifications while no engine holds the Lease (its holder
        died mid-run), so nothing advances them, as the CLI's stderr says (`report`, `list`, `logs --follow`); the
        viewer badge alone left RUNNING to be read as progress. Short, and before the read-only badge: at 80 columns
        the header cuts the end. None otherwise."""
        viewer = self.session.viewer_reason if self.session is not None else None
        if not viewer or NO_HOLDER not in viewer or self.snapshot is None or not _running(self.snapshot):
            return None
        return f"⚠ no engine: {nothing_advances('RUNNING ones', short=True)}"

    def calm_badges(self) -> list[Badge]:
        """The header's other badges, most urgent first: read-only, who holds the engine, the session's title. Where
        the room is short, the session's names (a context, a server, a scenario) are cut in their middle first, then
        who holds the engine, which goes last; the read-only mark and the namespace are never cut."""
        badges: list[Badge] = []
        if self.policy.read_only:
            badges.append(Badge((Piece("🔒 READ-ONLY"),)))
        viewer = self.session.viewer_reason if self.session is not None else None
        if viewer:
            badges.append(Badge((Piece("👁 "), Piece(viewer, Cut.END, least=VIEWER_LEAST, first=VIEWER_CUT, floor=VIEWER_FLOOR,
                                                          floor_first=VIEWER_LAST_CUT)), drop=VIEWER_GOES))
        session = self.session
        # SIM_TIME where this process plays the fleet: every time shown (Age, "finished ... ago", a log's stamps) is its
        # simulated clock's, running `speed` times the wall clock's (it read as real dates and durations)
        parts = session.title_parts(SIM_TIME if self.times_simulated() else "") if session is not None else (
            (f"SIMULATED{SIM_TIME}", TitleCut.NEVER), (f" · {self.scenario.name}", TitleCut.GONE))
        badges.append(Badge(tuple(_title_piece(text, cut) for text, cut in parts if text)))
        return badges

    def times_simulated(self) -> bool:
        """Whether the times shown are a simulated clock's: this process plays the fleet (the simulator, --sim-runner)."""
        return self.session is not None and plays_the_fleet(self.session)

    @property
    def store(self) -> ResourceStore:
        """The store screens write through: wrapped so every write is refused in read-only mode."""
        assert self.ui_store is not None
        return self.ui_store

    def now(self) -> datetime:
        """The session clock's time (simulated time on the simulator)."""
        assert self.session is not None
        return self.session.clock.now()

    def stamped_now(self) -> datetime:
        """Now on the clock that stamps the store's creationTimestamps (session.store_now: an API server's, not a
        --sim-runner fleet's simulated one)."""
        assert self.session is not None
        return store_now(self.session)

    def _opening_text(self) -> str:
        return f"connecting to {self._connecting}" if self._connecting else "opening the session"

    async def on_mount(self) -> None:
        # The screen is the console's: a kubeconfig exec plugin run now (a token refreshed mid-session) may not prompt
        # over it, nor read the keys typed at it (engine.store.kube.terminal)
        self._release_terminal = hold_terminal("the console")
        if self.session is None and self._opener is not None:
            # Opened in a worker, behind a screen that says so: a cluster may take seconds, or never answer, and keys
            # (q, ctrl+c) must work meanwhile; on_mount awaiting it held every key and showed a blank screen.
            from nvcre_tui.screens.connecting import ConnectingScreen

            await self.push_screen(ConnectingScreen(self._opening_text()))
            self._opening = self.run_worker(self._open_then_start(), name="open", group="open")
            return
        if self.session is None and not await self._open():
            return
        await self._start()

    async def _open(self) -> bool:
        """Open the session (the opener's, else the embedded simulator); False when it could not be: the one-line reason
        is kept for the CLI to print, and the app exits 2."""
        try:
            self.session = await (self._opener() if self._opener else SimSession.open(self.scenario, self.state_path, live=self.live))
        except InputError as error:
            self.startup_error = "; ".join(error.messages)
            self.exit(return_code=2)
            return False
        except StoreError as error:  # e.g. RBAC lets this user read no certifications in the namespace
            self.startup_error = with_grant(f"nvcre: cannot open the console on this cluster: {error}", error)  # RBAC: which role grants it
            self.exit(return_code=2)
            return False
        return True

    async def _open_then_start(self) -> None:
        """The opener's worker: open, then replace the connecting screen with the first console screen (unless the
        console is quitting by then: on_unmount closes what was opened)."""
        if await self._open() and not self._leaving:  # quitting meanwhile: on_unmount closes what was opened
            await self._start(replace=True)

    async def _start(self, *, replace: bool = False) -> None:
        """The session is open: start the informer (and the engine, the timers), then show the first screen (`replace`:
        in place of the connecting screen)."""
        assert self.session is not None
        self.ui_store = ReadOnlyStore(self.session.store) if self.policy.read_only else self.session.store
        self.sub_title = self._badges()
        self.informer = Informer(self.session.cache, self.session.namespace)  # one namespace: a name names one certification
        await self.informer.start()
        if self.live:
            engine = self.session.engine
            if engine is not None and not self.policy.read_only:  # a viewer (read-only, the wall) never reconciles
                self._run_engine()
            every = TAKE_OVER_SECONDS if isinstance(self.session, SimSession) else CLUSTER_TAKE_OVER_SECONDS
            if not self.policy.read_only:
                self.set_interval(every, self.take_over, name="take-over")
            else:  # it never takes the Lease over, yet says who holds it now (a holder that died included)
                self.set_interval(every, self.refresh_viewer, name="viewer")
            self.set_interval(REFRESH_SECONDS, self.refresh_snapshot, name="snapshot")
        await self.refresh_snapshot()
        from nvcre_tui.screens.dashboard import DashboardScreen
        from nvcre_tui.screens.wall import WallScreen

        first = WallScreen() if self.wall else DashboardScreen()
        if replace:
            from nvcre_tui.screens.connecting import ConnectingScreen

            while len(self.screen_stack) > 1 and not isinstance(self.screen, ConnectingScreen):
                await self.pop_screen()  # `?` opened over it meanwhile
            await self.switch_screen(first)
        else:
            await self.push_screen(first)
        if self._freeze_heap:
            freeze_heap()

    def _run_engine(self) -> None:
        assert self.session is not None and self.session.engine is not None
        self.run_worker(self.session.engine.run(), name="engine", group="engine", exclusive=True, exit_on_error=False)

    async def take_over(self) -> None:
        """A console that views takes the engine Lease over once its holder released it or died (as `run --wait`
        does), and runs the engine from then on; it goes back to viewing if it loses it."""
        session = self.session
        if session is None or session.engine is not None:
            return
        if await session.take_over() and session.engine is not None:
            self._run_engine()
            self.sub_title = self._badges()
            self.notify("No engine held the lease any more: this console took it over and runs the engine.", title="engine")
        elif self.sub_title != self._badges():
            self.sub_title = self._badges()  # e.g. who holds it now

    async def refresh_viewer(self) -> None:
        """A read-only console or the wall: who holds the engine Lease now, in the header."""
        if self.session is not None:
            await self.session.refresh_viewer()
            if self.sub_title != self._badges():
                self.sub_title = self._badges()

    async def refresh_snapshot(self) -> None:
        """Take a new snapshot from the informer's cache when it changed since the last one."""
        await asyncio.sleep(0)  # let pending watch events reach the cache first
        if self.informer is None:  # not mounted yet
            return
        version = self.informer.version
        if version != self._seen_version:
            self._seen_version = version
            self.snapshot = self.informer.snapshot()
            self._shown_at = time.monotonic()
            self._say_damaged(self.snapshot.damaged)
        elif self.snapshot is not None and self.snapshot.certifications and (
                time.monotonic() - self._shown_at >= (TICK_SECONDS if _running(self.snapshot) else IDLE_TICK_SECONDS)):
            # Nothing changed (a quiet cluster, a long run), yet a running certification's Runtime and every Age move
            # on: the screens show the same snapshot again at the time it is now.
            self.snapshot = self.snapshot
            self._shown_at = time.monotonic()
        badges = self._badges()
        if badges != self.sub_title:  # a broken watch (or its end) changes no object: the header says it
            self.sub_title = badges
        self._show_notices()

    def _say_damaged(self, damaged: tuple[DamagedObject, ...]) -> None:
        """Name the damaged objects the snapshot left out, once each (again only if it is damaged anew): one line, the
        first object with its first problem, and how many more."""
        new = [found for found in damaged if found not in self._damage_said]
        self._damage_said = set(damaged)
        if new:
            more = f" (and {len(new) - 1} more damaged objects)" if len(new) > 1 else ""
            self.notify(printable(new[0].said("the console") + more, newlines=False), severity="warning", title="damaged object",
                        timeout=NOTICE_SECONDS, markup=False)

    def _show_notices(self) -> None:
        """Notify the session's notices not shown yet: what the CLI prints on stderr (the history is off at
        start-up, an archive that failed later). A screen pushed after a notification still shows it."""
        notices = self.session.notices if self.session is not None else []
        for notice in notices[self._notices_shown:]:
            self.notify(printable(notice), severity="warning", title="nvcre", timeout=NOTICE_SECONDS, markup=False)
        self._notices_shown = len(notices)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "engine":
            return
        if event.state == WorkerState.ERROR:
            self.notify(printable(f"engine stopped: {event.worker.error}"), severity="error", timeout=30, markup=False)
        elif event.state == WorkerState.SUCCESS and self.session is not None and self.session.engine is None:
            # The engine returned because the session lost the Lease (another engine reconciles now), or for good
            self.sub_title = self._badges()
            if self.session.engine_stopped is not None:  # its CRDs were given another nvcre's schema: the header says it too
                self.notify(printable(f"This console no longer runs the engine ({self.session.engine_stopped}); it goes on as "
                                      "a viewer until `nvcre setup init` of this version gives the CRDs its schema again."),
                            severity="error", title="engine", timeout=NOTICE_SECONDS, markup=False)
                return
            self.notify(printable(f"This console no longer runs the engine ({self.session.viewer_reason or 'lease lost'}); "
                                  "it takes the lease again once it is free."), severity="warning", title="engine", markup=False)

    async def on_unmount(self) -> None:
        try:
            await self._close_session()
        finally:  # after the session's last requests (a Lease released): the screen is the console's until then
            if self._release_terminal is not None:
                self._release_terminal()

    async def _close_session(self) -> None:
        opening = self._opening
        if opening is not None and not opening.is_finished:  # quit while connecting: the opener closes what it opened
            opening.cancel()
            with contextlib.suppress(WorkerCancelled, WorkerFailed, TimeoutError):
                await asyncio.wait_for(opening.wait(), CLOSE_SECONDS)
        if self.session is None:
            return
        if not self.policy.read_only and isinstance(self.session, SimSession):  # a read-only console writes nothing, the state file included
            try:
                self.session.save()
            except InputError as error:  # e.g. the disk filled up: `nvcre` prints it once the screen is restored
                self.save_error = error
        if self._opened_session:
            await self.session.close()

    def exit(self, result: None = None, return_code: int = 0, message: Any = None) -> None:
        self._leaving = True
        super().exit(result, return_code, message)

    async def action_quit(self) -> None:
        """q, ctrl+q, the palette's Quit: see `request_quit`."""
        self.request_quit()

    def request_quit(self) -> None:
        """Quit at once, unless quitting loses something: a screen's unsaved work (a changed compose form), or, where
        this console is the engine of certifications still running on a cluster, their progress until another engine
        runs; then it asks first (Stay is the default answer). The simulator keeps its time while no process runs and
        catches up when one opens it; a viewer's quitting stops nothing."""
        if any(isinstance(screen, QuitQuestion) for screen in self.screen_stack):
            return  # asked already: the question is on screen
        lost = [said for screen in self.screen_stack if isinstance(screen, NvcreScreen) and (said := screen.unsaved())]
        running = self.running_here()
        if not running and not lost:
            self.exit()
            return
        reasons = [f"{said[0].upper()}{said[1:]}: quitting discards it" for said in lost]
        if running:
            n = len(running)
            reasons.append(f"{count(n, 'certification')} {'is' if n == 1 else 'are'} running and this console is {'its' if n == 1 else 'their'} "
                           f"engine: quitting stops {'it' if n == 1 else 'them'} advancing until another nvcre engine runs (`nvcre controller`)")
        question = ". ".join(reasons) + ". Quit?"

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.exit()

        self.push_screen(QuitQuestion(question, yes="Quit", no="Stay"), answered)

    def running_here(self) -> list[str]:
        """The certifications (of every namespace: the engine reconciles them all) still running that stop advancing when
        this console quits: those this process is the engine of on a cluster; none on the simulator, in a viewer, or
        while the engine does not run here."""
        session = self.session
        if session is None or isinstance(session, SimSession) or session.engine is None or self.policy.read_only:
            return []
        if not any(worker.group == "engine" and not worker.is_finished for worker in self.workers):
            return []  # not run by this app (a test's live=False), or stopped: nothing here advances them
        return sorted(f"{cert['metadata'].get('namespace') or ''}/{cert['metadata']['name']}" for cert in session.cache.list(CERTIFICATION)
                      if not cond.is_terminal(cert))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.policy.allows(action) or False

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's palette commands, less the screenshot (a file write) when the policy refuses it."""
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot" or self.policy.allows("screenshot"):
                yield command

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        """Refused in read-only mode, whoever asks (a direct call past the filtered palette)."""
        if not self.policy.allows("screenshot"):
            self.notify("read-only: saving a screenshot is refused", severity="warning", title="not saved")
            return None
        return super().deliver_screenshot(filename, path, time_format)

    async def submit(self, body: dict[str, Any]) -> bool:
        """Create a Certification in the session's namespace through the (possibly read-only) store; notify on refusal."""
        assert self.session is not None  # opened on mount, before any screen can submit
        body.setdefault("metadata", {})["namespace"] = self.session.namespace
        if (refused := await self.rbac_refuses("create", "creating", self.session.namespace)) is not None:
            self.notify(refused, severity="error", title="not submitted", markup=False)
            return False
        try:
            if (otherwise := await self.session.runs_otherwise()) is not None:  # the engine holding the Lease would fail it
                self.notify(printable(otherwise), severity="error", title="not submitted", markup=False)
                return False
            self.session.stamp(body)
            try:
                await self.store.create(CERTIFICATION, body)
            except AlreadyExists as taken:
                # its first try committed, its answer lost, the retry met it: submitted ("already exists" said it was not)
                if await made_by_this_create(self.store, CERTIFICATION, body, taken) is None:
                    raise
        except StoreError as error:
            why = f"; {certifications_take('creating', self.session.namespace)}" if rbac_refused(error) else ""
            self.notify(printable(f"{error}{why}"), severity="error", title="not submitted", markup=False)
            return False
        await self.refresh_snapshot()
        self.notify(printable(f"certification {body['metadata']['name']} submitted"), markup=False)
        return True

    def asks_rights(self) -> bool:
        """Whether `rbac_refuses` asks the API server (a cluster, not read-only); False: it never refuses."""
        from nvcre_tui.engine.kube.session import authorizer_of

        return not self.policy.read_only and self.session is not None and authorizer_of(self.session) is not None

    async def rbac_refuses(self, verb: str, doing: str, namespace: str, name: str | None = None) -> str | None:
        """Why RBAC refuses this user `verb` on certifications in `namespace`, asked of the API server first (a
        SelfSubjectAccessReview), so that a user bound to a view role never sends a write the server refuses; None
        when it allows it, would not say (found out when writing), or there is no RBAC (the simulator) or the console
        is read-only (its store refuses every write itself)."""
        from nvcre_tui.engine.kube.session import authorizer_of

        authorizer = authorizer_of(self.session) if self.asks_rights() and self.session is not None else None
        if authorizer is None or await authorizer(verb, CERTIFICATION, namespace, name) is not False:
            return None
        return printable(f"this user may not {verb} certifications in namespace {namespace} (RBAC, asked of the server); "
                         f"{certifications_take(doing, namespace)} (nothing {verb}d)", newlines=False)

    async def delete_certification(self, name: str, namespace: str, uid: str | None = None) -> bool:
        """Delete a Certification (the one of `uid`, when given) through the (possibly read-only) store, archived
        first when finished (engine/history/deletion.py): its Workflows, Jobs and runs go with it, and the engine stops what
        it ran. Notify what became of it, or why it was not deleted."""
        assert self.session is not None  # opened on mount, before any screen can ask
        cache = self.session.cache
        cert = cache.get(CERTIFICATION, name, namespace)
        if cert is not None and (refused := await self.rbac_refuses("delete", "deleting", namespace, name)) is not None:
            self.notify(refused, severity="error", title="not deleted", markup=False)
            return False
        deletion = None
        if cert is not None and (not uid or cert["metadata"].get("uid") == uid):
            try:
                from nvcre_tui.engine.kube.session import authorizer_of

                deletion = await delete_certification(self.store, cache, self.session.archiver, cert,
                                                      authorizer=authorizer_of(self.session))
            except InputError as error:
                self.notify(printable("; ".join(error.messages)), severity="error", title="not deleted", markup=False)
                return False
        await self.refresh_snapshot()
        if deletion is None or deletion.already_gone:  # someone else (another console, kubectl) deleted or replaced it
            self.notify(printable(f"certification {name} is already gone: someone else deleted it"), severity="warning", title="not deleted", markup=False)
            return False
        self.notify(printable(deletion.said), markup=False)
        return True

    def action_help(self) -> None:
        from nvcre_tui.screens.help import HelpScreen

        if not self.wall:
            self.push_screen(HelpScreen(self.policy, self.BINDINGS, help_lines(self), here=type(self.screen).__name__))
            return
        # `nvcre wall` reaches no other screen and has no command bar: it listed the dashboard's, the drill-down's and
        # every other screen's keys, and `:`, none of which does anything there.
        bindings = [b for b in self.BINDINGS if not (isinstance(b, Binding) and b.action == "command_bar")]
        self.push_screen(HelpScreen(self.policy, bindings, help_lines(self), screens=[BY_NAME["wall"]],
                                    palette="command palette: " + ", ".join(usage for usage, _ in help_lines(self))))

    def action_command_bar(self) -> None:
        if not self.screen.query(CommandBar) and self.wall:  # escape quits `nvcre wall`: no screen to go back to
            self.notify("the wall display has no command bar: ctrl+p offers " + ", ".join(usage for usage, _ in help_lines(self)))
            return
        if not self.screen.query(CommandBar):
            self.notify("no command bar on this screen: ctrl+p has the same commands, or escape back to one that has it")
            return
        self.screen.query_one(CommandBar).open(hint(self))

    def on_command_bar_entered(self, event: CommandBar.Entered) -> None:
        """A `:` command typed into a screen's command bar."""
        self.run_command(event.text)

    def action_cycle_theme(self) -> None:
        names = sorted(self.nvcre_themes)
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else DEFAULT_THEME

    def run_command(self, text: str) -> None:
        """Run a `:` command (also used by the palette); one naming a certification or node this console does not
        show says so and stays where it is, rather than opening a screen with nothing on it."""
        missing = self._not_shown(text)
        if missing:
            self.notify(printable(missing, newlines=False), severity="warning", markup=False)  # the name as typed
            return
        run_colon_command(self, text)

    def _not_shown(self, text: str) -> str | None:
        """Why `:cert NAME` or `:node NAME` (when allowed here) names nothing the snapshot holds, else None."""
        name, _, argument = text.strip().lstrip(":").partition(" ")
        argument, snapshot = argument.strip(), self.snapshot
        if not argument or snapshot is None or name not in {command.name for command in allowed_commands(self)}:
            return None
        namespace = self.session.namespace if self.session is not None else "default"
        if name == BY_NAME["drilldown"].command and snapshot.certification(argument) is None:
            return f"no certification {argument} in namespace {namespace}: :certs lists them"
        if name == BY_NAME["node"].command and not self._node_known(snapshot, argument):
            return f"no node {argument}: :racks shows them all"
        return None

    def _node_known(self, snapshot: Snapshot, name: str) -> bool:
        """A Node of the cluster, or one gone since that a Job ran on or the history holds (its record is wanted)."""
        if any(node_name(node) == name for node in snapshot.nodes) or any(name in group_nodes(job) for job in snapshot.jobs):
            return True
        history = self.session.history if self.session is not None else None
        try:
            return bool(history is not None and history.node(name))
        except InputError:  # a damaged history: the node screen says so
            return True


def _title_piece(text: str, cut: TitleCut) -> Piece:
    """A part of the session's title as the header cuts it (NvcreApp.calm_badges)."""
    if cut is TitleCut.NEVER:
        return Piece(text)
    if cut is TitleCut.SHORTEN:
        return Piece(text, Cut.MIDDLE, least=NAME_LEAST, first=NAME_CUT)
    return Piece(text, Cut.MIDDLE, least=NAME_LEAST, first=NAME_CUT, floor=NAME_FLOOR, floor_first=NAME_LAST_CUT)


class QuitQuestion(ConfirmModal):
    """The question before quitting loses unsaved work or stops this console's engine (NvcreApp.request_quit)."""


def freeze_heap() -> None:
    """Leave what the console loaded (the fleet, the watch cache, the widgets) out of the cyclic garbage
    collector's full passes: on a 4,096-node fleet each pass over it blocks keys for 100-150 ms, about every
    4 s at 1,000 store events/s; afterwards a pass only walks what changed since (15-30 ms). Only for the
    process's one console (the `nvcre` command): objects alive now that later become cyclic garbage are never
    collected, which a test process creating many apps should not pay for."""
    gc.collect()
    gc.freeze()


def _running(snapshot: Snapshot) -> bool:
    """Whether a certification the snapshot holds is still running (its durations move with the clock)."""
    return any(not cond.is_terminal(cert) for cert in snapshot.certifications)
