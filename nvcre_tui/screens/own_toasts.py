"""Notifications that belong to one screen and leave with it.

Textual's notifications are the app's: a toast raised on a screen stays up, on whatever screen comes next, for the
rest of its timeout. A screen whose notifications are only about itself (compose's "default certification", "2
problems") mixes this in: what it raised and is still up is taken down when the screen is removed. Notifications the
app raises meanwhile (compose's submit: "certification ... submitted") are not the screen's and stay."""

from __future__ import annotations

from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import Screen


class OwnToasts(Screen[None]):
    """A screen whose notifications go when it is removed (popped, switched away from)."""

    _own_toasts: list[Notification] = []  # replaced, never changed in place: one list per screen once it notifies

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """As Textual's, and remembered, to be taken down with the screen."""
        notification = Notification(message, title, severity, self.app.NOTIFICATION_TIMEOUT if timeout is None else timeout, markup=markup)
        self._own_toasts = [*(kept for kept in self._own_toasts if not kept.has_expired), notification]
        self.app.post_message(Notify(notification))

    def on_unmount(self) -> None:
        shown = self.app._notifications  # Textual has no public way to take one notification down (a toast's click uses this)
        gone = [notification for notification in self._own_toasts if notification in shown]
        for notification in gone:
            self.app._unnotify(notification, refresh=False)
        self._own_toasts = []
        if gone:
            self.app._refresh_notifications()
