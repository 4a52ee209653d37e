"""Logs of one Job: its WorkloadRun's output in a LogView, with the run's phase and nodes above it.

The session's LogSource is the log source (`app.session.logs.lines(run)`). While the run is unfinished the screen
polls again on every snapshot change, and once a second when the app runs live. Only the new tail is
appended. A new run under the same name (another uid, or a log that got shorter) starts the pane over.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Footer, Header, Static

from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.views import Snapshot
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.log_view import LogLines, LogView

Obj = dict[str, Any]
FINISHED = ("Succeeded", "Failed")
LIVE_POLL_SECONDS = 1.0
PHASE_MARK = {"Succeeded": "✓", "Failed": "✗", "Running": "⋯", "Scheduling": "·"}


class LogsScreen(NvcreScreen):
    """The launcher log of one Job's WorkloadRun."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="logs.back")]
    HELP_WIDGETS = (LogView, LogLines)
    DEFAULT_CSS = """
    LogsScreen #logs-header { height: auto; padding: 0 1; border-bottom: solid $panel; }
    """

    def __init__(self, job_name: str, *, max_lines: int | None = None) -> None:
        super().__init__()
        self.job_name = job_name
        self._max_lines = max_lines
        self._run: Obj | None = None
        self._run_uid: str | None = None
        self._seen = 0  # lines of the run's log already appended
        self._complete = False  # the finished run's whole log is shown: nothing more will come
        self._poll: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Job {printable(self.job_name, newlines=False)}"), id="logs-header")
        options = {} if self._max_lines is None else {"max_lines": self._max_lines}
        yield LogView(save_name=f"{self.job_name}.log", id="log", **options)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"logs · {self.job_name}"
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
        self.query_one("#logs-header", Static).update(self._header(snapshot, run))
        uid = (run or {}).get("metadata", {}).get("uid")
        if run is not None and uid != self._run_uid:  # another run under the same name: its log starts over
            if self._run_uid is not None:
                self.view.clear()
                self._seen, self._complete = 0, False
                if self._poll is not None:
                    self._poll.resume()
            self._run_uid = uid
        if run is not None and not self._complete:
            self._load(run)

    def _poll_tick(self) -> None:
        if self._run is not None and not self._complete:
            self._load(self._run)

    def _header(self, snapshot: Snapshot, run: Obj | None) -> Text:
        text = Text.assemble(("Job ", "bold"), printable(self.job_name, newlines=False))
        if run is None:
            known = any(j["metadata"]["name"] == self.job_name for j in snapshot.jobs)
            text.append("   no WorkloadRun yet" if known else "   job not found", style="italic")
            return text
        status = run.get("status") or {}
        phase = status.get("phase") or "Pending"
        text.append("   Run ", style="bold")
        text.append(printable(f"{PHASE_MARK.get(phase, '·')} {phase}", newlines=False))
        if status.get("reason") and phase in FINISHED:
            text.append(printable(f" ({status['reason']}, exit {status.get('exitCode', '-')})", newlines=False))
        nodes = status.get("nodes") or (run.get("spec", {}).get("target") or {}).get("nodeNames") or []
        text.append("   Nodes ", style="bold")
        text.append(printable(", ".join(map(str, nodes)) or "-", newlines=False))
        return text

    @work(exclusive=True, group="logs", exit_on_error=False)
    async def _load(self, run: Obj) -> None:
        """Fetch the run's log and append what is new (the worker for the latest call wins)."""
        session = self.nvcre.session
        assert session is not None
        try:
            lines = await session.logs.lines(run)
        except Exception as error:  # noqa: BLE001 - any runner failure is shown, never a traceback
            self.notify(printable(f"cannot read the logs of {self.job_name}: {error}"), severity="error", title="logs", markup=False)
            return
        view = self.view
        if len(lines) < self._seen:  # a new run under the same name: start over
            view.clear()
            self._seen = 0
        view.append_lines(lines[self._seen :])
        self._seen = len(lines)
        if (run.get("status") or {}).get("phase") in FINISHED:
            self._complete = True
            if self._poll is not None:
                self._poll.pause()
