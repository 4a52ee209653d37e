"""The `:` prompt (k9s): hidden until opened, posts the command on enter (the app runs it), closes on escape."""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input


class CommandBar(Input):
    """A one-line command prompt docked at the bottom of a screen."""

    DEFAULT_CSS = """
    CommandBar { dock: bottom; display: none; border: none; height: 1; margin-bottom: 1; padding: 0 1; background: $panel; }  /* above the footer */
    CommandBar.-open { display: block; }
    """
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    class Entered(Message):
        """A command was typed: `text` as entered (e.g. "node gpu-node-07")."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self) -> None:
        # Compact: Input's `:focus` rule (a tall border) outranks the `CommandBar` rule, and in one line high the
        # focused bar showed only its border's top edge: the hint and what was typed were out of sight.
        super().__init__(placeholder="a command, e.g. certs", id="command-bar", compact=True)
        self._before: Widget | None = None  # what had the focus when the bar opened: it gets it back

    def open(self, hint: str | None = None) -> None:
        """Show and focus the prompt; `hint` (the commands on offer) becomes its placeholder."""
        if hint:
            self.placeholder = hint
        self.value = ""
        self.add_class("-open")
        focused = self.screen.focused
        if focused is not self:  # `:` again in an open bar keeps what it goes back to
            self._before = focused
        self.focus()

    def action_close(self) -> None:
        """Hide without running anything; the focus goes back where it was. It went to the screen's first widget that
        takes focus: on the map the topology key's Select, where the arrows and enter no longer moved the map's cursor
        or opened a node; on the dashboard an open filter, which took the next keys as text."""
        self.remove_class("-open")
        before, self._before = self._before, None
        if before is not None and before.is_attached and before.focusable:
            before.focus()
        else:
            self.screen.focus_next()

    @on(Input.Submitted)
    def _run(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        self.action_close()
        if text.strip():
            self.post_message(self.Entered(text))
