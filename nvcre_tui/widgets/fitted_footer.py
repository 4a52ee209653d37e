"""The console's footer: Textual's compact Footer, plus the keys a screen lists only where there is room.

A screen's footer on 80 columns holds its main keys and `q Quit`, `? Keys` and `: Command`, no more: keys such as the
dashboard's `x Delete` and `w Wall` were taken out of it (show=False) for them, and so were hidden at every width.
`if_room` names those keys (binding ids, the most wanted first): each one that fits beside the others is shown, in
the screen's binding order, and the footer recomposes when the width changes. `?` lists them all, as before."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE_EDGE = 1  # the command palette key's left border (docked right)


def key_width(key_display: str, description: str) -> int:
    """Cells one key takes in the compact footer: the key, a space, its description, then its 1-cell margin."""
    return cell_len(key_display) + (1 + cell_len(description) if description else 0) + 1


def fitting(shown: Sequence[int], optional: Sequence[int], width: int) -> set[int]:
    """Which optional keys (their widths, the most wanted first) fit in `width` beside the `shown` ones: each in turn
    while it fits, so a short one later in line still takes the room a long one could not."""
    room = width - sum(shown)
    chosen = set()
    for index, cells in enumerate(optional):
        if cells <= room:
            chosen.add(index)
            room -= cells
    return chosen


class FittedFooter(Footer):
    """A compact footer that also shows the keys `if_room` names (binding ids, the most wanted first) where they fit."""

    def __init__(self, *, if_room: Iterable[str] = (), id: str | None = None) -> None:
        super().__init__(compact=True, id=id)
        self.if_room = tuple(if_room)
        self._extra: frozenset[str] = frozenset()  # the if_room keys the last compose showed

    def _width(self) -> int:
        return self.size.width or self.screen.size.width or self.app.size.width

    def _keys(self) -> list[tuple[Binding, bool, str]]:
        """The screen's enabled-or-dimmed keys the footer may show (the first of each action, as Footer does)."""
        firsts: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show or binding.id in self.if_room:
                firsts.setdefault(binding.action, (binding, enabled, tooltip))
        return list(firsts.values())

    def _chosen(self, keys: Sequence[tuple[Binding, bool, str]]) -> frozenset[str]:
        """The if_room keys that fit at the current width."""
        def cells(binding: Binding) -> int:
            return key_width(self.app.get_key_display(binding), binding.description)

        shown = [cells(binding) for binding, _, _ in keys if binding.show]
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            shown.append(key_width(self.app.get_key_display(palette.binding), palette.binding.description) + PALETTE_EDGE)
        optional = {binding.id: binding for binding, _, _ in keys if not binding.show}
        wanted = [optional[key] for key in self.if_room if key in optional]
        picked = fitting(shown, [cells(binding) for binding in wanted], self._width())
        return frozenset(str(wanted[index].id) for index in picked)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        keys = self._keys()
        self._extra = self._chosen(keys)
        for binding, enabled, tooltip in keys:
            if binding.show or binding.id in self._extra:
                yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                                disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            yield FooterKey(palette.binding.key, self.app.get_key_display(palette.binding), palette.binding.description,
                            palette.binding.action, classes="-command-palette", disabled=not palette.enabled,
                            tooltip=palette.binding.tooltip or palette.binding.description)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and self._chosen(self._keys()) != self._extra:
            self.call_after_refresh(self.recompose)
