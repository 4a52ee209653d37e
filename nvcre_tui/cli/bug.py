"""The one line a bug ends a command with (exit 70): that it is a bug in nvcre, in which command, what to report and
to whom. It read `nvcre: internal error: ValueError: ...`, Python's class name leading it and no command named (a
console script run by cron or CI leaves no shell history to tell which one it was)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from nvcre_tui import __version__
from nvcre_tui.engine.store.errors import BUG, said

# The stable start of the line: tests, and scripts reading stderr, look for it.
INTERNAL_ERROR = "internal error"


def command_of(parser: argparse.ArgumentParser, words: Sequence[str]) -> str:
    """The command `words` ran (`nvcre history node`): its command names alone, never a value given (a path, a token),
    as it goes into a line to be pasted into a report. The console's own (`nvcre`) where no command is named."""
    value_next = False
    for word in words:
        if value_next:  # the value of an option before the command's name (`nvcre --kubeconfig K certification run`)
            value_next = False
            continue
        if word.startswith("-") and word != "-":
            option = parser._option_string_actions.get(word)
            value_next = option is not None and option.nargs != 0
            continue
        commands = next((action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction)), None)
        if not isinstance(commands, dict) or word not in commands:
            break
        parser = commands[word]
    return parser.prog


def bug_line(error: BaseException, command: str) -> str:
    """`nvcre: internal error, a bug in nvcre X, in `nvcre run` (ValueError: ...): please report ...`: the class and
    words of the error are the detail a report needs, said after what it is, never leading it."""
    words = said(error, "")
    return (f"nvcre: {INTERNAL_ERROR}, {BUG} {__version__}, in `{command}` ({type(error).__name__}{': ' + words if words else ''}): "
            "please report it to nvcre's maintainers with this line and the traceback NVCRE_DEBUG=1 shows")
