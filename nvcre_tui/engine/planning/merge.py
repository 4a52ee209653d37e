"""Deep merge of plain data: how catalog `extends` and override patches combine."""

from __future__ import annotations

import copy
from typing import Any


def deep_merge(base: Any, patch: Any) -> Any:
    """`patch` over `base`: mappings merge key by key, anything else (lists, scalars) is replaced.

    A None value in a patch mapping removes the key, as in a JSON merge patch.
    Neither argument is modified.
    """
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif key in merged:
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
