"""Finding and decoding the JSON document inside tool output that may carry other text around it.

Decoding is strict, as for every JSON input (engine/inputs/json_safe.py): a key repeated in one object
is an error naming it and its line, never resolved to the last value; so is an integer too long for int().
A lone surrogate (`\\udc80`) is read as U+FFFD, so no report or output ever holds one.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from nvcre_tui.engine.inputs.json_safe import DuplicateKey, pairs_hook_for, unique_clean_pairs, unique_pairs
from nvcre_tui.engine.parsers.base import WRONG_FORMAT, ParseError

# dcgmi and friends sometimes print a warning line before the document; it starts at a line's "{".
OBJECT_START = re.compile(r"^[ \t]*\{", re.MULTILINE | re.ASCII)
_MAX_ATTEMPTS = 8
# Strings, brackets and colons: enough to walk objects and find their keys.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]', re.DOTALL)


_DECODER = json.JSONDecoder(object_pairs_hook=unique_pairs)
_CLEANING_DECODER = json.JSONDecoder(object_pairs_hook=unique_clean_pairs)  # lone surrogates become U+FFFD


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _duplicate_line(text: str, start: int, key: str) -> int | None:
    """The line where `key` comes again within one object of the document at `start` (a slow walk, on error only)."""
    stack: list[set[str] | None] = []
    last: tuple[str, int] | None = None
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        if token in "{[":
            stack.append(set() if token == "{" else None)
        elif token in "}]":
            if stack:
                stack.pop()
            if not stack:
                return None
        elif token == ":":
            keys = stack[-1] if stack else None
            if last is not None and keys is not None:
                if last[0] == key and key in keys:
                    return _line(text, last[1])
                keys.add(last[0])
        else:
            try:
                last = (json.loads(token), match.start())
            except ValueError:
                last = (token, match.start())
            continue
        last = None
    return None


def _duplicate(text: str, start: int, key: str) -> str:
    line = _duplicate_line(text, start, key)
    return f"not valid JSON (duplicate key {key!r}{f' on line {line}' if line else ''})"


def _too_long(text: str, start: int) -> str:
    """int() refuses more than sys.get_int_max_str_digits() digits: the first run of that many is the culprit."""
    found = re.compile(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", re.ASCII).search(text, start)
    if found is None:
        return "not valid JSON (a number int() cannot read)"
    return f"not valid JSON (number too long: {found.end() - found.start()} digits on line {_line(text, found.start())})"


def load_json(text: str) -> Any:
    """The JSON object in `text`; ParseError(WrongFormat) when there is none.

    The document is the first line-leading "{" that decodes. A later candidate counts only if
    nothing but whitespace follows it: otherwise it is an object nested in a broken document, and
    the input is reported as invalid JSON (with the first candidate's error), not as some other JSON.
    """
    return load_json_at(text)[0]


def load_json_at(text: str) -> tuple[Any, int]:
    """`load_json`, and where in `text` the document ends (what follows it is the caller's to judge)."""
    problem: str | None = None
    decoder = _CLEANING_DECODER if pairs_hook_for(text) is unique_clean_pairs else _DECODER
    for attempt, match in enumerate(OBJECT_START.finditer(text)):
        if attempt == _MAX_ATTEMPTS:
            break
        start = match.end() - 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            problem = problem or f"not valid JSON (line {error.lineno} column {error.colno}: {error.msg})"
            continue
        except DuplicateKey as error:
            problem = problem or _duplicate(text, start, error.args[0])
            continue
        except RecursionError:
            problem = problem or "not valid JSON (nested too deeply)"
            continue
        except ValueError:  # int() past 4300 digits
            problem = problem or _too_long(text, start)
            continue
        if problem is not None and text[end:].strip():
            continue
        return value, end
    raise ParseError(WRONG_FORMAT, problem or "no JSON object found")
