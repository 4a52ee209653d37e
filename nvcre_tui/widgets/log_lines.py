"""LogLines: the Line-API ScrollView of a very long log (toolong's LogLines shape).

Lines live in a ring buffer (a deque with maxlen); lines pushed out are counted and shown, never lost
silently. Only visible rows are rendered, and rendered rows are cached in an LRU keyed by (line number,
width, wrap); line numbers are absolute, so eviction never invalidates the cache. Wrapping keeps a prefix
sum of rows per line, so finding the line under a screen row is a bisect, never a walk over the log.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from nvcre_tui.badges import SIM_TIME_SAID
from nvcre_tui.engine.outfiles import replace_file
from nvcre_tui.engine.parsers.base import strip_kubelet_prefix
from nvcre_tui.engine.printable import printable

DEFAULT_MAX_LINES = 200_000
CACHED_LINES = 2048  # rendered lines kept: a few screens in either direction


class LogLines(ScrollView, can_focus=True):
    """The lines themselves: ring buffer, follow/wrap/timestamps, search, rendering."""

    COMPONENT_CLASSES = {"log-lines--match", "log-lines--match-current"}
    DEFAULT_CSS = """
    LogLines { height: 1fr; background: $surface; }
    LogLines > .log-lines--match { text-style: reverse; }
    LogLines > .log-lines--match-current { text-style: reverse bold underline; color: $accent; }
    """
    HELP_NAME = "in the log"  # how `?` says where its keys apply
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "toggle_follow", "Follow", id="log.follow", tooltip="Keep the end in view (pauses when you scroll up)"),
        Binding("w", "toggle_wrap", "Wrap", id="log.wrap", tooltip="Wrap long lines"),
        Binding("t", "toggle_timestamps", "Time", id="log.timestamps", tooltip="Show kubelet timestamps"),
        Binding("n", "match(1)", "Next", show=False, id="log.next", tooltip="Next match"),
        Binding("N", "match(-1)", "Previous", show=False, id="log.previous", tooltip="Previous match"),
        Binding("end", "follow_end", "End", show=False, id="log.end", tooltip="Jump to the end and follow"),
    ]

    follow: reactive[bool] = reactive(True, init=False)
    wrap: reactive[bool] = reactive(False, init=False)
    timestamps: reactive[bool] = reactive(False, init=False)

    class Changed(Message):
        """Line count, drops, a toggle or the search changed (status lines listen); bursts coalesce."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogLines.Changed)

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, *, simulated: bool = False, id: str | None = None) -> None:  # noqa: A002
        if max_lines < 1:
            raise ValueError(f"LogLines: max_lines must be at least 1, got {max_lines}")
        super().__init__(id=id)
        # The stamps are a simulated clock's (the console plays the fleet): `t` says them as sim time, each line's time
        # of day, the date left out while it is the log's first day (_day), as the detail pane's span does; a
        # simulated fleet's date read as a real one.
        self.simulated = simulated
        self._day: str | None = None  # the date of the first stamped line since the last clear (simulated only)
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._widths: deque[int] = deque(maxlen=max_lines)  # cells of each displayed line
        self._total = 0  # lines ever appended: absolute number of the next line
        self._max_width = 0
        # Wrap mode only: _starts[k] is the first screen row of line _starts_first + k; one extra trailing total.
        self._starts: list[int] | None = None
        self._starts_first = 0
        self._wrap_width = 0
        self._cache: LRUCache[tuple[int, int, bool], tuple[Strip, ...]] = LRUCache(CACHED_LINES)
        self._pattern: re.Pattern[str] | None = None
        self._query = ""
        self._matches: list[int] = []  # absolute numbers of matching lines, ascending
        self._live_from = 0  # index in _matches of the first match still buffered
        self._current: int | None = None
        self._styles: tuple[Style, Style, Style] | None = None  # base, match, current match
        self._placeholder: tuple[str, ...] = ()  # shown while there is no line: why, and what to expect

    # ---- what callers read ---------------------------------------------------------------------------

    @property
    def lines(self) -> Sequence[str]:
        """The buffered lines, oldest first (read only)."""
        return self._lines

    @property
    def line_count(self) -> int:
        return len(self._lines)

    @property
    def dropped(self) -> int:
        """Lines pushed out of the ring buffer."""
        return self._total - len(self._lines)

    @property
    def search_pattern(self) -> str:
        """The search in effect ("" when none); not `query`, which is Textual's DOM query."""
        return self._query

    @property
    def match_count(self) -> int:
        """Buffered lines matching the search."""
        self._prune_matches()
        return len(self._matches) - self._live_from

    @property
    def match_position(self) -> int:
        """1-based position of the current match among the matches (0: none)."""
        self._prune_matches()
        if self._current is None:
            return 0
        return bisect_left(self._matches, self._current, self._live_from) - self._live_from + 1

    @property
    def current_line(self) -> int | None:
        """Buffer index of the current match (None: none)."""
        return None if self._current is None else self._current - self.dropped

    def status(self) -> Text:
        """`N lines · D dropped · follow · wrap · time · match i/N`: a glyph with every word, never colour alone."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{self.line_count:,} lines")
        text.append(f" · {self.dropped:,} dropped", style="bold" if self.dropped else "")
        for name, on_ in (("follow", self.follow), ("wrap", self.wrap), (SIM_TIME_SAID if self.simulated else "time", self.timestamps)):
            text.append(f" · {'●' if on_ else '○'} {name} {'on' if on_ else 'off'}")
        if self._query:
            text.append(f" · match {self.match_position}/{self.match_count} “{self._query}”")
        return text

    @property
    def placeholder(self) -> str:
        """What the empty pane says instead of nothing ("" when it says nothing)."""
        return "\n".join(self._placeholder)

    def set_placeholder(self, text: str) -> None:
        """Say `text` (one row per line) while no line is buffered; lines replace it as they come."""
        rows = tuple(printable(row, newlines=False) for row in text.splitlines())
        if rows != self._placeholder:
            self._placeholder = rows
            self.refresh()

    # ---- data in -------------------------------------------------------------------------------------

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append a batch (text with newlines is split): O(batch), one refresh, one Changed message."""
        batch = _split(lines)
        if not batch:
            return
        maxlen = self._lines.maxlen or len(batch)
        if len(batch) > maxlen:  # lines that would be pushed out at once are only counted
            self._total += len(batch) - maxlen
            batch = batch[-maxlen:]
            self._starts = None
        evicted = max(0, len(self._lines) + len(batch) - maxlen)
        evicted_rows = self._rows_before(self.dropped + evicted) - self._rows_before(self.dropped) if self._starts else evicted
        if self.simulated and self._day is None:
            self._day = next((line[:10] for line in batch if strip_kubelet_prefix(line) != line), None)
        stamps, day = self.timestamps, self._day
        shown = [_display(line, stamps, day) for line in batch]
        widths = [self._cells(text) for text in shown]
        first = self._total
        self._lines.extend(batch)
        self._widths.extend(widths)
        self._total += len(batch)
        self._max_width = max(self._max_width, *widths)
        if self._starts is not None:
            self._starts.extend(accumulate((self._rows_of_width(w) for w in widths), initial=self._starts.pop()))
            self._compact_starts()
        elif self.wrap:
            self._build_starts()
        if self._pattern is not None:
            self._matches.extend(first + i for i, text in enumerate(shown) if self._pattern.search(text))
        self._update_virtual_size()
        if self.follow:
            self._scroll_to_end()
        elif evicted_rows and self.dropped:  # keep the same lines in view while paused
            self.scroll_to(y=max(0, self.scroll_offset.y - evicted_rows), animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.Changed())

    def clear(self) -> None:
        """Forget every line (the dropped count restarts too)."""
        self._lines.clear()
        self._widths.clear()
        self._total = self._max_width = 0
        self._day = None
        self._starts = None
        if self.wrap:
            self._build_starts()
        self._matches, self._live_from, self._current = [], 0, None
        self._cache.clear()
        self._update_virtual_size()
        self.refresh()
        self.post_message(self.Changed())

    def save(self, path: Path | str) -> int:
        """Write every buffered line (raw, timestamps included) to `path`; the number written. Raises OSError."""
        # Atomic: a failed save (disk full, read-only folder) leaves an existing file as it was.
        replace_file(path, "".join(f"{line}\n" for line in self._lines), make_parents=False)
        return len(self._lines)

    # ---- search --------------------------------------------------------------------------------------

    def search(self, query: str) -> int:
        """Mark lines matching `query` and jump to the first at or below the top of the view.

        The query is a case-insensitive regex, or plain text when it is not a valid regex. "" clears it.
        Returns how many buffered lines match.
        """
        self._query = query
        self._matches, self._live_from, self._current = [], 0, None
        self._pattern = None
        if query:
            try:
                self._pattern = re.compile(query, re.IGNORECASE)
            except re.error:
                self._pattern = re.compile(re.escape(query), re.IGNORECASE)
            search, start, stamps, day = self._pattern.search, self.dropped, self.timestamps, self._day
            self._matches = [start + i for i, line in enumerate(self._lines) if search(_display(line, stamps, day))]
        self._cache.clear()
        self.refresh()
        if self._matches:
            self.action_match(1)
        else:
            self.post_message(self.Changed())
        return len(self._matches)

    def action_match(self, step: int) -> None:
        """Jump to the next (step 1) or previous (-1) match, wrapping around; the first jump starts at the view."""
        count = self.match_count
        if not count:
            if self._query:
                self.notify(f"no match for “{self._query}”", severity="warning", markup=False)
            return
        lo = self._live_from
        if self._current is None:
            top = self._locate(self.scroll_offset.y)
            anchor = top[0] if top else self.dropped
            index = bisect_left(self._matches, anchor, lo) if step > 0 else bisect_right(self._matches, anchor, lo) - 1
        else:
            index = bisect_left(self._matches, self._current, lo) + step
        self._jump(self._matches[lo + (index - lo) % count])

    def _jump(self, number: int) -> None:
        self._current = number
        self._cache.clear()
        self.follow = False
        row, height, width = self._rows_before(number) - self._rows_before(self.dropped), self.size.height, self.size.width
        x = None
        if not self.wrap and self._pattern is not None:
            found = self._pattern.search(_display(self._lines[number - self.dropped], self.timestamps, self._day))
            if found and not (self.scroll_offset.x <= found.start() and found.end() <= self.scroll_offset.x + width):
                x = max(0, found.start() - width // 4)
        y = None if self.scroll_offset.y <= row < self.scroll_offset.y + height else max(0, row - height // 3)
        self.scroll_to(x=x, y=y, animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.Changed())

    def _prune_matches(self) -> None:
        """Forget matches pushed out of the buffer (amortised O(1): the list is compacted when half dead)."""
        self._live_from = bisect_left(self._matches, self.dropped, self._live_from)
        if self._live_from > 1024 and self._live_from * 2 > len(self._matches):
            del self._matches[: self._live_from]
            self._live_from = 0
        if self._current is not None and self._current < self.dropped:
            self._current = None

    # ---- toggles -------------------------------------------------------------------------------------

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap

    def action_toggle_timestamps(self) -> None:
        self.timestamps = not self.timestamps

    def action_follow_end(self) -> None:
        if self.follow:
            self._scroll_to_end()
        self.follow = True

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self._scroll_to_end()
        self.post_message(self.Changed())

    def watch_wrap(self, wrap: bool) -> None:
        self._relayout()

    def watch_timestamps(self, timestamps: bool) -> None:
        # Displayed text changed: widths, wrapping and matches follow it (O(lines), once per toggle).
        shown = [_display(line, timestamps, self._day) for line in self._lines]
        self._widths = deque((self._cells(text) for text in shown), maxlen=self._lines.maxlen)
        self._max_width = max(self._widths, default=0)
        if self._pattern is not None:
            start, search = self.dropped, self._pattern.search
            self._matches, self._live_from = [start + i for i, text in enumerate(shown) if search(text)], 0
            if self._current is not None and self._current not in self._matches:
                self._current = None
        self._relayout()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Any move up that leaves the end pauses following (a clamp after shrinking lands on the end).
        if self.follow and new_value < old_value and new_value < self.max_scroll_y:
            self.follow = False

    def on_resize(self, event: events.Resize) -> None:
        if self.wrap and self._text_width() != self._wrap_width:
            self._relayout()

    # ---- layout --------------------------------------------------------------------------------------

    def _text_width(self) -> int:
        # The scrollbar column is always reserved when wrapping: otherwise its appearance changes the wrap.
        return max(1, self.size.width - self.styles.scrollbar_size_vertical)

    def _rows_of_width(self, cells: int) -> int:
        return max(1, -(-cells // self._wrap_width))

    def _build_starts(self) -> None:
        self._wrap_width = self._text_width()
        self._starts = list(accumulate((self._rows_of_width(w) for w in self._widths), initial=0))
        self._starts_first = self.dropped

    def _compact_starts(self) -> None:
        assert self._starts is not None
        dead = self.dropped - self._starts_first
        if dead > 1024 and dead * 2 > len(self._starts):
            del self._starts[:dead]
            self._starts_first = self.dropped

    def _rows_before(self, number: int) -> int:
        """Screen rows above absolute line `number`, counted from the start of the offsets kept."""
        return number if self._starts is None else self._starts[number - self._starts_first]

    def _locate(self, row: int) -> tuple[int, int] | None:
        """(absolute line number, row within it) shown at screen row `row` of the whole log; None past the end."""
        if row < 0:
            return None
        if self._starts is None:
            return (self.dropped + row, 0) if row < len(self._lines) else None
        lo = self.dropped - self._starts_first
        target = self._starts[lo] + row
        if target >= self._starts[-1]:
            return None
        k = bisect_right(self._starts, target, lo, len(self._starts) - 1) - 1
        return self._starts_first + k, target - self._starts[k]

    def _relayout(self) -> None:
        """Rebuild wrapping (O(lines), only on a toggle or resize), keeping the top line in view."""
        top = self._locate(self.scroll_offset.y)
        if self.wrap:
            self._build_starts()
        else:
            self._starts = None
        self._cache.clear()
        self._update_virtual_size()
        if self.follow:
            self._scroll_to_end()
        elif top is not None:
            self.scroll_to(y=self._rows_before(top[0]) - self._rows_before(self.dropped), animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.Changed())

    def _scroll_to_end(self) -> None:
        # force: the scrollbars (which gate scrolling) are only recomputed at the next layout.
        self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.call_after_refresh(self._settle_end)

    def _settle_end(self) -> None:
        # After the layout: a horizontal scrollbar that just appeared may have moved the end, and the
        # scroll target (where key scrolling starts from) may still hold a value from before the layout.
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
            self.scroll_target_y = self.scroll_y

    def _update_virtual_size(self) -> None:
        if self._starts is None:
            self.virtual_size = Size(self._max_width, len(self._lines))
        else:
            self.virtual_size = Size(self._wrap_width, self._starts[-1] - self._rows_before(self.dropped))

    # ---- rendering -----------------------------------------------------------------------------------

    @staticmethod
    def _cells(text: str) -> int:
        return len(text) if text.isascii() else cell_len(text)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._cache.clear()

    def _palette(self) -> tuple[Style, Style, Style]:
        """Styles resolved once per style change (rich_style walks the DOM: too slow per line)."""
        if self._styles is None:
            component = self.get_component_rich_style
            self._styles = (self.rich_style, component("log-lines--match", partial=True),
                            component("log-lines--match-current", partial=True))
        return self._styles

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width, base = self.size.width, self._palette()[0]
        found = self._locate(scroll_y + y)
        if found is None:
            if not self._lines and y < len(self._placeholder):
                note = Text(self._placeholder[y], style=base + Style(italic=True), no_wrap=True, end="")
                return Strip(note.render(self.app.console)).crop_extend(0, width, base)
            return Strip.blank(width, base)
        number, row = found
        start = 0 if self.wrap else scroll_x
        return self._rendered(number, base)[row].crop_extend(start, start + width, base)

    def _rendered(self, number: int, base: Style) -> tuple[Strip, ...]:
        """The screen rows of one line, from the LRU cache when possible."""
        key = (number, self._wrap_width if self.wrap else 0, self.wrap)
        rows = self._cache.get(key)
        if rows is None:
            text = Text(_display(self._lines[number - self.dropped], self.timestamps, self._day), no_wrap=True, end="")
            text.stylize(base)  # a Text's own style is not rendered into its segments
            if self._pattern is not None:
                style = self._palette()[2 if number == self._current else 1]
                for found in self._pattern.finditer(text.plain):
                    text.stylize(style, found.start(), found.end())
            strip = Strip(text.render(self.app.console), self._widths[number - self.dropped])
            cells = strip.cell_length
            if self.wrap and cells > self._wrap_width:
                rows = tuple(strip.divide([*range(self._wrap_width, cells, self._wrap_width), cells]))
            else:
                rows = (strip,)
            self._cache[key] = rows
        return rows


def _split(lines: Iterable[str]) -> list[str]:
    """One entry per line: text holding newlines is split (a trailing newline ends a line, "\r\n" too)."""
    batch: list[str] = []
    for line in lines:
        if "\n" in line:
            batch += [part.removesuffix("\r") for part in line.removesuffix("\n").split("\n")]
        else:
            batch.append(line)
    return batch


def _display(line: str, timestamps: bool, day: str | None = None) -> str:
    """The text shown for a line: without its kubelet timestamp unless asked, tabs expanded, controls replaced. `day`
    (a simulated log's first date): a stamp of that day is its time of day ("00:07:44.123456789Z")."""
    text = line if timestamps else strip_kubelet_prefix(line)
    if timestamps and day is not None and line.startswith(f"{day}T") and strip_kubelet_prefix(line) != line:
        text = line[len(day) + 1 :]
    return text if text.isprintable() else printable(text.expandtabs(), newlines=False)  # ESC would reach the terminal
