"""Neutralise control characters before text reaches a terminal: an ESC from a pod log or a parsed
hostname could otherwise recolour, retitle or rewrite the operator's screen (ANSI CSI, OSC)."""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls (0x9b is a one-byte CSI on some terminals), and
# the bidirectional overrides that make text read differently from what it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, newlines: bool = True) -> str:
    """`text` with every control character replaced by U+FFFD (tabs kept; newlines kept unless asked)."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub("\ufffd", text)


def json_printable(text: str) -> str:
    """JSON text with the characters json.dumps leaves raw (DEL, C1, bidi) written as \\u escapes:
    still the same JSON value, now safe on a terminal. (They can only occur inside strings.)"""
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
