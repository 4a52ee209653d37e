"""Messages on stderr are one line each: a newline inside (a file name holding one, `NVCRE_STATE=$'x\\ny.db'`) is
shown as U+FFFD, never a second line that reads as another message."""

from __future__ import annotations

import sys

from nvcre_tui.engine.printable import printable


def say(message: str) -> None:
    """One line on stderr, control characters and newlines shown; nothing when stderr is closed or broken."""
    try:
        print(printable(message, newlines=False), file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # stderr closed or broken as well: nothing left to tell
        pass
