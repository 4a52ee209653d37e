"""Standard input is read once: the check every command makes before reading any "-" input."""

from __future__ import annotations

import argparse

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs.read import stdin_is_terminal

# The inputs a command reads from standard input when given "-" (argparse dest -> (as the message names it, what it
# is)), in the order a message names them. The password comes first: stdin is the one place it is kept secret.
PASSWORD = "workload_registry_password"
STDIN_READERS = {
    PASSWORD: ("--workload-registry-password -", "the password"),
    "file": ("-", "the certification"),
    "cert_file": ("--cert-file -", "the certification"),
    "nodes": ("--nodes -", "the nodes"),
    "scenario": ("--scenario -", "the scenario"),
}


def check_stdin_once(args: argparse.Namespace) -> None:
    """InputError when two inputs would be read from standard input (the second would find it empty and blame its
    own file), or when a file would be read from a terminal (it would wait, silently, for one to be typed; a password
    is typed there, unechoed). Called before anything reads it."""
    readers = [dest for dest in STDIN_READERS if getattr(args, dest, None) == "-"]
    files = [dest for dest in readers if dest != PASSWORD]
    if files and stdin_is_terminal():
        flag, what = STDIN_READERS[files[0]]
        raise InputError(f"{flag}: standard input is a terminal; pipe {what} in (nvcre ... < FILE) or name a file instead of -")
    if len(readers) < 2:
        return
    if readers[0] == PASSWORD:
        rest = [STDIN_READERS[dest][1] for dest in readers[1:]]
        advice = f"pass {' and '.join(rest)} as {'a file' if len(rest) == 1 else 'files'}"
    else:
        advice = "pass one of them as a file" if len(readers) == 2 else "pass all but one of them as files"
    raise InputError(f"{' and '.join(STDIN_READERS[dest][0] for dest in readers)}: standard input can be read once; {advice}")
