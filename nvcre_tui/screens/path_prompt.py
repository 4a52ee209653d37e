"""A small modal asking for a file path, for the compose screen's load and save. The work itself is a
callable handed in; its InputError messages are shown in the modal, which stays open until it succeeds
or the user cancels. For a save the callable only checks the path: whether to replace an existing file
is asked afterwards (screens/confirm.py), and the write happens only then."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import check_writable, write_atomically
from nvcre_tui.engine.printable import printable
from nvcre_tui.paths import typed_path

Result = TypeVar("Result")
SHOWN_PROBLEMS = 3  # a file's problems the modal lists, one line each; the rest are counted


def problems_said(messages: list[str], path: str) -> str:
    """A file's problems as the modal says them: the first SHOWN_PROBLEMS, each on one line (control characters and
    line breaks neutralised: a path or a key is the user's text), then how many more and where to read them all. Every
    one of them, a line each, pushed the modal's buttons off an 80x24 screen (a file that is no Certification at all
    has one "unknown field" per line)."""
    lines = [printable(message, newlines=False) for message in messages[:SHOWN_PROBLEMS]]
    if len(messages) > SHOWN_PROBLEMS:
        lines.append(printable(f"… and {len(messages) - SHOWN_PROBLEMS} more (`nvcre certification render {path}` lists them all)", newlines=False))
    return "\n".join(lines)


def save_target(path: str) -> str:
    """`path` when a file can be written there (checked in the modal, so its errors show there); InputError otherwise."""
    check_writable(path, stream=True)
    return path


def write_file(path: str, text: str) -> None:
    """Write atomically: a failed write leaves an existing file whole. InputError names the path."""
    write_atomically(path, text)


class PathModal(ModalScreen[Result | None], Generic[Result]):
    """Ask for a path and run `act(path)`; dismiss with its result, or None on cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="path.cancel")]
    DEFAULT_CSS = """
    PathModal { align: center middle; }
    PathModal > Vertical { width: 80; height: auto; border: thick $primary; background: $surface; padding: 1 2; }
    PathModal Input { margin: 1 0; }
    PathModal #path-error { color: $error; height: auto; }
    PathModal Horizontal { height: auto; align-horizontal: right; }
    PathModal Button { margin: 0 0 0 1; }
    """

    def __init__(self, title: str, verb: str, act: Callable[[str], Result], path: str = "") -> None:
        super().__init__()
        self.title_text, self.verb, self.act, self.initial = title, verb, act, path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="panel-title")
            yield Input(self.initial, placeholder="path to a Certification YAML file", id="path")
            yield Static(id="path-error", markup=False)
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button(self.verb, variant="primary", id="go")

    @on(Input.Submitted, "#path")
    @on(Button.Pressed, "#go")
    def go(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        error = self.query_one("#path-error", Static)
        if not path:
            error.update("type a path")
            return
        try:
            typed_path(path)  # `~nobody/x`: said here (the act's own expanduser raised RuntimeError and ended the console)
            result = self.act(path)
        except InputError as failure:
            error.update(problems_said(failure.messages, path))
            return
        self.dismiss(result)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
