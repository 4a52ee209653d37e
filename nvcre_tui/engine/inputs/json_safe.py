"""JSON with the same strictness as our YAML: duplicate keys and nesting past MAX_DEPTH are errors.

A `\\uD800` escape with no partner decodes to a lone surrogate, which no UTF-8 output can write: every such
character becomes U+FFFD as the document is read (`pairs_hook_for`), so no reader has to know.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs.limits import MAX_DEPTH


class DuplicateKey(ValueError):
    """A key repeated in one object (its args[0])."""


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook that refuses a repeated key (json would keep the last value)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(key)
        result[key] = value
    return result


# A \u escape of a surrogate (paired or not): only text holding one needs the slower, cleaning hook.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}", re.ASCII)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def without_lone_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (and lists of them) replaced by U+FFFD; objects inside were
    cleaned by their own hook call already."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    return value


def unique_clean_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`unique_pairs` for text with surrogate escapes: keys and values without lone surrogates."""
    return unique_pairs([(without_lone_surrogates(key), without_lone_surrogates(value)) for key, value in pairs])


def pairs_hook_for(text: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """The object_pairs_hook to decode `text` with: the cleaning one only when it holds a surrogate escape."""
    return unique_clean_pairs if _SURROGATE_ESCAPE.search(text) else unique_pairs


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def depth_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """The path of the first container nested deeper than `limit`, or None (iterative: no recursion)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth > limit:  # the path runs `limit` levels deep: its start says where
            return (path if len(path) <= 80 else f"{path[:77]}...") or "(top level)"
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, _join(path, key), depth + 1))
    return None


def parse_json(name: str, text: str) -> Any:
    """The JSON value of `text`; InputError names the file and the line, the duplicated key or the deep path."""
    try:
        hook = pairs_hook_for(text)
        value = json.loads(text, object_pairs_hook=hook)
        if hook is unique_clean_pairs:  # a top-level list or string passes no hook
            value = without_lone_surrogates(value)
    except DuplicateKey as error:
        raise InputError(f"{name}: invalid JSON: duplicate key {error.args[0]!r}") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{name}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    except RecursionError:
        raise InputError(f"{name}: invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise InputError(f"{name}: invalid JSON: {error}") from None
    deep = depth_problem(value)
    if deep is not None:
        raise InputError(f"{name}: {deep}: nested deeper than {MAX_DEPTH} levels")
    return value
