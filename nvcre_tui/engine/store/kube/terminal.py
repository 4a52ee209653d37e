"""Who holds the terminal: a full-screen console draws on it, so nothing else may prompt there.

The console says it holds the terminal while it runs; kubeconfig exec credential plugins (client.py beside it) run then
as without one: told they are not interactive, given no stdin, their stderr read rather than written over the screen,
bounded in time. A plugin that needs the user (a browser login, an MFA code) fails in one line telling the user to
refresh the credentials in a shell, as kubectl with the same kubeconfig would there. Textual-free: the console calls in.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["hold_terminal", "terminal_holder"]

_holders: list[str] = []


def hold_terminal(by: str) -> Callable[[], None]:
    """`by` (e.g. "the console") holds the terminal until the returned release is called (once; later calls do nothing)."""
    _holders.append(by)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            _holders.remove(by)

    return release


def terminal_holder() -> str | None:
    """What holds the terminal now, or None (a command's own: a plugin may prompt there)."""
    return _holders[-1] if _holders else None
