"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via the jsonpatch library) and
strategic merge patch for built-in kinds (merge keys from the types' patch strategy tags)."""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
import jsonpointer

from . import errors
from .errors import ApiError
from .fieldpaths import BUILTIN_LISTS
from .resources import Resource
from .storage import clone

__all__ = ["apply_patch", "merge_patch", "strategic_merge"]

PATCH_TYPES = ("application/merge-patch+json", "application/json-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError as error:
        raise errors.bad_request(f"error decoding patch: {error}") from None


def apply_patch(old: dict[str, Any], body: bytes, content_type: str, res: Resource) -> Any:
    if content_type == "application/merge-patch+json":
        patch = _decode(body)
        if not isinstance(patch, dict):
            raise errors.bad_request("the merge patch must be a JSON object")
        return merge_patch(old, patch)  # builds new containers along the patch; the caller clones the rest
    if content_type == "application/json-patch+json":
        patch = _decode(body)
        if not isinstance(patch, list):
            raise errors.bad_request("the JSON patch must be a list of operations")
        try:
            return jsonpatch.apply_patch(old, patch)  # copies the document itself (in_place=False)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
            raise ApiError("Invalid", str(error), code=422) from None
    if content_type == "application/strategic-merge-patch+json":
        patch = _decode(body)
        if not isinstance(patch, dict):
            raise errors.bad_request("the strategic merge patch must be a JSON object")
        return strategic_merge(old, patch, ())
    raise ApiError("UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media types "
                   f"include: {', '.join(PATCH_TYPES)}")


def _merge_key(pattern: tuple[str, ...]) -> tuple[str, str | None]:
    kind, keys = BUILTIN_LISTS.get(pattern, ("atomic", ()))
    return kind, (keys[0] if keys else None)


def strategic_merge(target: Any, patch: Any, pattern: tuple[str, ...]) -> Any:
    """Strategic merge of `patch` into `target` at `pattern` (field names, "[]" for list items)."""
    if not isinstance(patch, dict):
        return clone(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    body = {k: v for k, v in patch.items() if not k.startswith("$")}
    if directive == "replace" or not isinstance(target, dict):
        return _strip(body)
    out = dict(target)
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            out[field] = [v for v in out.get(field) or [] if v not in (value or [])]
            continue
        if key.startswith("$"):
            continue  # $setElementOrder, $retainKeys: order and retention hints
        if value is None:
            out.pop(key, None)
            continue
        child = (*pattern, key)
        if isinstance(value, list):
            out[key] = _merge_list(out.get(key), value, child)
        else:
            merged = strategic_merge(out.get(key), value, child)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
    return out


def _merge_list(target: Any, patch: list[Any], pattern: tuple[str, ...]) -> list[Any]:
    kind, key = _merge_key(pattern)
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [_strip(item) for item in patch if not (isinstance(item, dict) and "$patch" in item)]
    if not isinstance(target, list) or kind == "atomic":
        return [_strip(item) for item in patch]
    if kind == "set":
        return list(target) + [item for item in patch if item not in target]
    out = list(target)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            out.append(_strip(item))
            continue
        index = next((i for i, old in enumerate(out) if isinstance(old, dict) and old.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del out[index]
        elif index is None:
            out.append(_strip(item))
        else:
            out[index] = strategic_merge(out[index], item, (*pattern, "[]"))
    return out


def _strip(value: Any) -> Any:
    """A patch value with its directives removed (what a new element stores)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
