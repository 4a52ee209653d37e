"""Structural schemas of custom resources: pruning, defaulting and validation, in the real server's order.

apiextensions-apiserver decodes a custom resource, prunes unknown fields (and nulls of non-nullable
fields), applies defaults, then validates against the OpenAPI schema and the x-kubernetes-validations
CEL rules (transition rules, those naming oldSelf, only on update). Validation problems are returned
as field causes with the reasons and texts of k8s.io/apimachinery/pkg/util/validation/field.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
import uuid
from datetime import date, datetime
from functools import lru_cache
from typing import Any

import celpy
import re2

from .errors import Cause
from .storage import clone

__all__ = ["prune", "apply_defaults", "validate", "validate_rules", "OBJECT_META_FIELDS", "pattern_error", "pattern_search",
           "cel_equal"]

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
EMBEDDED = "x-kubernetes-embedded-resource"
RULES = "x-kubernetes-validations"
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
})
SKIPPED_RULES: set[str] = set()  # x-kubernetes-validations rules this emulator could not evaluate
JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


# ------------------------------------------------------------------------------------------- pruning


def prune(obj: dict[str, Any], schema: dict[str, Any], dropped: list[str] | None = None) -> dict[str, Any]:
    """A copy of a whole custom resource with unknown fields dropped (apiVersion/kind/metadata always kept);
    the dotted paths of dropped fields are appended to `dropped` (for fieldValidation Warn/Strict)."""
    out = _prune(obj, schema, True, "", dropped if dropped is not None else [])
    if isinstance(obj.get("metadata"), dict):
        out["metadata"] = {k: v for k, v in obj["metadata"].items() if k in OBJECT_META_FIELDS}
        if dropped is not None:
            dropped += [f"metadata.{k}" for k in obj["metadata"] if k not in OBJECT_META_FIELDS]
    return out


def _prune(value: Any, schema: dict[str, Any], root: bool, path: str, dropped: list[str]) -> Any:
    if schema.get(INT_OR_STRING) or not isinstance(value, (dict, list)):
        return clone(value)
    if isinstance(value, list):
        items = schema.get("items")
        if items is None:
            return clone(value)
        return [_prune(item, items, False, f"{path}[{index}]", dropped) for index, item in enumerate(value)]
    properties = schema.get("properties", {})
    additional = schema.get("additionalProperties")
    keep_unknown = schema.get(PRESERVE) is True or additional is True
    envelope = root or bool(schema.get(EMBEDDED))
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = properties.get(key)
        here = f"{path}.{key}" if path else key
        if envelope and key in ("apiVersion", "kind", "metadata"):
            out[key] = clone(item)
        elif item is None and isinstance(applies := sub if sub is not None else additional, dict) and not applies.get(
                "nullable"):
            continue  # nulls of non-nullable fields (or map values) are pruned before defaulting
        elif sub is not None:
            out[key] = _prune(item, sub, False, here, dropped)
        elif isinstance(additional, dict):
            out[key] = _prune(item, additional, False, here, dropped)
        elif keep_unknown:
            out[key] = clone(item)
        else:
            dropped.append(here)
    return out


# ----------------------------------------------------------------------------------------- defaulting


def apply_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """Fill in `default`s of absent properties, recursively, in place; returns the value."""
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in value and "default" in sub:
                value[key] = clone(sub["default"])
            if key in value:
                apply_defaults(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for item in value.values():
                apply_defaults(item, additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])
    return value


# ----------------------------------------------------------------------------------------- validation


def _render(value: Any) -> str:
    """How field.Invalid prints a value: strings quoted, numbers plain, composites by kind."""
    if isinstance(value, dict):
        return '"object"'
    if isinstance(value, list):
        return '"array"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return json.dumps(value)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names[type(value)]


def _type_ok(value: Any, wanted: str) -> bool:
    if wanted == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, JSON_TYPES[wanted])


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {_render(value)}: {detail}", path)


def validate(value: Any, schema: dict[str, Any], path: str = "") -> list[Cause]:
    """OpenAPI v3 checks of `value` at `path` (dotted, with [i] for list items)."""
    causes: list[Cause] = []
    where = path or "<root>"
    if value is None:
        if not schema.get("nullable") and schema.get("type"):
            causes.append(Cause("FieldValueTypeInvalid",
                                f'Invalid value: "null": {where} in body must be of type {schema["type"]}: "null"', path))
        return causes
    if schema.get(INT_OR_STRING):
        if not (isinstance(value, str) or _type_ok(value, "integer")):
            causes.append(Cause("FieldValueTypeInvalid", f"Invalid value: {_render(value)}: {where} in body must be "
                                f'of type integer or string: "{_type_name(value)}"', path))
        return causes
    wanted = schema.get("type")
    if wanted and not _type_ok(value, wanted):
        return [Cause("FieldValueTypeInvalid", f"Invalid value: {_render(value)}: {where} in body must be of type "
                      f'{wanted}: "{_type_name(value)}"', path)]
    fmt = schema.get("format")
    if isinstance(value, str) and fmt in FORMATS and not FORMATS[fmt](value):
        causes.append(Cause("FieldValueTypeInvalid", f"Invalid value: {_render(value)}: {where} in body must be of "
                            f"type {fmt}: {_render(value)}", path))
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(json.dumps(v) for v in schema["enum"])
        causes.append(Cause("FieldValueNotSupported", f"Unsupported value: {_render(value)}: supported values: {supported}",
                            path))
    causes += _bounds(value, schema, path, where)
    for junctor in ("allOf", "anyOf", "oneOf", "not"):
        if junctor in schema:
            causes += _junction(junctor, value, schema[junctor], path, where)
    if isinstance(value, dict):
        causes += _validate_object(value, schema, path)
    elif isinstance(value, list):
        causes += _validate_array(value, schema, path, where)
    return causes


def _parses(parse: Any) -> Any:
    def check(text: str) -> bool:
        try:
            parse(text)
        except ValueError:
            return False
        return True
    return check


def _date_time(text: str) -> None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text):
        raise ValueError(text)
    datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))


# string formats the API server checks (k8s.io/kube-openapi strfmt), the ones CRDs use in practice
FORMATS = {
    "date-time": _parses(_date_time),
    "date": _parses(lambda t: date.fromisoformat(t) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t) else int("x")),
    "byte": _parses(lambda t: base64.b64decode(t, validate=True)),
    "uuid": _parses(lambda t: uuid.UUID(t) if re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", t)
                    else int("x")),
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
    "cidr": _parses(lambda t: ipaddress.ip_network(t, strict=False)),
}


def _bounds(value: Any, schema: dict[str, Any], path: str, where: str) -> list[Cause]:
    causes = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema:
            low, exclusive = schema["minimum"], schema.get("exclusiveMinimum") is True
            if value < low or exclusive and value == low:
                word = "greater than" if exclusive else "greater than or equal to"
                causes.append(_invalid(path, value, f"{where} in body should be {word} {low}"))
        if "maximum" in schema:
            high, exclusive = schema["maximum"], schema.get("exclusiveMaximum") is True
            if value > high or exclusive and value == high:
                word = "less than" if exclusive else "less than or equal to"
                causes.append(_invalid(path, value, f"{where} in body should be {word} {high}"))
        if "multipleOf" in schema and (value / schema["multipleOf"]) % 1:
            causes.append(_invalid(path, value, f"{where} in body should be a multiple of {schema['multipleOf']}"))
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            causes.append(Cause("FieldValueTooLong", f"Too long: may not be more than {schema['maxLength']} bytes", path))
        if "minLength" in schema and len(value) < schema["minLength"]:
            causes.append(_invalid(path, value, f"{where} in body should be at least {schema['minLength']} chars long"))
        if "pattern" in schema and not pattern_search(schema["pattern"], value):
            causes.append(_invalid(path, value, f"{where} in body should match '{schema['pattern']}'"))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            causes.append(Cause("FieldValueTooMany", f"Too many: {len(value)}: must have at most {schema['maxItems']} items",
                                path))
        if "minItems" in schema and len(value) < schema["minItems"]:
            causes.append(_invalid(path, value, f"{where} in body should have at least {schema['minItems']} items"))
    if isinstance(value, dict):
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            causes.append(Cause("FieldValueTooMany", f"Too many: {len(value)}: must have at most "
                                f"{schema['maxProperties']} items", path))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            causes.append(_invalid(path, value, f"{where} in body should have at least {schema['minProperties']} properties"))
    return causes


# A `pattern` is Go's regexp (RE2 syntax) on the server, not Python's re: lookarounds, backreferences, \Z and possessive
# quantifiers do not compile there, `$` is the end of the text only (Python's also matches before a final newline), and
# \d \w \s are ASCII. google-re2 has RE2's syntax and semantics; \C is the one escape it knows and Go does not.
_QUIET_RE2 = re2.Options()
_QUIET_RE2.log_errors = False  # re2 prints each bad pattern to stderr itself
_GO_ONLY_REFUSES = re.compile(r"(?<!\\)(?:\\\\)*\\C")


@lru_cache(maxsize=512)
def _pattern(text: str) -> Any:
    return re2.compile(text, _QUIET_RE2)


@lru_cache(maxsize=512)
def pattern_error(text: str) -> str | None:
    """Why the API server refuses `text` as a schema pattern (validation.go: "must be a valid regular expression,
    but isn't: ..."), or None when Go's regexp compiles it."""
    if _GO_ONLY_REFUSES.search(text):
        return "error parsing regexp: invalid escape sequence: `\\C`"
    try:
        _pattern(text)
    except re2.error as error:
        detail = error.args[0] if error.args else error
        return f"error parsing regexp: {detail.decode() if isinstance(detail, bytes) else detail}"
    return None


def pattern_search(text: str, value: str) -> bool:
    """Whether `value` matches the schema pattern `text` anywhere, as the server's validator (regexp.MatchString)."""
    return _pattern(text).search(value) is not None


def _junction(junctor: str, value: Any, branches: Any, path: str, where: str) -> list[Cause]:
    if junctor == "not":
        return [_invalid(path, value, f'{where} in body must not validate the schema (not)')] if not validate(
            value, branches, path) else []
    results = [validate(value, branch, path) for branch in branches]
    passed = sum(1 for r in results if not r)
    if junctor == "allOf":
        return [cause for r in results for cause in r]
    if junctor == "anyOf" and passed == 0:
        return [_invalid(path, value, f"{where} in body must validate at least one schema (anyOf)")]
    if junctor == "oneOf" and passed != 1:
        return [_invalid(path, value, f"{where} in body must validate one and only one schema (oneOf)")]
    return []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _validate_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[Cause]:
    causes = [Cause("FieldValueRequired", "Required value", _join(path, name))
              for name in schema.get("required", []) if name not in value]
    properties = schema.get("properties", {})
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if key in properties:
            if not path and key == "metadata":
                continue  # ObjectMeta is validated by the server's own rules
            causes += validate(item, properties[key], _join(path, key))
        elif isinstance(additional, dict):
            causes += validate(item, additional, _join(path, key))
    return causes


def _validate_array(value: list[Any], schema: dict[str, Any], path: str, where: str) -> list[Cause]:
    causes: list[Cause] = []
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            causes += validate(item, items, f"{path}[{index}]")
    list_type = schema.get("x-kubernetes-list-type")
    seen: set[str] = set()
    for index, item in enumerate(value):
        if list_type == "set":
            marker = json.dumps(item, sort_keys=True)
        elif list_type == "map" and isinstance(item, dict):
            marker = json.dumps({k: item.get(k) for k in schema.get("x-kubernetes-list-map-keys", [])}, sort_keys=True)
        else:
            continue
        if marker in seen:
            causes.append(Cause("FieldValueDuplicate", f"Duplicate value: {marker}", f"{path}[{index}]"))
        seen.add(marker)
    return causes


# ----------------------------------------------------------------------------- x-kubernetes-validations

IMMUTABLE_RULE = "self == oldSelf"


def cel_equal(value: Any, other: Any, schema: dict[str, Any]) -> bool:
    """CEL's `==` of two values of one schema node as the API server computes it (k8s.io/apiserver pkg/cel/common:
    UnstructuredToVal and the Equal methods of its unstructured values, alike in 1.30-1.34; null properties as 1.34).

    An object compares the properties its schema declares by their schemas and needs as many keys on both sides; a
    key it does not declare (x-kubernetes-preserve-unknown-fields) is compared only when the other object has it too,
    so renaming an undeclared key is no change there. A map (additionalProperties) declares every key: a rename is
    one. Lists compare in order (map lists by their keys, sets as sets); numbers as doubles; anything else exactly."""
    if value is None or other is None:
        return value is None and other is None  # nullable nodes; the server prunes other nulls before validating
    if schema.get(INT_OR_STRING):
        return _json_equal(value, other)
    kind = schema.get("type")
    if kind == "object" and isinstance(value, dict) and isinstance(other, dict):
        return _object_equal(value, other, schema)
    if kind == "array" and isinstance(value, list) and isinstance(other, list):
        return _list_equal(value, other, schema)
    if kind == "number" and _is_number(value) and _is_number(other):
        return float(value) == float(other)
    return _json_equal(value, other)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _object_equal(value: dict[str, Any], other: dict[str, Any], schema: dict[str, Any]) -> bool:
    if len(value) != len(other):
        return False
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    is_object = properties is not None or bool(schema.get(EMBEDDED))
    for key, item in value.items():
        sub = (properties or {}).get(key) if is_object else additional if isinstance(additional, dict) else None
        if sub is None:  # undeclared: compared only if the other side has it (unstructuredMap.Equal)
            if key in other and not _json_equal(item, other[key]):
                return False
            continue
        found = not (is_object and item is None)  # an object's null property is an absent one
        other_found = key in other and not (is_object and other[key] is None)
        if found != other_found:
            return False
        if found and not cel_equal(item, other[key], sub):
            return False
    return True


def _list_equal(value: list[Any], other: list[Any], schema: dict[str, Any]) -> bool:
    if len(value) != len(other):
        return False
    items = schema.get("items") or {}
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        return all(any(_json_equal(item, candidate) for candidate in other) for item in value)
    if list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []

        def key_of(item: Any) -> str:
            return json.dumps([item.get(k) if isinstance(item, dict) else None for k in keys])

        by_key = {key_of(item): item for item in other}
        return all(key_of(item) in by_key and cel_equal(item, by_key[key_of(item)], items) for item in value)
    return all(cel_equal(item, candidate, items) for item, candidate in zip(value, other))


def _json_equal(value: Any, other: Any) -> bool:
    """equality.Semantic.DeepEqual of decoded JSON: an integer is not a float, nor a boolean an integer."""
    if type(value) is not type(other):
        return False
    if isinstance(value, dict):
        return value.keys() == other.keys() and all(_json_equal(value[k], other[k]) for k in value)
    if isinstance(value, list):
        return len(value) == len(other) and all(_json_equal(a, b) for a, b in zip(value, other))
    return bool(value == other)


@lru_cache(maxsize=256)
def _program(rule: str) -> Any:
    environment = celpy.Environment()
    return environment.program(environment.compile(rule))


def validate_rules(value: Any, old: Any, schema: dict[str, Any], path: str = "", update: bool = False) -> list[Cause]:
    """CEL rules at every level where the value exists; transition rules only when an old value exists."""
    causes: list[Cause] = []
    if value is None:
        return causes
    for rule in schema.get(RULES, []):
        text = rule.get("rule", "")
        transition = "oldSelf" in text
        if transition and (not update or old is None):
            continue
        if " ".join(text.split()) == IMMUTABLE_RULE:  # the server's own equality, not celpy's (see cel_equal)
            ok = cel_equal(value, old, schema)
        else:
            activation = {"self": celpy.json_to_cel(value)}
            if transition:
                activation["oldSelf"] = celpy.json_to_cel(old)
            try:
                ok = bool(_program(text).evaluate(activation))
            except Exception as error:  # noqa: BLE001 - celpy raises many kinds
                if "undeclared reference" in str(error):
                    SKIPPED_RULES.add(text)  # a Kubernetes CEL library function cel-python lacks: not judged
                    continue
                ok = False  # an evaluation error (e.g. no such key) fails the rule, as on the server
        if not ok:
            message = rule.get("message") or f"failed rule: {text}"
            where = rule.get("fieldPath", "")
            field = path + where if where else path
            causes.append(Cause(rule.get("reason", "FieldValueInvalid"),
                                f"Invalid value: {_render(value)}: {message}", field))
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value and not (not path and key == "metadata"):
                causes += validate_rules(value[key], old.get(key) if isinstance(old, dict) else None, sub,
                                         _join(path, key), update)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in value.items():
                causes += validate_rules(item, old.get(key) if isinstance(old, dict) else None, additional,
                                         _join(path, key), update)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            # list items are correlated to old items only for map/set lists; otherwise no oldSelf
            causes += validate_rules(item, None, schema["items"], f"{path}[{index}]", update)
    return causes
