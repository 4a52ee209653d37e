"""ObjectMeta rules shared by every kind: name formats, labels, finalizers, owner references, system fields."""

from __future__ import annotations

import re
from typing import Any

from .errors import Cause

__all__ = ["validate_metadata", "SYSTEM_FIELDS", "name_causes", "GENERATE_ALPHABET"]

SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_SUBDOMAIN, _LABEL = re.compile(SUBDOMAIN), re.compile(LABEL)
_LABEL_VALUE, _QUALIFIED = re.compile(LABEL_VALUE), re.compile(QUALIFIED_NAME)
# What a client cannot set: the server keeps its own values (uid, timestamps, generation, ...).
SYSTEM_FIELDS = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                 "selfLink")
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3

SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  f"validation is '{SUBDOMAIN}')")
LABEL_TEXT = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              f"start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
              f"validation is '{LABEL}')")


def name_causes(name: str, rule: str, field: str = "metadata.name") -> list[Cause]:
    """Problems with an object name under the kind's rule (subdomain, label or path segment)."""
    quoted = f'"{name}"'
    if rule == "path":
        if name in (".", "..") or "/" in name or "%" in name:
            return [Cause("FieldValueInvalid", f"Invalid value: {quoted}: may not contain '/' or '%' or be '.' or '..'",
                          field)]
        return []
    limit, pattern, text = (63, _LABEL, LABEL_TEXT) if rule == "label" else (253, _SUBDOMAIN, SUBDOMAIN_TEXT)
    causes = []
    if len(name) > limit:
        causes.append(Cause("FieldValueInvalid", f"Invalid value: {quoted}: must be no more than {limit} characters",
                            field))
    if not pattern.fullmatch(name):
        causes.append(Cause("FieldValueInvalid", f"Invalid value: {quoted}: {text}", field))
    return causes


def _qualified_causes(key: str, field: str) -> list[Cause]:
    prefix, slash, name = key.rpartition("/")
    bad = (not name or len(name) > 63 or not _QUALIFIED.fullmatch(name)
           or bool(slash) and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)))
    if bad:
        return [Cause("FieldValueInvalid", f'Invalid value: "{key}": name part must consist of alphanumeric '
                      "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                      "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                      f"'{QUALIFIED_NAME}') with an optional DNS subdomain prefix and '/' (e.g. "
                      "'example.com/MyName')", field)]
    return []


def validate_metadata(meta: dict[str, Any], name_rule: str, old: dict[str, Any] | None = None) -> list[Cause]:
    """Metadata problems of a create (old None) or an update."""
    causes: list[Cause] = []
    name = meta.get("name", "")
    if name:
        causes += name_causes(name, name_rule)
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        return [Cause("FieldValueTypeInvalid", "Invalid value: labels must be a map of strings", "metadata.labels")]
    for key, value in labels.items():
        causes += _qualified_causes(key, "metadata.labels")
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            causes.append(Cause("FieldValueInvalid", f"Invalid value: {value!r}: a valid label must be an empty string "
                                "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                                "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
                                f"for validation is '{LABEL_VALUE}')", "metadata.labels"))
    annotations = meta.get("annotations") or {}
    for key, value in annotations.items():
        causes += _qualified_causes(key, "metadata.annotations")
        if not isinstance(value, str):
            causes.append(Cause("FieldValueTypeInvalid", "Invalid value: annotation values must be strings",
                                f"metadata.annotations[{key}]"))
    if sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str)) > 256 * 1024:
        causes.append(Cause("FieldValueTooLong", "Too long: must have at most 262144 bytes", "metadata.annotations"))
    finalizers = meta.get("finalizers") or []
    for index, finalizer in enumerate(finalizers):
        if not isinstance(finalizer, str) or _qualified_causes(finalizer, ""):
            causes.append(Cause("FieldValueInvalid", f"Invalid value: {finalizer!r}: a finalizer must be a qualified "
                                "name", f"metadata.finalizers[{index}]"))
    if old is not None and old.get("deletionTimestamp"):
        added = [f for f in finalizers if f not in (old.get("finalizers") or [])]
        if added:
            causes.append(Cause("FieldValueForbidden", "Forbidden: no new finalizers can be added if the object is "
                                f"being deleted, found new finalizers {added}", "metadata.finalizers"))
    for index, ref in enumerate(meta.get("ownerReferences") or []):
        for required in ("apiVersion", "kind", "name", "uid"):
            if not (isinstance(ref, dict) and ref.get(required)):
                causes.append(Cause("FieldValueRequired" if required != "uid" else "FieldValueInvalid",
                                    "Required value" if required != "uid" else 'Invalid value: "": uid must not be empty',
                                    f"metadata.ownerReferences[{index}].{required}"))
    controllers = sum(1 for ref in meta.get("ownerReferences") or [] if isinstance(ref, dict) and ref.get("controller"))
    if controllers > 1:
        causes.append(Cause("FieldValueInvalid", "Invalid value: only one reference can have Controller set to true",
                            "metadata.ownerReferences"))
    return causes
