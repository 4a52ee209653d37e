"""Object semantics of the API server's generic registry: create, update, patch-as-update, delete, and the
per-kind strategies (status subresource, generation, finalizers, graceful pod deletion, NamespaceLifecycle).

HTTP parsing lives in server.py; this module speaks dicts and raises ApiError.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from nvcre_tui.engine.clock import Clock, format_time

from . import errors
from .builtins import check_immutable, prepare_create, validate_builtin
from .errors import ApiError, Cause
from .fieldpaths import ListTypes
from .managed import ManagedFields
from .meta import GENERATE_ALPHABET, SYSTEM_FIELDS, validate_metadata
from .patch import apply_patch
from .resources import Resource
from .schema import apply_defaults, prune, validate, validate_rules
from .storage import Change, Key, Storage, clone
from .typed import schema_of_kind, type_mismatch

__all__ = ["Registry", "bucket_of", "key_of"]

Obj = dict[str, Any]
ETCD_MAX_REQUEST_BYTES = 1572864  # etcd --max-request-bytes default (1.5 MiB)
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
GC_FINALIZERS = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}


def bucket_of(res: Resource) -> str:
    """Storage prefix of a resource: shared by all its versions, as etcd's /registry/<group>/<plural>."""
    return f"{res.group}/{res.plural}"


def key_of(res: Resource, namespace: str | None, name: str) -> Key:
    return (namespace or "", name) if res.namespaced else ("", name)


def _body_outside_metadata(obj: Obj, with_status: bool) -> Obj:
    skip = {"metadata", "apiVersion", "kind"} | ({"status"} if with_status else set())
    return {k: v for k, v in obj.items() if k not in skip}


