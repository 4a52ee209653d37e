"""Finding and decoding the JSON document inside tool output that may carry other text around it."""

from __future__ import annotations

import json
import re
from typing import Any

from nvcre_tui.engine.parsers.base import WRONG_FORMAT, ParseError

# dcgmi and friends sometimes print a warning line before the document; it starts at a line's "{".
_OBJECT_START = re.compile(r"^[ \t]*\{", re.MULTILINE | re.ASCII)
_MAX_ATTEMPTS = 8


def load_json(text: str) -> Any:
    """The JSON object in `text`; ParseError(WrongFormat) when there is none.

    The document is the first line-leading "{" that decodes. A later candidate counts only if
    nothing but whitespace follows it: otherwise it is an object nested in a broken document, and
    the input is reported as invalid JSON (with the first candidate's error), not as some other JSON.
    """
    decoder = json.JSONDecoder()
    problem: str | None = None
    for attempt, match in enumerate(_OBJECT_START.finditer(text)):
        if attempt == _MAX_ATTEMPTS:
            break
        start = match.end() - 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            problem = problem or f"not valid JSON (line {error.lineno} column {error.colno}: {error.msg})"
            continue
        except (ValueError, RecursionError) as error:  # 4300-digit ints, absurd nesting
            problem = problem or f"not valid JSON ({type(error).__name__})"
            continue
        if problem is not None and text[end:].strip():
            continue
        return value
    raise ParseError(WRONG_FORMAT, problem or "no JSON object found")
