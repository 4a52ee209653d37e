"""Whole-number flag values, as people type them: ASCII digits only (argparse's `int` also takes " 2" and the
digits of other scripts, "٣", which then pass for a count nobody typed as such)."""

from __future__ import annotations

import argparse
import re

_INTEGER = re.compile(r"-?[0-9]{1,18}")


_DIGITS = re.compile(r"-?[0-9]+")
_TOO_LONG = "of at most 18 digits"  # what _INTEGER takes: `--last 10000000000000000000` is a whole number, only too long


def integer(text: str) -> int:
    """A whole number in ASCII digits, optionally negative (a range is the option's own check)."""
    if not _INTEGER.fullmatch(text):
        too_long = f" {_TOO_LONG}" if _DIGITS.fullmatch(text) else " in digits 0-9"
        raise argparse.ArgumentTypeError(f"must be a whole number{too_long}, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    """A whole number >= 1 in ASCII digits."""
    if not _INTEGER.fullmatch(text) or int(text) < 1:
        too_long = f" {_TOO_LONG}" if _DIGITS.fullmatch(text) and not text.startswith("-") and text.strip("0") else ""
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1{too_long}, got {text!r}")
    return int(text)
