"""CustomResourceDefinitions: validation on write, serving once Established, cleanup on delete.

What the apiextensions controllers do is emulated synchronously right after the write that triggers it
(scheduled on the event loop, so the create answer itself has no conditions, like the real server's):
NamesAccepted + Established conditions, acceptedNames, storedVersions; on delete the finalizer
customresourcecleanup.apiextensions.k8s.io, a Terminating condition, deletion of every custom object
(finalizers of those objects are honoured: the CRD waits for them), then removal and unserving.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .errors import Cause
from .registry import Registry, bucket_of, key_of
from .resources import COMMON_FIELDS, Resource
from .schema import pattern_error, prune
from .storage import Change, clone

__all__ = ["CrdController", "validate_crd", "CLEANUP_FINALIZER"]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
Obj = dict[str, Any]


def validate_crd(crd: Obj) -> list[Cause]:
    """The apiextensions validation rules clients hit most."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural = spec.get("group", ""), names.get("plural", "")
    causes = []
    if not group:
        causes.append(Cause("FieldValueRequired", "Required value", "spec.group"))
    elif "." not in group:
        causes.append(Cause("FieldValueInvalid", f'Invalid value: "{group}": should be a domain with at least one dot',
                            "spec.group"))
    if not plural:
        causes.append(Cause("FieldValueRequired", "Required value", "spec.names.plural"))
    if not names.get("kind"):
        causes.append(Cause("FieldValueRequired", "Required value", "spec.names.kind"))
    name = crd.get("metadata", {}).get("name", "")
    if plural and group and name != f"{plural}.{group}":
        causes.append(Cause("FieldValueInvalid", f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
                            "metadata.name"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{spec.get("scope", "")}": supported values: '
                            '"Cluster", "Namespaced"', "spec.scope"))
    if spec.get("preserveUnknownFields") is True:  # apiextensions.k8s.io/v1: pruning is always on (v1beta1's legacy)
        causes.append(Cause("FieldValueInvalid", "Invalid value: true: cannot set to true, set x-preserve-unknown-fields "
                            "to true in spec.versions[*].schema instead", "spec.preserveUnknownFields"))
    versions = spec.get("versions") or []
    if not versions:
        causes.append(Cause("FieldValueInvalid", "Invalid value: must have exactly one version marked as storage version",
                            "spec.versions"))
    if versions and sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(Cause("FieldValueInvalid", "Invalid value: must have exactly one version marked as storage version",
                            "spec.versions"))
    for index, version in enumerate(versions):
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not schema:
            causes.append(Cause("FieldValueRequired", "Required value: schemas are required",
                                f"spec.versions[{index}].schema.openAPIV3Schema"))
        else:
            causes += _field_paths(schema, f"spec.versions[{index}].schema.openAPIV3Schema")
            causes += _patterns(schema, f"spec.versions[{index}].schema.openAPIV3Schema")
    return causes


def _patterns(schema: Obj, where: str) -> list[Cause]:
    """Every `pattern` must compile as Go's regexp (ValidateStructural): Python's re takes lookarounds, backreferences
    and possessive quantifiers that a real API server refuses, with the CRD."""
    causes = []
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and (error := pattern_error(pattern)) is not None:
        causes.append(Cause("FieldValueInvalid", f"Invalid value: {json.dumps(pattern)}: must be a valid regular "
                            f"expression, but isn't: {error}", f"{where}.pattern"))
    for name, sub in (schema.get("properties") or {}).items():
        causes += _patterns(sub, f"{where}.properties[{name}]")
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            causes += _patterns(schema[key], f"{where}.{key}")
    for junctor in ("allOf", "anyOf", "oneOf"):
        for number, branch in enumerate(schema.get(junctor) or []):
            causes += _patterns(branch, f"{where}.{junctor}[{number}]")
    return causes


def _field_paths(schema: Obj, where: str) -> list[Cause]:
    """Every x-kubernetes-validations fieldPath must name a property the schema declares under the rule's node, as
    apiextensions' pathValid checks (`.metadata.name` at the root is refused: the root's metadata declares nothing)."""
    causes = []
    for number, rule in enumerate(schema.get("x-kubernetes-validations") or []):
        path = rule.get("fieldPath")
        if path is None:
            continue
        node: Obj | None = schema
        for part in path.split(".")[1:] if path.startswith(".") else [None]:
            node = (node.get("properties") or {}).get(part) if node is not None and part else None
        if node is None:
            causes.append(Cause("FieldValueInvalid", f'Invalid value: "{path}": fieldPath must be a valid path',
                                f"{where}.x-kubernetes-validations[{number}].fieldPath"))
    for name, sub in (schema.get("properties") or {}).items():
        causes += _field_paths(sub, f"{where}.properties[{name}]")
    if isinstance(schema.get("items"), dict):
        causes += _field_paths(schema["items"], f"{where}.items")
    if isinstance(schema.get("additionalProperties"), dict):
        causes += _field_paths(schema["additionalProperties"], f"{where}.additionalProperties")
    return causes


