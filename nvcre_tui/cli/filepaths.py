"""Values of the options that name a file nvcre writes (--state, --history, --results-file): `--results-file out/`
wrote a file named `out` (Path() drops the trailing separator); a path ending with '/' names a folder, refused. A
leading `~` is expanded here, once: `--state '~/s.db'` was checked as $HOME/s.db and written to ./~/s.db."""

from __future__ import annotations

import argparse

from nvcre_tui.engine.outfiles import file_named_message, folder_named
from nvcre_tui.paths import NoHomeFolder, typed_path


def file_path(text: str) -> str:
    """A file's path, not empty and not ending with '/'."""
    if not text:
        raise argparse.ArgumentTypeError("empty")
    if folder_named(text):
        raise argparse.ArgumentTypeError(file_named_message(text))
    try:
        return str(typed_path(text))
    except NoHomeFolder:  # kept as typed: the check of the file to write says it, naming the flag
        return text
