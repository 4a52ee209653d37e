"""A yes/no question before something that cannot be undone (overwriting a file, discarding a form).

The safe answer is the default: "No" has the focus, so enter keeps things as they are; y answers yes,
n or escape no."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from nvcre_tui.engine.printable import printable


class ConfirmModal(ModalScreen[bool]):
    """Dismisses with True only on an explicit yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical { width: 72; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmModal #question { width: 100%; }  /* wraps a long question (a path, what a deletion takes) instead of cutting it */
    ConfirmModal Horizontal { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    ConfirmModal Button { margin: 0 0 0 1; }
    """

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            # The question may carry a user-typed path: shown as plain text, control characters neutralised.
            yield Label(Text(printable(self.question, newlines=False)), id="question")
            with Horizontal():
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button(f"{self.no} (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")
