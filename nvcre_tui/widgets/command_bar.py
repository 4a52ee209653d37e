"""The `:` prompt (k9s): hidden until opened, runs the command on enter, closes on escape."""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.widgets import Input


class CommandBar(Input):
    """A one-line command prompt docked at the bottom of a screen."""

    DEFAULT_CSS = """
    CommandBar { dock: bottom; display: none; border: none; height: 1; padding: 0 1; background: $panel; }
    CommandBar.-open { display: block; }
    """
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    def __init__(self) -> None:
        super().__init__(placeholder=":certs  :racks  :node NAME  :wall  :compose  :theme NAME  :q", id="command-bar")

    def open(self) -> None:
        """Show and focus the prompt."""
        self.value = ""
        self.add_class("-open")
        self.focus()

    def action_close(self) -> None:
        """Hide without running anything."""
        self.remove_class("-open")
        self.screen.focus_next()

    @on(Input.Submitted)
    def _run(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        self.action_close()
        if text.strip():
            self.app.run_command(text)  # type: ignore[attr-defined]
