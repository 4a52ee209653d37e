"""Turn pydantic validation errors into one-line messages: `file: field.path: what is wrong`."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from nvcre_tui.engine.api.base import LABEL_VALUE
from nvcre_tui.engine.api.options import IMAGE_PATTERN, SOURCE_REPO_PATTERN
from nvcre_tui.engine.errors import field_path
from nvcre_tui.engine.units import DURATION_PATTERN, MAX_BYTES_PATTERN, QUANTITY_PATTERN, RESOURCE_QUANTITY_PATTERN

# Regexes users meet, by what they mean; a raw regex is a poor error message.
_PATTERN_MEANING = {
    DURATION_PATTERN: "a duration such as 90s, 15m or 1h30m",
    QUANTITY_PATTERN: "a quantity such as 64, 500m or 800Gi",
    RESOURCE_QUANTITY_PATTERN: "a quantity of at least 0 such as 64, 500m or 800Gi",
    MAX_BYTES_PATTERN: "a byte size such as 16G",
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": "a lowercase DNS name (a-z, 0-9, '-', '.')",
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$": "a lowercase DNS label (a-z, 0-9, '-')",
    SOURCE_REPO_PATTERN: "an https:// or ssh:// repository URL",
    IMAGE_PATTERN: "an image reference such as nvcr.io/nvidia/pytorch:25.01-py3 (printable ASCII, no spaces)",
    LABEL_VALUE: "a label value (letters, digits, '-', '_', '.')",
    r"^[^\x00-\x1f\x7f-\x9f]*$": "text without control characters",
    r"^([a-z0-9][-a-z0-9.]*)?$": "the start of a lowercase DNS name (a-z, 0-9, '-', '.')",
    r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?$": "the start of a label value (letters, digits, '-', '_', '.')",
}

def pattern_problem(pattern: str, value: object) -> str:
    """`must be a duration such as 90s, ..., got '9x'`: a value that does not match `pattern`, said by what it means."""
    meaning = _PATTERN_MEANING.get(pattern)
    wanted = f"be {meaning}" if meaning else f"match {pattern}"
    return f"must {wanted}, got {_short(value)!r}"


# pydantic error type -> message template over the error's ctx (and `input`).
_MESSAGES = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field",
    "greater_than_equal": "must be >= {ge}",
    "greater_than": "must be > {gt}",
    "less_than_equal": "must be <= {le}",
    "less_than": "must be < {lt}",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} items",
    "string_too_short": "must not be empty" ,
    "string_too_long": "must be at most {max_length} characters",
    "literal_error": "must be one of {expected}, got {input!r}",
    "int_type": "must be an integer, got {input!r}",
    "int_from_float": "must be an integer, got {input!r}",
    "bool_type": "must be true or false, got {input!r}",
    "string_type": "must be a string, got {input!r}",
    "float_type": "must be a number, got {input!r}",
    "finite_number": "must be a finite number, got {input!r}",
    "dict_type": "must be a mapping, got {input!r}",
    "model_type": "must be a mapping, got {input!r}",
    "model_attributes_type": "must be a mapping, got {input!r}",
    "list_type": "must be a list, got {input!r}",
}


class _Shown(str):
    """Text a message shows as it is (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)


def _short(value: Any) -> Any:
    if isinstance(value, (date, datetime)):  # not Python's datetime.date(2020, 1, 1)
        return _Shown(f"the date {value.isoformat()} (YAML reads it so unquoted: put it in quotes)")
    text = repr(value)
    return value if len(text) <= 60 else f"{text[:57]}..."


def error_message(error: ErrorDetails) -> str:
    """The what-is-wrong part of one pydantic error."""
    kind, ctx = error["type"], dict(error.get("ctx") or {})
    if kind == "string_pattern_mismatch":
        return pattern_problem(ctx.get("pattern", ""), error.get("input"))
    if kind == "string_too_short" and ctx.get("min_length", 1) > 1:
        return f"must be at least {ctx['min_length']} characters"
    template = _MESSAGES.get(kind)
    if template is None:
        message = str(error["msg"])
        return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return template.format(input=_short(error.get("input")), **ctx)


def error_location(error: ErrorDetails) -> tuple[str | int, ...]:
    """The field path, with the offending key of a map appended (e.g. thresholds.fooBar)."""
    loc = tuple(part for part in error["loc"] if not (isinstance(part, str) and part.startswith("function-")))
    key = (error.get("ctx") or {}).get("key")
    return (*loc, key) if key else loc


def validation_messages(error: ValidationError, where: str, prefix: tuple[str | int, ...] = ()) -> list[str]:
    """Every error as `where: field.path: message`, in document order."""
    messages = []
    for item in error.errors(include_url=False):
        path = field_path((*prefix, *error_location(item)))
        messages.append(f"{where}: {path}: {error_message(item)}" if path else f"{where}: {error_message(item)}")
    return list(dict.fromkeys(messages))
