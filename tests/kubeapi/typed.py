"""Schemas of built-in kinds, derived from kubernetes_asyncio's generated models (the same Go types the
server decodes into), so built-in objects lose unknown fields as on the real server: a typed decode
drops them (with a `Warning` under fieldValidation=Warn, 400 under Strict).

A value of the wrong JSON type fails the decode (400 BadRequest, as the real `cannot unmarshal` error);
the Go type named in that text is approximate (int for every integer width).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kubernetes_asyncio.client import models

__all__ = ["schema_of_kind", "type_mismatch"]

PRESERVE = "x-kubernetes-preserve-unknown-fields"
_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "datetime": "string",
            "date": "string"}
_LIST = re.compile(r"list\[(.+)\]")
_DICT = re.compile(r"dict\(str, (.+)\)")
_built: dict[str, dict[str, Any]] = {}


def _schema(type_name: str) -> dict[str, Any]:
    if type_name in _SCALARS:
        return {"type": _SCALARS[type_name]}
    if type_name == "object":  # IntOrString, RawExtension, JSON: anything
        return {PRESERVE: True}
    found = _LIST.fullmatch(type_name)
    if found:
        return {"type": "array", "items": _schema(found.group(1))}
    found = _DICT.fullmatch(type_name)
    if found:
        return {"type": "object", "additionalProperties": _schema(found.group(1))}
    return _model(type_name)


def _model(name: str) -> dict[str, Any]:
    """The (possibly self-referencing) schema of a generated model class; cached so cycles close."""
    if name in _built:
        return _built[name]
    model = getattr(models, name, None)
    if model is None:
        return {PRESERVE: True}
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    _built[name] = schema
    for attribute, type_name in model.openapi_types.items():
        schema["properties"][model.attribute_map[attribute]] = _schema(type_name)
    return schema


@lru_cache(maxsize=64)
def schema_of_kind(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """The schema of a built-in top-level kind (e.g. "", "v1", "Pod" -> V1Pod), None when not generated."""
    prefix = "".join(part.capitalize() for part in group.split(".")[0].split("-")) if group else ""
    for candidate in (f"{version.capitalize()}{kind}", f"{version.capitalize()}{prefix}{kind}",
                      f"Core{version.capitalize()}{kind}"):  # CoreV1Event: the core group's Event
        if hasattr(models, candidate):
            return _model(candidate)
    return None


_JSON_NAMES = {bool: "bool", str: "string", int: "number", float: "number", dict: "object", list: "array"}
_GO_NAMES = {"string": "string", "integer": "int", "number": "float64", "boolean": "bool", "object": "object",
             "array": "array"}


def _fits(value: Any, wanted: str) -> bool:
    if wanted == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "object": dict, "array": list}[wanted])


def type_mismatch(value: Any, schema: dict[str, Any], path: str = "") -> str | None:
    """`json: cannot unmarshal string into Go struct field .spec.unschedulable of type bool` for the first
    value of the wrong type, else None (nulls decode to zero values)."""
    if value is None or schema.get(PRESERVE):
        return None
    wanted = schema.get("type")
    if wanted and not _fits(value, wanted):
        return (f"json: cannot unmarshal {_JSON_NAMES.get(type(value), 'value')} into Go struct field "
                f"{path or '.'} of type {_GO_NAMES[wanted]}")
    if isinstance(value, dict):
        properties, additional = schema.get("properties"), schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key) if properties is not None else additional
            if isinstance(sub, dict) and not (not path and key == "metadata"):
                found = type_mismatch(item, sub, f"{path}.{key}")
                if found:
                    return found
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            found = type_mismatch(item, schema["items"], path)
            if found:
                return found
    return None
