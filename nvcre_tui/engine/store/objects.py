"""Small, store-independent helpers over Kubernetes-JSON objects."""

from __future__ import annotations

import copy
import marshal
from collections.abc import Mapping
from typing import Any

from .errors import Conflict, Invalid
from .protocol import LabelSelectorInput, ResourceKind
from .selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector

__all__ = [
    "copy_json", "merge_patch", "spec_body", "identify", "scoped_namespace", "owner_uids",
    "parse_resource_version", "check_preconditions", "parse_selectors", "text_maps_problem",
]

# Fields that are neither metadata nor status: a change to any of them bumps metadata.generation.
_NOT_SPEC = frozenset({"apiVersion", "kind", "metadata", "status"})


def copy_json(value: Any) -> Any:
    """A deep copy of a Kubernetes-JSON value (dicts, lists, text, numbers, booleans, None), in C: four times faster
    than copy.deepcopy on a large object (a Workflow of 3,000 groups is megabytes, copied on every reconcile and
    status patch). A value marshal cannot copy (another type inside) is copied by copy.deepcopy."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


def merge_patch(target: Any, patch: Any) -> Any:
    """JSON merge patch (RFC 7386): mappings merge recursively, None deletes a key, anything else replaces.
    Returns a new value; neither argument is modified."""
    if not isinstance(patch, Mapping):
        return patch
    merged = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def spec_body(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an object whose change is a new generation (everything but metadata and status)."""
    return {k: v for k, v in obj.items() if k not in _NOT_SPEC}


def scoped_namespace(kind: ResourceKind, namespace: str | None, name: str | None = None) -> str | None:
    """The namespace to use: required (non-empty) for namespaced kinds, always None for cluster-scoped ones."""
    if not kind.namespaced:
        return None
    if not isinstance(namespace, str) or not namespace:
        raise Invalid.about(kind, name, None, f"a namespace is required ({kind.kind} is namespaced)")
    return namespace


def identify(kind: ResourceKind, obj: object, allow_generate_name: bool = False) -> tuple[str, str | None]:
    """Check that `obj` is an object of `kind` and return its (name, namespace)."""
    if not isinstance(obj, Mapping):
        raise Invalid.about(kind, None, None, f"expected an object (mapping), got {type(obj).__name__}")
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        raise Invalid.about(kind, None, None, "metadata must be a mapping with at least a name")
    for field, expected in (("apiVersion", kind.api_version), ("kind", kind.kind)):
        if obj.get(field) not in (None, expected):
            raise Invalid.about(kind, metadata.get("name"), metadata.get("namespace"),
                                f"{field} is {obj.get(field)!r}, expected {expected!r}")
    name = metadata.get("name") or ""
    generate = allow_generate_name and not name and isinstance(metadata.get("generateName"), str)
    if not isinstance(name, str) or not (name or generate):
        raise Invalid.about(kind, None, metadata.get("namespace"),
                            f"metadata.name must be a non-empty string, got {name!r}")
    return name, scoped_namespace(kind, metadata.get("namespace"), name or None)


def text_maps_problem(metadata: Mapping[str, Any]) -> str | None:
    """What is wrong with an object's labels or annotations read from a file (every reader, selectors and discovery,
    takes them as text by text), else None."""
    for field in ("labels", "annotations"):
        found = metadata.get(field)
        if found is not None and not (isinstance(found, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())):
            return f"metadata.{field} is not a mapping of text to text"
    return None


def owner_uids(obj: Mapping[str, Any]) -> set[str]:
    """UIDs named by the object's ownerReferences."""
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return {ref["uid"] for ref in refs if isinstance(ref, Mapping) and isinstance(ref.get("uid"), str)}


def parse_resource_version(kind: ResourceKind, resource_version: str) -> int:
    """A resourceVersion as an integer (the in-memory store counts writes); Invalid otherwise."""
    try:
        return int(resource_version)
    except (TypeError, ValueError):
        raise Invalid.about(kind, None, None, f"resourceVersion {resource_version!r} is not an integer") from None


def check_preconditions(
    kind: ResourceKind, given: Mapping[str, Any], current: Mapping[str, Any], rv_required: bool
) -> None:
    """Conflict unless `given` uid / resourceVersion (when present, or when the RV is required) match `current`."""
    metadata = current["metadata"]
    where = (metadata["name"], metadata.get("namespace"))
    uid, rv = given.get("uid"), given.get("resourceVersion")
    if uid and uid != metadata["uid"]:
        raise Conflict.about(kind, *where, f"uid precondition {uid} does not match the stored object "
                                           f"({metadata['uid']})")
    if rv is None and rv_required:
        raise Conflict.about(kind, *where, "metadata.resourceVersion is required; get the object and retry")
    if rv is not None and str(rv) != metadata["resourceVersion"]:
        raise Conflict.about(
            kind, *where,
            f"resourceVersion {rv} is stale (stored {metadata['resourceVersion']}); get the object and retry",
        )

def parse_selectors(
    kind: ResourceKind, label_selector: LabelSelectorInput, field_selector: str | None
) -> tuple[LabelSelector, FieldSelector]:
    """Both selectors of a list or watch; a malformed one is Invalid naming the kind."""
    try:
        return parse_label_selector(label_selector), parse_field_selector(field_selector)
    except ValueError as error:
        raise Invalid.about(kind, None, None, str(error)) from None
