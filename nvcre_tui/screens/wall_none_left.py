"""What the wall's title says when the store holds no certification: whether there never was one, or what was last
there. "no certification yet" after every certification had been deleted told the room the fleet was never tested.
The wall writes nothing: it remembers what it showed, and reads the history's last archived certification."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.queries import HistoryQuery
from nvcre_tui.engine.units import format_duration


def last_archived(history: HistoryQuery | None) -> Mapping[str, Any] | None:
    """The history's newest archived certification (of the session's own store), None when there is none or the
    history cannot be read (the node screen says why)."""
    if history is None:
        return None
    try:
        archived = history.certifications(last=1)
    except InputError:
        return None
    return archived[-1] if archived else None


def none_left(shown: tuple[str, str] | None, gone: int, archived: Mapping[str, Any] | None, now: datetime) -> str:
    """The title with no certification in the store: `shown` (name, result) the last one this wall showed, `gone`
    how many it saw in all that are no longer there; `archived` the history's newest (last_archived)."""
    if shown is not None:
        name, result = shown
        others = gone - 1
        said = f"{name} ({result})" if result else name
        return (f"no certification left: {said} and {others} other{'s' if others > 1 else ''} were deleted" if others > 0
                else f"no certification left: {said} was deleted")
    if archived is not None:
        try:
            ago = f", finished {format_duration(max(0.0, (now - parse_time(archived.get('completionTime'))).total_seconds()))} ago"
        except ValueError:
            ago = ""
        return f"no certification left; the last archived: {archived.get('name')} {archived.get('result') or ''}".rstrip() + ago
    return "no certification yet"