class Registry:
    """Every write goes through here; `listeners` (controllers) hear about each stored change."""

    def __init__(self, storage: Storage, clock: Clock, seed: int = 0) -> None:
        self.storage = storage
        self.clock = clock
        self.rng = random.Random(seed)
        self.resources: dict[tuple[str, str, str], Resource] = {}
        self.listeners: list[Callable[[Resource, Change], None]] = []
        self.managed = ManagedFields(clock)
        # per (group, plural): extra validation (CRDs) and the finalizer a delete hands the object to
        self.validators: dict[tuple[str, str], Callable[[Obj], list[Cause]]] = {}
        self.delete_finalizers: dict[tuple[str, str], str] = {}
        # per (group, plural): what a mutating admission webhook does to an object being created (Kueue suspending a
        # queued TrainJob, say), before validation, as the real admission chain runs
        self.mutators: dict[tuple[str, str], Callable[[Obj], None]] = {}
        # the request being served: its fieldValidation directive and the warnings it collects
        self.field_validation = "Warn"
        self.warnings: list[str] = []

    # --------------------------------------------------------------------------------- catalogue

    def serve(self, res: Resource) -> None:
        self.resources[(res.group, res.version, res.plural)] = res

    def unserve(self, group: str, version: str, plural: str) -> None:
        self.resources.pop((group, version, plural), None)

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        return self.resources.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition("/")
        for res in self.resources.values():
            if res.group == group and res.version == version and res.kind == kind:
                return res
        return None

    # --------------------------------------------------------------------------------- reads

    def current(self, res: Resource, namespace: str | None, name: str) -> Obj | None:
        return self.storage.bucket(bucket_of(res)).objects.get(key_of(res, namespace, name))

    def get(self, res: Resource, namespace: str | None, name: str) -> Obj:
        found = self.current(res, namespace, name)
        if found is None:
            raise errors.not_found(res.plural, name, res.group)
        return found

    # --------------------------------------------------------------------------------- helpers

    def now(self) -> str:
        return format_time(self.clock.now())

    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _namespace_admission(self, res: Resource, namespace: str, name: str) -> None:
        """NamespaceLifecycle: no new objects in a missing or terminating namespace."""
        ns_res = self.find("", "v1", "namespaces")
        found = self.current(ns_res, None, namespace) if ns_res else None
        if found is None:
            raise errors.not_found("namespaces", namespace)
        if found.get("metadata", {}).get("deletionTimestamp"):
            why = f"unable to create new content in namespace {namespace} because it is being terminated"
            raise errors.forbidden(res.plural, name, why, res.group,
                                   [Cause("NamespaceTerminating", f"namespace {namespace} is being terminated",
                                          "metadata.namespace")])

    def _check_type(self, res: Resource, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a JSON object describing a {res.kind}")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version and api_version not in (res.api_version, res.storage_api_version):
            raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected "
                                     f"API version ({res.api_version})")
        if kind and kind != res.kind:
            raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({res.kind})")
        out = {"apiVersion": res.storage_api_version, "kind": res.kind,
               **{k: clone(v) for k, v in body.items() if k not in ("apiVersion", "kind")}}
        if not isinstance(out.get("metadata", {}), dict):
            raise errors.bad_request("metadata must be an object")
        out.setdefault("metadata", {})
        return out

    def _admit(self, res: Resource, obj: Obj, old: Obj | None) -> Obj:
        """Prune/default (custom resources) and validate; raises Invalid with every cause."""
        if res.schema is not None:
            obj = self._prune(res, obj)
            apply_defaults(obj, res.schema)
        elif self._typed(res) is not None:
            mismatch = type_mismatch(obj, self._typed(res) or {})
            if mismatch:
                raise errors.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                                         f"{mismatch}")
            obj = self._prune(res, obj)  # a typed decode drops what the Go type lacks
        name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
        causes = validate_metadata(obj["metadata"], res.name_rule, old["metadata"] if old else None)
        if res.schema is not None:
            causes += validate(obj, res.schema)
            if not causes:
                causes += validate_rules(obj, old, res.schema, update=old is not None)
        elif not res.custom:
            causes += validate_builtin(res.group, res.kind, obj)
            if old is not None:
                causes += check_immutable(res.group, res.kind, obj, old)
        extra = self.validators.get((res.group, res.plural))
        if extra is not None and not causes:
            causes += extra(obj)
        if causes:
            raise errors.invalid(res.kind, name, causes, res.group)
        return obj

    @staticmethod
    def _typed(res: Resource) -> dict[str, Any] | None:
        return None if res.custom else schema_of_kind(res.group, res.version, res.kind)

    def _prune(self, res: Resource, obj: Obj) -> Obj:
        """Pruning by the structural (custom) or typed (built-in) schema, reporting unknown fields per the
        request's fieldValidation (Warn by default)."""
        schema = res.schema if res.schema is not None else self._typed(res)
        if schema is None:
            return obj
        dropped: list[str] = []
        out = prune(obj, schema, dropped)
        if dropped and self.field_validation == "Strict":
            raise errors.bad_request("strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in dropped))
        if dropped and self.field_validation == "Warn":
            self.warnings += [f'unknown field "{p}"' for p in dropped if f'unknown field "{p}"' not in self.warnings]
        return out

    def _notify(self, res: Resource, change: Change) -> None:
        for listener in list(self.listeners):
            listener(res, change)

    def _store(self, res: Resource, key: Key, obj: Obj) -> Obj:
        if len(json.dumps(obj, separators=(",", ":"))) > ETCD_MAX_REQUEST_BYTES:
            raise ApiError("", "etcdserver: request is too large", code=500)  # etcd's limit, passed on as is
        rv = self.storage.next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        change = self.storage.put(bucket_of(res), key, obj, rv)
        self._notify(res, change)
        return obj

    def remove(self, res: Resource, key: Key, final: Obj | None = None) -> Obj:
        """Take an object out of storage (DELETED event at a new revision); returns its last state
        (`final` when an update removing the last finalizer deletes it)."""
        bucket = self.storage.bucket(bucket_of(res))
        prev = final if final is not None else bucket.objects[key]
        rv = self.storage.next_rv()
        last = dict(prev, metadata=dict(prev["metadata"], resourceVersion=str(rv)))
        change = self.storage.remove(bucket_of(res), key, last, rv)
        self._notify(res, change)
        return prev

    # --------------------------------------------------------------------------------- create

    def create(self, res: Resource, namespace: str | None, body: Any, *, manager: str, dry_run: bool = False,
               subresource: str = "", operation: str = "Update") -> Obj:
        obj = self._check_type(res, body)
        meta = obj["metadata"]
        if res.namespaced:
            if meta.get("namespace") and namespace and meta["namespace"] != namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                         "the request")
            namespace = namespace or meta.get("namespace")
            if not namespace:
                raise errors.bad_request("the server could not find the requested resource: a namespace is required")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise errors.invalid(res.kind, "", [Cause("FieldValueRequired",
                                                          "Required value: name or generateName is required",
                                                          "metadata.name")], res.group)
            meta["name"] = meta["generateName"] + "".join(self.rng.choice(GENERATE_ALPHABET) for _ in range(5))
        name = meta["name"]
        if res.namespaced:
            self._namespace_admission(res, namespace or "", name)
        if meta.get("resourceVersion"):
            # the real server answers this with a bare 500 (no reason)
            raise ApiError("", "resourceVersion should not be set on objects to be created", code=500)
        for system in SYSTEM_FIELDS:
            meta.pop(system, None)
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = self.now()
        if res.custom or res.generation:
            meta["generation"] = 1
        if res.custom:
            if res.status_subresource:
                obj.pop("status", None)
        elif not res.keep_status_on_create:
            obj.pop("status", None)
        prepare_create(res.group, res.kind, obj)
        if (mutate := self.mutators.get((res.group, res.plural))) is not None:
            mutate(obj)
        obj = self._admit(res, obj, None)
        key = key_of(res, namespace, name)
        if self.storage.bucket(bucket_of(res)).objects.get(key) is not None:
            raise errors.already_exists(res.plural, name, res.group)
        self.managed.record(obj, None, manager, operation, subresource, res.api_version, ListTypes(res.schema),
                            res.status_subresource)
        if dry_run:
            return obj
        return self._store(res, key, obj)

    # --------------------------------------------------------------------------------- update

    def update(self, res: Resource, namespace: str | None, name: str, body: Any, *, manager: str,
               subresource: str = "", dry_run: bool = False, require_rv: bool | None = None,
               operation: str = "Update") -> tuple[Obj, bool]:
        """PUT semantics; returns (object, created)."""
        obj = self._check_type(res, body)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                     f"({name})")
        if res.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                     "request")
        old = self.current(res, namespace, name)
        if old is None:
            if res.create_on_update and not subresource:
                meta["name"] = name
                return self.create(res, namespace, obj, manager=manager, dry_run=dry_run), True
            raise errors.not_found(res.plural, name, res.group)
        if meta.get("uid") and meta["uid"] != old["metadata"]["uid"]:
            raise errors.invalid(res.kind, name, [Cause("FieldValueInvalid", f'Invalid value: "{meta["uid"]}": field '
                                                        "is immutable", "metadata.uid")], res.group)
        given_rv = meta.get("resourceVersion")
        if given_rv:
            if given_rv != old["metadata"]["resourceVersion"]:
                raise errors.conflict(res.plural, name, res.group)
        elif require_rv if require_rv is not None else not res.unconditional_update:
            raise errors.invalid(res.kind, name, [Cause("FieldValueInvalid",
                                                        "Invalid value: 0x0: must be specified for an update",
                                                        "metadata.resourceVersion")], res.group)
        return self._update_from(res, old, obj, manager=manager, subresource=subresource, dry_run=dry_run,
                                 operation=operation), False

    def _update_from(self, res: Resource, old: Obj, obj: Obj, *, manager: str, subresource: str, dry_run: bool,
                     operation: str = "Update") -> Obj:
        """The strategy part of an update: what each endpoint may change, generation, finalizers, storage."""
        old_meta = old["metadata"]
        if subresource == "finalize":
            new = clone(old)
            new.setdefault("spec", {})["finalizers"] = list((obj.get("spec") or {}).get("finalizers") or [])
        elif subresource == "status":
            new = clone(old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            if "managedFields" in obj["metadata"]:
                new["metadata"]["managedFields"] = obj["metadata"]["managedFields"]
        else:
            new = obj
            meta = new["metadata"]
            for system in SYSTEM_FIELDS:
                if system in old_meta:
                    meta[system] = old_meta[system]
                else:
                    meta.pop(system, None)
            meta["name"] = old_meta["name"]
            if res.namespaced:
                meta["namespace"] = old_meta["namespace"]
            if res.status_subresource:
                if "status" in old:
                    new["status"] = clone(old["status"])
                else:
                    new.pop("status", None)
            if res.kind == "Namespace" and not res.group:
                new["spec"] = clone(old.get("spec", {}))  # spec.finalizers change only via /finalize
        new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        new = self._admit(res, new, old)
        with_status = res.status_subresource or not res.custom
        if (res.custom or res.generation) and _body_outside_metadata(new, with_status) != _body_outside_metadata(
                old, with_status):
            new["metadata"]["generation"] = old_meta.get("generation", 1) + 1
        self.managed.record(new, old, manager, operation, subresource, res.api_version, ListTypes(res.schema),
                            res.status_subresource)
        if _same(new, old):
            return old
        if dry_run:
            return new
        key = key_of(res, old_meta.get("namespace"), old_meta["name"])
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") and not _spec_finalizers(new):
            return self.remove(res, key, final=new)
        return self._store(res, key, new)

    # --------------------------------------------------------------------------------- patch / apply

    def patch(self, res: Resource, namespace: str | None, name: str, patch: bytes, content_type: str, *,
              manager: str, subresource: str = "", dry_run: bool = False, force: bool = False) -> tuple[Obj, bool]:
        """PATCH semantics for every patch type; returns (object, created)."""
        if content_type == "application/apply-patch+yaml":
            return self.apply(res, namespace, name, patch, manager=manager, subresource=subresource,
                              dry_run=dry_run, force=force)
        if content_type == "application/strategic-merge-patch+json" and not res.strategic_merge:
            raise ApiError("UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                           "media types include: application/json-patch+json, application/merge-patch+json, "
                           "application/apply-patch+yaml")
        old = self.get(res, namespace, name)
        patched = apply_patch(old, patch, content_type, res)
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch did not produce an object")
        meta = patched.setdefault("metadata", {}) if isinstance(patched.get("metadata", {}), dict) else None
        if meta is None:
            raise errors.bad_request("metadata must be an object")
        if meta.get("name", name) != name:
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                                     f"({name})")
        given_rv = meta.get("resourceVersion")
        if given_rv and given_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(res.plural, name, res.group)
        patched = self._check_type(res, patched)
        return self._update_from(res, old, patched, manager=manager, subresource=subresource, dry_run=dry_run), False

    def apply(self, res: Resource, namespace: str | None, name: str, patch: bytes, *, manager: str,
              subresource: str = "", dry_run: bool = False, force: bool = False) -> tuple[Obj, bool]:
        """Server-side apply: create when absent, else merge by managed fields (409 on conflicts unless force)."""
        if not manager:
            raise errors.bad_request("fieldManager is required for apply requests")
        applied = _apply_body(patch)
        applied = self._check_type(res, applied)
        meta = applied["metadata"]
        if meta.get("name", name) != name:
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                                     f"({name})")
        if res.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                     "request")
        applied = self._prune(res, applied)
        live = self.current(res, namespace, name)
        if meta.get("resourceVersion") and live is not None and meta["resourceVersion"] != live["metadata"][
                "resourceVersion"]:
            raise errors.conflict(res.plural, name, res.group)
        if live is None and subresource:
            raise errors.not_found(res.plural, name, res.group)
        merged = self.managed.apply(live, applied, manager, force, subresource, res.api_version,
                                    ListTypes(res.schema), res.status_subresource, res.plural, name)
        merged["metadata"]["name"] = name
        if live is None:
            return self.create(res, namespace, merged, manager=manager, dry_run=dry_run, operation="Apply"), True
        merged = self._check_type(res, merged)
        return self._update_from(res, live, merged, manager=manager, subresource=subresource, dry_run=dry_run,
                                 operation="Apply"), False

    # --------------------------------------------------------------------------------- pods/binding

    def bind(self, res: Resource, namespace: str | None, name: str, body: Any, *, manager: str,
             dry_run: bool = False) -> Obj:
        """POST pods/<name>/binding, what a scheduler does: set spec.nodeName once (409 when already bound)."""
        pod = self.get(res, namespace, name)
        target = (body or {}).get("target") if isinstance(body, dict) else None
        if not isinstance(target, dict) or not target.get("name"):
            raise errors.invalid("Binding", name, [Cause("FieldValueRequired", "Required value", "target.name")])
        if target.get("kind", "Node") != "Node":
            raise errors.invalid("Binding", name, [Cause("FieldValueNotSupported", f'Unsupported value: '
                                 f'"{target.get("kind")}": supported values: "Node"', "target.kind")])
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise errors.conflict("pods/binding", name, "", f'pod {name} is already assigned to node "{bound}"')
        if pod["metadata"].get("deletionTimestamp"):
            raise errors.conflict("pods/binding", name, "", f"pod {name} is being deleted, cannot be assigned to a host")
        new = clone(pod)
        new.setdefault("spec", {})["nodeName"] = target["name"]
        status = new.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        status["conditions"] = [*conditions, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                              "lastTransitionTime": self.now()}]
        self.managed.record(new, pod, manager, "Update", "binding", res.api_version, ListTypes(None), True)
        if not dry_run:
            self._store(res, key_of(res, namespace, name), new)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    # --------------------------------------------------------------------------------- delete

    def delete(self, res: Resource, namespace: str | None, name: str, options: dict[str, Any], *,
               dry_run: bool = False) -> tuple[Obj, bool]:
        """DELETE semantics; returns (object, removed now)."""
        old = self.get(res, namespace, name)
        meta = old["metadata"]
        preconditions = options.get("preconditions") or {}
        if preconditions.get("uid") and preconditions["uid"] != meta["uid"]:
            raise errors.conflict(res.plural, name, res.group, f"Precondition failed: UID in precondition: "
                                  f"{preconditions['uid']}, UID in object meta: {meta['uid']}")
        if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != meta["resourceVersion"]:
            raise errors.conflict(res.plural, name, res.group, "Precondition failed: ResourceVersion in precondition: "
                                  f"{preconditions['resourceVersion']}, ResourceVersion in object meta: "
                                  f"{meta['resourceVersion']}")
        if res.kind == "Namespace" and not res.group and name in IMMORTAL_NAMESPACES:
            raise errors.forbidden("namespaces", name, "this namespace may not be deleted")
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise errors.invalid("DeleteOptions", "", [Cause("FieldValueNotSupported", f'Unsupported value: "{policy}": '
                                 'supported values: "Foreground", "Background", "Orphan"', "propagationPolicy")])
        new_meta = dict(meta)
        finalizers = list(meta.get("finalizers") or [])
        pending_grace = bool(meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds"))
        if policy is not None and not pending_grace:
            # deletionFinalizersForGarbageCollection: an explicit policy sets the garbage collector's finalizers, on an
            # object already being deleted too (Background drops foregroundDeletion/orphan; Foreground/Orphan hand it to
            # the collector by theirs). Only a pod still in its grace period keeps them (its deletion is pending).
            finalizers = [f for f in finalizers if f not in GC_FINALIZERS.values()] + (
                [GC_FINALIZERS[policy]] if policy in GC_FINALIZERS else [])
        own = self.delete_finalizers.get((res.group, res.plural))
        if own and own not in finalizers and not meta.get("deletionTimestamp"):
            finalizers.append(own)
        grace = self._grace_period(res, old, options)
        spec_finalizers = _spec_finalizers(old)
        if not finalizers and not spec_finalizers and not grace:
            if dry_run:
                return old, True
            return self.remove(res, key_of(res, namespace, name)), True
        if meta.get("deletionTimestamp"):
            current_grace = meta.get("deletionGracePeriodSeconds", 0)
            if finalizers != list(meta.get("finalizers") or []) and not pending_grace:
                changed = dict(old, metadata=dict(meta, finalizers=finalizers))
                return (changed, False) if dry_run else (self._store(res, key_of(res, namespace, name), changed), False)
            if grace is None or grace >= current_grace:
                return old, False  # already being deleted; nothing shortens
        new_meta["finalizers"] = finalizers
        if not finalizers:
            new_meta.pop("finalizers")
        deadline = self.clock.now() + timedelta(seconds=grace or 0)
        new_meta["deletionTimestamp"] = format_time(deadline)
        new_meta["deletionGracePeriodSeconds"] = grace or 0
        new = dict(old, metadata=new_meta)
        if res.kind == "Namespace" and not res.group:
            new["status"] = dict(old.get("status") or {}, phase="Terminating")
        if dry_run:
            return new, False
        return self._store(res, key_of(res, namespace, name), new), False

    def _grace_period(self, res: Resource, obj: Obj, options: dict[str, Any]) -> int | None:
        """Pods bound to a node terminate gracefully (the kubelet finishes the delete); all else is immediate."""
        if res.custom or res.group or res.kind != "Pod":
            return None
        given = options.get("gracePeriodSeconds")
        if given is not None and int(given) <= 0:
            return None
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return None
        return int(given) if given is not None else int(spec.get("terminationGracePeriodSeconds", 30))

    # --------------------------------------------------------------------------------- GC/namespace helpers

    def finish_finalizer(self, res: Resource, key: Key, finalizer: str) -> None:
        """Drop one finalizer as its controller would (deleting the object when it was the last)."""
        obj = self.storage.bucket(bucket_of(res)).objects.get(key)
        if obj is None or finalizer not in (obj["metadata"].get("finalizers") or []):
            return
        new = clone(obj)
        new["metadata"]["finalizers"] = [f for f in obj["metadata"]["finalizers"] if f != finalizer]
        self._update_from(res, obj, new, manager="emulated-controller", subresource="", dry_run=False)


def _spec_finalizers(obj: Obj) -> list[str]:
    """Namespaces have their own finalizers in spec (emptied through /finalize)."""
    if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
        return list((obj.get("spec") or {}).get("finalizers") or [])
    return []


def _same(new: Obj, old: Obj) -> bool:
    """An update that changes nothing but managedFields timestamps is a no-op (no new revision)."""
    if new == old:
        return True
    strip = lambda o: dict(o, metadata={k: v for k, v in o["metadata"].items() if k != "managedFields"})  # noqa: E731
    return strip(new) == strip(old) and _fields_only(new) == _fields_only(old)


def _fields_only(obj: Obj) -> list[tuple[Any, ...]]:
    return [(m.get("manager"), m.get("operation"), m.get("subresource"), m.get("fieldsV1"))
            for m in obj["metadata"].get("managedFields") or []]


def _apply_body(patch: bytes) -> Any:
    """An apply body: YAML, which clients send as JSON (JSON is YAML). JSON is read by the json module
    (a hundredfold faster than PyYAML's pure-Python parser, and the same objects); anything else by YAML."""
    import yaml

    def no_constant(name: str) -> Any:  # NaN / Infinity are not JSON: let YAML read them as before
        raise ValueError(name)

    try:
        return json.loads(patch or b"{}", parse_constant=no_constant)
    except ValueError:
        pass
    try:
        return yaml.safe_load(patch.decode() or "{}")
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise errors.bad_request(f"error decoding YAML: {error}") from None
