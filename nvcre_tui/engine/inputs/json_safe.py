"""JSON with the same strictness as our YAML: duplicate keys and nesting past MAX_DEPTH are errors."""

from __future__ import annotations

import json
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
        value = json.loads(text, object_pairs_hook=unique_pairs)
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
