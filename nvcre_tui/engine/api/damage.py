"""What is wrong with a stored nvcre object: a damaged store (an edited file, a bad write) holds objects the models
refuse; readers name the first problem and leave the object out instead of failing on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.resources import RESOURCES_BY_KIND
from nvcre_tui.engine.api.validation import validation_messages


def damaged_object(kind: str, item: Mapping[str, Any]) -> str | None:
    """What is wrong with one stored nvcre object (its first problem, as `field: what`), or None."""
    model = RESOURCES_BY_KIND.get(kind)
    if model is None:
        return None
    try:
        model.model_validate(item)
    except ValidationError as error:
        return validation_messages(error, "")[0].removeprefix(": ")
    return None
