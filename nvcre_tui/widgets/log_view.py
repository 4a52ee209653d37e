"""LogView: LogLines plus the search prompt, the save prompt and the status line (k9s's log keys).

Keys (k9s letters where the meaning matches): s follow, w wrap, t timestamps, / search, n/N next/previous
match, end follow from the end, ctrl+s save.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from nvcre_tui.widgets.log_lines import DEFAULT_MAX_LINES, LogLines

__all__ = ["LogLines", "LogView", "SavePrompt"]


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
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LogView(Vertical):
    """A log pane: `LogLines`, the `/` search prompt and a status line."""

    DEFAULT_CSS = """
    LogView { height: 1fr; }
    LogView > #log-search { display: none; height: 1; border: none; padding: 0 1; }
    LogView > #log-search.-open { display: block; }
    LogView > #log-status { height: 1; background: $panel; padding: 0 1; }
    """
    BINDINGS: list[BindingType] = [
        Binding("slash", "search", "Search", id="log.search", tooltip="Search (regex); n/N next/previous"),
        Binding("ctrl+s", "save", "Save", id="log.save", tooltip="Save the buffered lines to a file"),
    ]

    class SearchClosed(Message):
        """The search prompt closed without a search."""

    def __init__(self, *, max_lines: int = DEFAULT_MAX_LINES, save_name: str = "log.txt", id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.save_name = save_name
        self.log_lines = LogLines(max_lines)

    def compose(self) -> ComposeResult:
        yield self.log_lines
        yield _SearchInput(placeholder="search: regex, case-insensitive · enter find · esc close", id="log-search")
        yield Static(self.log_lines.status(), id="log-status")

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append a batch of lines (see LogLines.append_lines)."""
        self.log_lines.append_lines(lines)

    def clear(self) -> None:
        self.log_lines.clear()

    def save(self, path: Path | str) -> int:
        """Write the buffered lines to `path`; the number written. Raises OSError."""
        return self.log_lines.save(path)

    @on(LogLines.Changed)
    def _update_status(self) -> None:
        self.query_one("#log-status", Static).update(self.log_lines.status())

    def action_search(self) -> None:
        prompt = self.query_one("#log-search", Input)
        prompt.value = self.log_lines.query
        prompt.add_class("-open")
        prompt.focus()

    @on(Input.Submitted, "#log-search")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.remove_class("-open")
        lines = self.log_lines
        lines.focus()
        if event.value and event.value == lines.query and lines.match_count:
            lines.action_match(1)  # enter again on the same search: the next match
        elif not lines.search(event.value) and event.value:
            self.notify(f"no match for “{event.value}”", severity="warning")

    @on(SearchClosed)
    def _search_closed(self) -> None:
        self.log_lines.focus()

    def action_save(self) -> None:
        self.app.push_screen(SavePrompt(self.save_name), self._save_to)

    def _save_to(self, path: str | None) -> None:
        if path is None:
            return
        try:
            count = self.save(path)
        except OSError as error:
            self.notify(f"cannot save to {path}: {error.strerror or error}", severity="error", title="not saved")
            return
        self.notify(f"saved {count:,} lines to {Path(path).expanduser().resolve()}")