def resources_of(crd: Obj) -> list[Resource]:
    spec = crd["spec"]
    names = spec["names"]
    out = []
    storage = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), "")
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        selectable = {f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or [] if f.get("jsonPath")}
        out.append(Resource(
            spec["group"], version["name"], names["kind"], names["plural"],
            namespaced=spec.get("scope") == "Namespaced", singular=names.get("singular") or names["kind"].lower(),
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            subresources=("status",) if "status" in subresources else (),
            status_subresource="status" in subresources, generation=True, unconditional_update=False,
            strategic_merge=False, custom=True, schema=clone(version["schema"]["openAPIV3Schema"]),
            printer_columns=clone(version.get("additionalPrinterColumns") or []),
            field_labels=COMMON_FIELDS | selectable, storage_version=storage))
    return out


class CrdController:
    """Listens to CRD changes and keeps the served resources in step."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.served: dict[str, list[Resource]] = {}  # CRD name -> resources it serves
        self.pending: set[str] = set()  # reconcile scheduled
        self.waiting: set[str] = set()  # being deleted, waiting for custom objects with finalizers
        registry.listeners.append(self.on_change)

    @property
    def crd_resource(self) -> Resource:
        found = self.registry.find("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert found is not None
        return found

    def on_change(self, res: Resource, change: Change) -> None:
        if res.custom and change.type == "DELETED":
            for crd_name in list(self.waiting):
                served = self.served.get(crd_name) or []
                if served and bucket_of(served[0]) == bucket_of(res):
                    self._schedule(crd_name)
            return
        if res.group != "apiextensions.k8s.io" or res.plural != "customresourcedefinitions":
            return
        name = change.key[1]
        if change.type == "DELETED":
            self._unserve(name)
            return
        if change.prev is not None and change.prev.get("spec") == change.obj.get("spec") and not change.obj[
                "metadata"].get("deletionTimestamp"):
            return  # a status write (ours): nothing to re-serve
        self._schedule(name)

    def _schedule(self, name: str) -> None:
        if name not in self.pending:
            self.pending.add(name)
            asyncio.get_running_loop().call_soon(self._reconcile, name)

    def _reconcile(self, name: str) -> None:
        self.pending.discard(name)
        self.waiting.discard(name)
        crd = self.registry.current(self.crd_resource, None, name)
        if crd is None:
            return
        if crd["metadata"].get("deletionTimestamp"):
            self._cleanup(crd)
            return
        resources = resources_of(crd)
        for old in self.served.get(name, []):
            self.registry.unserve(old.group, old.version, old.plural)
        for res in resources:
            self.registry.serve(res)
        self.served[name] = resources
        self._prune_stored(resources)
        self._set_status(crd, [
            _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", self.registry.now()),
            _condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted",
                       self.registry.now()),
        ])

    def _prune_stored(self, resources: list[Resource]) -> None:
        """The real server prunes what the storage version's schema does not know from every object it decodes from
        etcd, so objects written under an older schema read back without the fields a new one dropped (an upgrade's
        CRDs). Rewritten in place here, resourceVersion unchanged, as every read then returns them."""
        for res in resources:
            if res.schema is None or res.version != res.storage_version:
                continue
            bucket = self.registry.storage.bucket(bucket_of(res))
            for key, obj in list(bucket.items()):
                pruned = prune(obj, res.schema)
                if pruned != obj:
                    bucket.objects[key] = pruned

    def _set_status(self, crd: Obj, conditions: list[Obj]) -> None:
        status = clone(crd.get("status") or {})
        by_type = {c["type"]: c for c in status.get("conditions") or []}
        for condition in conditions:
            old = by_type.get(condition["type"])
            if old and old.get("status") == condition["status"]:
                condition["lastTransitionTime"] = old.get("lastTransitionTime", condition["lastTransitionTime"])
            by_type[condition["type"]] = condition
        status["conditions"] = list(by_type.values())
        status["acceptedNames"] = {k: v for k, v in crd["spec"]["names"].items()}
        stored = [v["name"] for v in crd["spec"].get("versions") or [] if v.get("storage")]
        status["storedVersions"] = sorted(set(status.get("storedVersions") or []) | set(stored))
        if status == crd.get("status"):
            return
        new = dict(crd, status=status)
        self.registry.update(self.crd_resource, None, crd["metadata"]["name"], new,
                             manager="kube-apiserver", subresource="status")

    def _cleanup(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        resources = self.served.get(name) or resources_of(crd)
        self._set_status(crd, [_condition("Terminating", "True", "InstanceDeletionInProgress",
                                          "CustomResource deletion is in progress", self.registry.now())])
        remaining = 0
        if resources:
            res = resources[0]
            bucket = self.registry.storage.bucket(bucket_of(res))
            for key, obj in list(bucket.items()):
                if not obj["metadata"].get("deletionTimestamp"):
                    self.registry.delete(res, key[0] or None, key[1], {})
                if key in bucket.objects:
                    remaining += 1
        if remaining:
            self.waiting.add(name)  # the remaining objects' finalizers hold the CRD
            return
        if self.registry.current(self.crd_resource, None, name) is not None:
            self.registry.finish_finalizer(self.crd_resource, key_of(self.crd_resource, None, name), CLEANUP_FINALIZER)

    def _unserve(self, name: str) -> None:
        served = self.served.pop(name, [])
        for res in served:
            self.registry.unserve(res.group, res.version, res.plural)
        if served:
            bucket = self.registry.storage.drop_bucket(bucket_of(served[0]))
            for watcher in list(bucket.watchers if bucket else []):
                watcher.close()  # the real server ends watches of a removed resource
        self.pending.discard(name)
        self.waiting.discard(name)


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": kind, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}


