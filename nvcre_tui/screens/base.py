"""What every console screen shares: it re-renders from the app's latest store snapshot, and its
bindings pass through the read-only policy.

`Console` is what a screen may use of the app. Screens name this protocol, never `NvcreApp`, so the
import graph runs one way (app -> commands -> screens -> widgets -> engine) with no circle."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen, Screen

from nvcre_tui.badges import Badge
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.protocol import NODE
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.confirm import ConfirmModal

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session
    from nvcre_tui.policy import Policy


def error_said(error: BaseException) -> str:
    """An exception from the runner or the cluster as one line: its first non-blank line, control characters
    neutralised. A Kubernetes API error's text is its status line, then its headers and body on many lines: a log's
    toast and placeholder showed all of them."""
    first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return printable(first, newlines=False)


# For screens without a command bar: `:` still says where the commands are (the app's action), but the footer does
# not offer a "Command" key that only says there is none here.
NO_COMMAND_BAR = Binding("colon", "app.command_bar", "Command", show=False)


class Console(Protocol):
    """The console state screens read (attributes down); they change it only through these methods."""

    policy: Policy
    session: Session | None
    snapshot: Snapshot | None
    live: bool
    wall: bool

    def now(self) -> datetime: ...

    def store_warning(self) -> str | None: ...

    def stall_warning(self) -> str | None: ...

    def calm_badges(self) -> list[Badge]: ...

    def times_simulated(self) -> bool: ...

    def stamped_now(self) -> datetime: ...

    async def submit(self, body: dict[str, Any]) -> bool: ...

    async def delete_certification(self, name: str, namespace: str, uid: str | None = None) -> bool: ...

    def asks_rights(self) -> bool: ...

    async def rbac_refuses(self, verb: str, doing: str, namespace: str, name: str | None = None) -> str | None: ...

    def run_command(self, text: str) -> None: ...


class NvcreScreen(Screen[None]):
    """A screen fed by `NvcreApp.snapshot`: override `show(snapshot)`.

    HELP_WIDGETS: widget classes whose key bindings the `?` screen lists with this screen's.
    """

    HELP_WIDGETS: tuple[type, ...] = ()

    @property
    def nvcre(self) -> Console:
        """The app, as the console it is."""
        return cast(Console, self.app)

    _covered_change = False  # a snapshot arrived while another screen covered this one
    # What the screen shows (a certification, a Workflow) was deleted, by another client or its own `x`: emptied, it
    # goes back to the screen it was opened from as soon as it is on top (leave_once_on_top).
    _gone = False
    deleting = False  # this screen's own deletion is under way (ask_to_delete): its certification going is no surprise

    def unsaved(self) -> str | None:
        """What quitting the console would lose on this screen, said for the question before it (None: nothing)."""
        return None

    def on_mount(self) -> None:
        self.watch(self.app, "snapshot", self._snapshot_changed, init=True)

    def _snapshot_changed(self, snapshot: Snapshot | None) -> None:
        if snapshot is None or not self.is_attached:
            return
        if not self._visible():  # covered (not merely behind a modal): no work until it is on top again
            self._covered_change = True
            return
        self._covered_change = False
        self.show(snapshot)

    def _visible(self) -> bool:
        """On top, or under modal screens only (they show it around them). Textual's `is_current` also
        counts the screen under an opaque one."""
        stack = self.app.screen_stack
        if self not in stack:
            return False
        return all(isinstance(screen, ModalScreen) for screen in stack[stack.index(self) + 1 :])

    def on_screen_resume(self) -> None:
        """Back on top: catch up with what changed while covered; leave if what it shows was deleted meanwhile."""
        if self._covered_change:
            self.refresh_now()
        if self._gone:
            self.leave_once_on_top()

    def leave_once_on_top(self) -> None:
        """Back to the screen this one was opened from, once this one is on top: under another screen it stays (emptied)
        until it is back on top (on_screen_resume). Never the last console screen."""
        stack = self.app.screen_stack
        if self.is_current and len(stack) > 2 and stack[-1] is self:
            self.app.pop_screen()

    def show(self, snapshot: Snapshot) -> None:
        """Render the screen from a snapshot (called on mount and on every change)."""

    def nodes_withheld(self) -> bool:
        """This user may not list Nodes (the session's cache went on without them): a screen that would show them says
        so (NODES_WITHHELD) rather than an empty fleet read as one."""
        session = self.nvcre.session
        return session is not None and NODE in session.cache.withheld

    def on_a_cluster(self) -> bool:
        """The session reads a cluster, not the simulated fleet (which always has Nodes)."""
        from nvcre_tui.engine.session import SimSession

        session = self.nvcre.session
        return session is not None and not isinstance(session, SimSession)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide bindings the policy refuses (read-only mode)."""
        return self.nvcre.policy.allows(action) or False

    def on_key(self, event: events.Key) -> None:
        """A key whose binding read-only mode hides did nothing at all (a review pressed c and x on the wall's console):
        it says why. Keys a focused widget takes (typing) never get here."""
        refused = [binding for binding in self._bindings.key_to_bindings.get(event.key, [])
                   if not self.nvcre.policy.allows(binding.action.removeprefix("app."))] if self.nvcre.policy.read_only else []
        if refused:
            self.notify(f"read-only: {refused[0].description or refused[0].action} is off (this console was started with --read-only)",
                        severity="warning", markup=False)

    def ask_to_delete(self, cert: dict[str, Any], deleted: Callable[[], object] | None = None) -> None:
        """Ask, then delete `cert` through the app (No is the default answer); `deleted` runs once it is gone."""
        if not self.nvcre.policy.allows("delete_certification"):  # a direct call, past the hidden binding
            self.notify("read-only: deleting a certification is refused", severity="warning", title="not deleted")
            return
        meta = cert["metadata"]
        name, namespace, uid = str(meta["name"]), str(meta.get("namespace") or "default"), str(meta.get("uid") or "") or None

        async def answered(yes: bool | None) -> None:  # the one asked about, by uid: not a namesake made meanwhile
            if not yes:
                return
            self.deleting = True  # while it runs, a screen that sees it go knows it was this one's doing
            try:
                done = await self.nvcre.delete_certification(name, namespace, uid)
            finally:
                self.deleting = False
            if done and deleted is not None:
                deleted()

        if not self.nvcre.asks_rights():  # the simulator: no RBAC to ask
            self.app.push_screen(ConfirmModal(deletion_question(cert), yes="Delete", no="Keep it"), answered)
            return

        async def asked() -> None:  # a user RBAC refuses is told so at once, not after a question whose Delete fails
            if (refused := await self.nvcre.rbac_refuses("delete", "deleting", namespace, name)) is not None:
                self.notify(refused, severity="error", title="not deleted", markup=False)
                return
            self.app.push_screen(ConfirmModal(deletion_question(cert), yes="Delete", no="Keep it"), answered)

        self.run_worker(asked(), group="ask-delete", exclusive=True, exit_on_error=False)

    def refresh_now(self) -> Any:
        """Re-render from the current snapshot."""
        self._covered_change = False
        if self.nvcre.snapshot is not None:
            self.show(self.nvcre.snapshot)


def deletion_question(cert: dict[str, Any]) -> str:
    """What deleting `cert` does, asked before it is done: a running one's runs stop mid-way."""
    name, namespace = cert["metadata"]["name"], cert["metadata"].get("namespace") or "default"
    state = "still running: its runs stop" if not cond.is_terminal(cert) else "finished: archived first when the history is on"
    return f"Delete certification {name} in {namespace} ({state})? Its Workflows, Jobs and runs go with it."
