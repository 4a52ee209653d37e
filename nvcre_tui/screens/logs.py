"""Logs of one Job: its WorkloadRun's output in a LogView, with the run's phase and nodes above it.

The session's LogSource is the log source (`app.session.logs.lines(run)`). While the run is unfinished the screen
polls again on every snapshot change, and once a second when the app runs live. Only the new tail is
appended: a LogCursor finds the last lines shown in each answer, so following goes on when the source's
answer stops growing (a pod log keeps a bounded head and tail); the pane's own ring bounds what is shown.
One read at a time: changes that arrive during a read ask for one more read after it, never cancel it
(a busy cluster changes the snapshot many times a second). A new run under the same name (another uid,
or an answer that shares nothing with the last) starts the pane over. An empty pane says why it is empty
(no run yet, the run not started and why, as its Job says it, nothing printed yet, or a finished run that printed
nothing). A failed run whose pods are gone (a cluster deletes them to free the GPUs) shows the tail its Job kept.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Footer, Header, Static

from nvcre_tui.engine.api.bodies import meta_of, run_spec, run_status
from nvcre_tui.engine.api.vocabulary import FAILED, PHASE_GLYPHS, SUCCEEDED, VALIDATION_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.report.logtail import GAP_LINE, LogCursor, kept_tail, played_elsewhere, simulated_tail
from nvcre_tui.engine.report.runtime import run_runtime
from nvcre_tui.engine.grants import rbac_refused, with_grant
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.session import plays_the_fleet
from nvcre_tui.engine.views.waiting import no_output
from nvcre_tui.screens.base import NO_COMMAND_BAR, NvcreScreen, error_said
from nvcre_tui.widgets.log_view import LogLines, LogView

Obj = dict[str, Any]
FINISHED = (SUCCEEDED, FAILED)
LIVE_POLL_SECONDS = 1.0
WILL_APPEAR = "Its output will appear here as it comes."
WHY_WIDTH = 100  # what the reason a run's pods do not run is wrapped to before the pane has a width


class LogsScreen(NvcreScreen):
    """The launcher log of one Job's WorkloadRun."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="logs.back"), NO_COMMAND_BAR]
    HELP_WIDGETS = (LogView, LogLines)
    DEFAULT_CSS = """
    LogsScreen #logs-header { height: auto; padding: 0 1; border-bottom: solid $panel; }
    """

    def __init__(self, job_name: str, *, max_lines: int | None = None) -> None:
        super().__init__()
        self.job_name = job_name
        self._max_lines = max_lines
        self._run: Obj | None = None
        self._job: Obj | None = None
        self._run_uid: str | None = None
        self._cursor = LogCursor()  # which lines of the source's answer are new
        self._complete = False  # the finished run's whole log is shown: nothing more will come
        self._answered = False  # the log source has answered for this run (an empty answer: nothing printed yet)
        self._poll: Timer | None = None
        self._reading = False  # a read is in flight
        self._again = False    # something changed during it: read once more after it
        self._refused: str | None = None  # why the last read failed, as notified (said once)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Job {printable(self.job_name, newlines=False)}"), id="logs-header")
        options = {} if self._max_lines is None else {"max_lines": self._max_lines}
        yield LogView(save_name=f"{self.job_name}.log", simulated=self.nvcre.times_simulated(), id="log", **options)
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        self.query_one(LogView).log_lines.focus()
        if self.nvcre.live:
            self._poll = self.set_interval(LIVE_POLL_SECONDS, self._poll_tick, name="logs-poll")
        super().on_mount()

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    def show(self, snapshot: Snapshot) -> None:
        run = snapshot.run_of(self.job_name)
        self._run = run
        self._job = next((j for j in snapshot.jobs if j["metadata"]["name"] == self.job_name), None)
        self.query_one("#logs-header", Static).update(self._header(snapshot, run))
        uid = meta_of(run or {}).get("uid")
        if run is not None and uid != self._run_uid:  # another run under the same name: its log starts over
            if self._run_uid is not None:
                self.view.clear()
                self._cursor.reset()
                self._complete = False
                self._answered = False
                if self._poll is not None:
                    self._poll.resume()
            self._run_uid = uid
        self.view.set_placeholder(self._empty_text(snapshot))
        if run is not None and not self._complete:
            self._request_read()

    @property
    def _fleet_here(self) -> bool:
        """This console plays the simulated fleet: a simulated run with no line has printed none yet, not lost it."""
        session = self.nvcre.session
        return session is None or plays_the_fleet(session)

    def _empty_text(self, snapshot: Snapshot | None = None) -> str:
        """What the pane says while it has no line: why there is no output, and whether more will come."""
        run = self._run
        if run is None:
            known = snapshot is None or any(j["metadata"]["name"] == self.job_name for j in snapshot.jobs)
            if not known:
                return "No output: there is no such job."
            ended = self._job is not None and cond.is_terminal(self._job)  # no run will come: nothing will appear
            return no_output(self._job, None, self.nvcre.now(), fleet_here=self._fleet_here)[0] + ("" if ended else f"\n{WILL_APPEAR}")
        phase = run_status(run).get("phase") or "Pending"
        sentence, why = no_output(self._job, run, self.nvcre.now(), fleet_here=self._fleet_here)
        if phase in FINISHED:
            # On a cluster a failed run's pods are deleted (to free the GPUs): nothing to read may mean either.
            return sentence if self._complete else "Reading the log…"
        if phase == "Running":
            # A simulated run this console does not play: its output never comes here (the sentence says where it does)
            return (sentence if played_elsewhere(run, fleet_here=self._fleet_here) else f"{sentence}\n{WILL_APPEAR}") if self._answered else "Reading the log…"
        # Why, as the Job says it: "have not started" alone left the operator to find it two levels down. Wrapped to the
        # pane (its rows are cut at its edge, and the reason comes last).
        width = self.view.log_lines.size.width or WHY_WIDTH
        said = "".join(f"{row}\n" for row in textwrap.wrap(f"Why: {printable(why, newlines=False)}", max(width - 1, 20))) if why else ""
        return f"{sentence}\n{said}{WILL_APPEAR}"

    def _poll_tick(self) -> None:
        if self._run is not None and not self._complete:
            self._request_read()

    def _request_read(self) -> None:
        """Read now, or once more after the read in flight (coalesced: never a queue, never a cancel)."""
        if self._reading:
            self._again = True
            return
        self._reading = True
        self._read_loop()

    def _header(self, snapshot: Snapshot, run: Obj | None) -> Text:
        text = Text.assemble(("Job ", "bold"), printable(self.job_name, newlines=False))
        job = next((j for j in snapshot.jobs if j["metadata"]["name"] == self.job_name), None)
        if job is not None and cond.is_true(job, VALIDATION_FAILED):
            # The run ended well and its numbers missed a threshold: the Job failed though its run says Succeeded.
            text.append(" ✗ ValidationFailed", style="bold")
        if run is None:
            known = any(j["metadata"]["name"] == self.job_name for j in snapshot.jobs)
            text.append("   no WorkloadRun yet" if known else "   job not found", style="italic")
            return text
        status = run_status(run)
        phase = status.get("phase") or "Pending"
        text.append("   Run ", style="bold")
        text.append(printable(f"{PHASE_GLYPHS.get(phase, '·')} {phase}", newlines=False))
        if status.get("reason") and phase in FINISHED:
            # a run that never started a container (not created, refused, stopped before its pods ran) has no exit code
            code = f", exit {status['exitCode']}" if status.get("exitCode") is not None else ""
            text.append(printable(f" ({status['reason']}{code})", newlines=False))
        if job is not None:  # the one rule the drill-down's Job detail says it by (report.runtime)
            text.append("   Runtime ", style="bold")
            text.append(run_runtime(job, self.nvcre.now(), self.nvcre.stamped_now()))
        nodes = status.get("nodes") or (run_spec(run).get("target") or {}).get("nodeNames") or []
        text.append("   Nodes ", style="bold")
        text.append(printable(", ".join(map(str, nodes)) or "-", newlines=False))
        return text

    @work(group="logs", exit_on_error=False)
    async def _read_loop(self) -> None:
        """Read until no change arrived meanwhile."""
        try:
            while True:
                self._again = False
                if self._run is None or self._complete:
                    return
                await self._load(self._run)
                if not self._again:
                    return
        finally:
            self._reading = False

    async def _load(self, run: Obj) -> None:
        """Fetch the run's log and append what is new."""
        session = self.nvcre.session
        assert session is not None
        uid = meta_of(run).get("uid")
        if played_elsewhere(run, fleet_here=self._fleet_here):
            # The simulated fleet played it (--sim-runner, elsewhere): no pod ever held its output, so none is asked
            # for. A viewer that may not list pods was told they are forbidden, and which role to bind, for a log no
            # grant gives; the tail its Job kept is shown as the fleet's, never as a pod's that is gone.
            finished = run_status(run).get("phase") in FINISHED
            if finished and not self._complete:
                self.view.append_lines(simulated_tail(self._job))
            self._answered = True  # running too: nothing to read here, which the placeholder says (not "Reading the log…")
            self._complete = finished
            if finished and self._poll is not None:
                self._poll.pause()
            self.view.set_placeholder(self._empty_text())
            return
        try:
            lines = await session.logs.lines(run)
        except Exception as error:  # noqa: BLE001 - any runner failure is shown, never a traceback
            said = error_said(error)  # one line: an API error's headers and body came with it
            rbac = rbac_refused(error)
            said = with_grant(said, error)  # RBAC: which role grants it, as `certification logs` says
            if said != self._refused:  # once, not again on every read of a pane that polls
                self._refused = said
                self.notify(printable(f"cannot read the logs of {self.job_name}: {said}", newlines=False), severity="error", title="logs", markup=False)
            if uid == self._run_uid:
                # A finished run's tail its Job kept is readable without pods: shown, and why it is what is shown.
                tail = kept_tail(self._job, why="cannot read the run's pods (forbidden)" if rbac else "cannot read the run's pods") \
                    if run_status(run).get("phase") in FINISHED else []
                if tail and not self._answered:
                    self.view.append_lines(tail)
                    self._answered = self._complete = True
                    if self._poll is not None:
                        self._poll.pause()
                if not tail:
                    self.view.set_placeholder(f"No output: cannot read the log: {said}")
            return
        if uid != self._run_uid:
            return  # another run took the pane meanwhile: this answer is stale
        if not lines and run_status(run).get("phase") in FINISHED:
            lines = kept_tail(self._job)
        view = self.view
        fresh = self._cursor.advance(lines)
        if fresh.restart:  # an answer that shares nothing with the last: another log
            view.clear()
        view.append_lines([GAP_LINE, *fresh.lines] if fresh.gap else fresh.lines)
        self._answered = True
        if run_status(run).get("phase") in FINISHED:
            self._complete = True
            if self._poll is not None:
                self._poll.pause()
        view.set_placeholder(self._empty_text())
