"""Whole-number flag values, as people type them: ASCII digits only (argparse's `int` also takes " 2" and the
digits of other scripts, "٣", which then pass for a count nobody typed as such)."""

from __future__ import annotations

import argparse
import re

_INTEGER = re.compile(r"-?[0-9]{1,18}")


def integer(text: str) -> int:
    """A whole number in ASCII digits, optionally negative (a range is the option's own check)."""
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be a whole number in digits 0-9, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    """A whole number >= 1 in ASCII digits."""
    if not _INTEGER.fullmatch(text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)
