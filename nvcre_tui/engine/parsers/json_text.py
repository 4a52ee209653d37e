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
    """The first JSON object in `text` that decodes; ParseError(WrongFormat) when there is none."""
    decoder = json.JSONDecoder()
    problem = "no JSON object found"
    for attempt, match in enumerate(_OBJECT_START.finditer(text)):
        if attempt == _MAX_ATTEMPTS:
            break
        start = match.end() - 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            problem = f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
            continue
        except (ValueError, RecursionError) as error:  # 4300-digit ints, absurd nesting
            problem = f"invalid JSON: {type(error).__name__}"
            continue
        return value
    raise ParseError(WRONG_FORMAT, problem)
