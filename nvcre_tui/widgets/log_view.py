"""LogView: LogLines plus the search prompt, the save prompt and the status line (k9s's log keys).

Keys (k9s letters where the meaning matches): s follow, w wrap, t timestamps, / search, n/N next/previous
match, end follow from the end, ctrl+s save.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import check_writable
from nvcre_tui.engine.printable import printable
from nvcre_tui.paths import typed_path
from nvcre_tui.widgets.log_lines import DEFAULT_MAX_LINES, LogLines

__all__ = ["ConfirmOverwrite", "LogLines", "LogView", "SavePrompt"]


class _SearchInput(Input):
    """The `/` prompt: escape closes it without searching."""

    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    def action_close(self) -> None:
        self.remove_class("-open")
        self.post_message(LogView.SearchClosed())


class SavePrompt(ModalScreen[str | None]):
    """Asks where to save; dismisses with the path, or None on escape."""

    DEFAULT_CSS = """
    SavePrompt { align: center middle; }
    SavePrompt > Vertical { width: 70; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="log.save-cancel")]

    def __init__(self, default: str) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Save the buffered lines to (relative to the current directory):")
            yield Input(value=self.default, id="save-path")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        if not event.value.strip():  # enter on an empty path closed the prompt and saved nothing, unsaid
            self.notify("type a path to save to (escape cancels)", severity="warning", title="not saved")
            return
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmOverwrite(ModalScreen[bool]):
    """Asks before a save replaces an existing file: y overwrites, n or escape keeps it."""

    DEFAULT_CSS = """
    ConfirmOverwrite { align: center middle; }
    ConfirmOverwrite > Vertical { width: 70; height: auto; border: round $warning; background: $surface; padding: 0 1; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Overwrite", id="log.overwrite-yes"),
        Binding("n,escape", "answer(False)", "Keep", id="log.overwrite-no"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble(Text(printable(str(self.path), newlines=False), style="bold"), " exists. Overwrite it? (y / n)"))

    def action_answer(self, overwrite: bool) -> None:
        self.dismiss(overwrite)


def _policy_allows(widget: Widget, action: str) -> bool:
    """The app's read-only policy (apps without one, e.g. a test harness, allow everything)."""
    policy = getattr(widget.app, "policy", None)
    return policy is None or bool(policy.allows(action))


class LogView(Vertical):
    """A log pane: `LogLines`, the `/` search prompt and a status line."""

    DEFAULT_CSS = """
    LogView { height: 1fr; }
    LogView > #log-search { display: none; height: 1; border: none; padding: 0 1; }
    LogView > #log-search.-open { display: block; }
    LogView > #log-status { height: 1; background: $panel; padding: 0 1; }
    """
    HELP_NAME = "in the log view"  # how `?` says where its keys apply
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="log.search", tooltip="Search (regex); n/N next/previous"),
        Binding("ctrl+s", "save_log", "Save", id="log.save", tooltip="Save the buffered lines to a file"),
    ]

    class SearchClosed(Message):
        """The search prompt closed without a search."""

    def __init__(self, *, max_lines: int = DEFAULT_MAX_LINES, save_name: str = "log.txt", simulated: bool = False,
                 id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.save_name = save_name
        self.log_lines = LogLines(max_lines, simulated=simulated)  # simulated: its stamps are sim time (LogLines)

    def compose(self) -> ComposeResult:
        yield self.log_lines
        yield _SearchInput(placeholder="search: regex, case-insensitive · enter find · esc close", id="log-search")
        yield Static(self.log_lines.status(), id="log-status")

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append a batch of lines (see LogLines.append_lines)."""
        self.log_lines.append_lines(lines)

    def clear(self) -> None:
        self.log_lines.clear()

    def set_placeholder(self, text: str) -> None:
        """What the pane says while it has no line (see LogLines.set_placeholder)."""
        self.log_lines.set_placeholder(text)

    def save(self, path: Path | str) -> int:
        """Write the buffered lines to `path`; the number written. Raises OSError."""
        return self.log_lines.save(path)

    @on(LogLines.Changed)
    def _update_status(self) -> None:
        self.query_one("#log-status", Static).update(self.log_lines.status())

    def action_search(self) -> None:
        prompt = self.query_one("#log-search", Input)
        prompt.value = self.log_lines.search_pattern
        prompt.add_class("-open")
        prompt.focus()

    @on(Input.Submitted, "#log-search")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.remove_class("-open")
        lines = self.log_lines
        lines.focus()
        if event.value and event.value == lines.search_pattern and lines.match_count:
            lines.action_match(1)  # enter again on the same search: the next match
        elif not lines.search(event.value) and event.value:
            self.notify(f"no match for “{event.value}”", severity="warning", markup=False)

    @on(SearchClosed)
    def _search_closed(self) -> None:
        self.log_lines.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Saving writes a file: hidden and refused in read-only mode."""
        return _policy_allows(self, action) or False

    def action_save_log(self) -> None:
        if not _policy_allows(self, "save_log"):  # a direct call, past the hidden binding
            self.notify("read-only: saving the log is refused", severity="warning", title="not saved")
            return
        self.app.push_screen(SavePrompt(self.save_name), self._save_to)

    def _save_to(self, path: str | None) -> None:
        if path is None or not _policy_allows(self, "save_log"):
            return
        try:
            target = typed_path(path)  # `~nobody/x.log`: pathlib raised RuntimeError, which ended the console
            check_writable(path, stream=True)  # a folder, a read-only file: said now, not after "overwrite it?"
        except InputError as error:
            self.notify(printable(error.messages[0], newlines=False), severity="error", title="not saved", markup=False)
            return
        if target.exists():  # never replace a file (the state file, another log) without asking
            self.app.push_screen(ConfirmOverwrite(target), lambda yes: self._write(path) if yes else self._kept(path))
            return
        self._write(path)

    def _kept(self, path: str) -> None:
        self.notify(printable(f"kept {path}; not saved", newlines=False), markup=False)  # "n" said nothing

    def _write(self, path: str) -> None:
        try:
            count = self.save(path)
        except OSError as error:
            self.notify(printable(f"cannot save to {path}: {error.strerror or error}"), severity="error", title="not saved", markup=False)
            return
        self.notify(printable(f"saved {count:,} lines to {typed_path(path).resolve()}"), markup=False)
