"""What kube-controller-manager would do, emulated only as far as the server is asked to:

- namespace controller (with the garbage collector, as both are kube-controller-manager's): a Terminating
  namespace is emptied, then removed; a bare API server leaves it Terminating, its `kubernetes` finalizer
  in place, whatever it holds;
- garbage collector (garbage_collector=True): deletes objects whose owners are all gone (background),
  runs the foregroundDeletion and orphan finalizers, and deletes objects created with dangling owners.

Work is scheduled on the event loop after the write that caused it, so answers come first ("background").
Everything else of the controller-manager (Job controller, pod termination by a kubelet, ...) is not emulated.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from typing import Any

from .registry import Registry, bucket_of
from .resources import Resource
from .storage import Change, Key, clone

__all__ = ["Controllers"]

Obj = dict[str, Any]


class Controllers:
    def __init__(self, registry: Registry, garbage_collector: bool) -> None:
        self.registry = registry
        self.gc = garbage_collector
        self.dependents: dict[str, set[tuple[str, Key]]] = defaultdict(set)  # owner uid -> (bucket, key)
        self.resource_of: dict[str, Resource] = {}  # bucket -> a resource serving it
        self._queued: set[tuple[str, Any]] = set()
        self._jobs: deque[tuple[str, Any]] = deque()
        self._draining = False
        registry.listeners.append(self.on_change)

    def on_change(self, res: Resource, change: Change) -> None:
        bucket = bucket_of(res)
        self.resource_of.setdefault(bucket, res)
        if not self.gc:
            return
        self._index(bucket, change)
        meta = change.obj["metadata"]
        if res.kind == "Namespace" and not res.group and change.type != "DELETED" and meta.get("deletionTimestamp"):
            self._later(("namespace", change.key[1]))
        if res.namespaced and change.type == "DELETED" and change.key[0]:
            if self._terminating(change.key[0]):
                self._later(("namespace", change.key[0]))
        if change.type == "DELETED":
            for dependent in list(self.dependents.get(meta["uid"], ())):
                self._later(("dependent", dependent))
            self.dependents.pop(meta["uid"], None)
        else:
            if meta.get("ownerReferences") and change.type == "ADDED":
                self._later(("dependent", (bucket, change.key)))
            finalizers = meta.get("finalizers") or []
            if meta.get("deletionTimestamp") and ("foregroundDeletion" in finalizers or "orphan" in finalizers):
                self._later(("owner", (bucket, change.key)))
        if change.type == "DELETED" or meta.get("deletionTimestamp"):
            for ref in meta.get("ownerReferences") or []:
                owner = self.registry.storage.by_uid.get(ref.get("uid", ""))
                if owner is not None:
                    self._later(("owner", owner))

    def _index(self, bucket: str, change: Change) -> None:
        old_refs = {r.get("uid") for r in (change.prev or {}).get("metadata", {}).get("ownerReferences") or []}
        new_refs = set() if change.type == "DELETED" else {
            r.get("uid") for r in change.obj["metadata"].get("ownerReferences") or []}
        for uid in old_refs - new_refs:
            self.dependents.get(uid, set()).discard((bucket, change.key))
        for uid in new_refs:
            self.dependents[uid].add((bucket, change.key))

    def _later(self, job: tuple[str, Any]) -> None:
        """Queue work; one loop callback drains the queue to a fixpoint, so a whole cascade is done before
        the client (on the same loop) reads the answer that caused it."""
        if job in self._queued:
            return
        self._queued.add(job)
        self._jobs.append(job)
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().call_soon(self._drain)

    def _drain(self) -> None:
        try:
            while self._jobs:
                job = self._jobs.popleft()
                self._queued.discard(job)
                self._run(job)
        finally:
            self._draining = False

    def _run(self, job: tuple[str, Any]) -> None:
        what, target = job
        if what == "namespace":
            self._finalize_namespace(target)
        elif what == "dependent":
            self._collect(*target)
        elif what == "owner":
            self._finish_owner(*target)

    # ----------------------------------------------------------------------------------- namespaces

    def _namespace_res(self) -> Resource | None:
        return self.registry.find("", "v1", "namespaces")

    def _terminating(self, name: str) -> bool:
        ns_res = self._namespace_res()
        found = self.registry.current(ns_res, None, name) if ns_res else None
        return bool(found and found["metadata"].get("deletionTimestamp"))

    def _finalize_namespace(self, name: str) -> None:
        ns_res = self._namespace_res()
        if ns_res is None or not self._terminating(name):
            return
        remaining = 0
        for bucket_name, bucket in list(self.registry.storage.buckets.items()):
            start, end = bucket.namespace_range(name)
            if start == end:
                continue
            res = self.resource_of.get(bucket_name)
            for key in list(bucket.keys[start:end]):
                obj = bucket.objects.get(key)
                if obj is None:
                    continue
                if self.gc and res is not None and not obj["metadata"].get("deletionTimestamp"):
                    self.registry.delete(res, key[0], key[1], {"propagationPolicy": "Background"})
                if key in bucket.objects:
                    remaining += 1
        if remaining:
            self._content_remaining(ns_res, name, remaining)
            return  # re-checked when the next object of the namespace is deleted
        ns = self.registry.current(ns_res, None, name)
        if ns is None:
            return
        new = clone(ns)
        new.setdefault("spec", {})["finalizers"] = [f for f in (ns.get("spec") or {}).get("finalizers") or []
                                                    if f != "kubernetes"]
        self.registry.update(ns_res, None, name, new, manager="namespace-controller", subresource="finalize")

    def _content_remaining(self, ns_res: Resource, name: str, remaining: int) -> None:
        """The condition the namespace controller sets from its first pass (its mark on a namespace it works on)."""
        ns = self.registry.current(ns_res, None, name)
        if ns is None or (ns.get("status") or {}).get("conditions"):
            return
        new = clone(ns)
        new["status"] = {**(ns.get("status") or {}), "conditions": [{
            "type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
            "message": f"Some resources are remaining: {remaining} objects", "lastTransitionTime": self.registry.now()}]}
        self.registry.update(ns_res, None, name, new, manager="namespace-controller", subresource="status")

    # ----------------------------------------------------------------------------------- garbage collector

    def _owners_alive(self, obj: Obj) -> tuple[bool, list[Obj]]:
        """(some owner still exists, the owner objects that exist). An owner in another namespace, or a
        namespaced owner of a cluster-scoped object, counts as absent (the GC rejects such references)."""
        alive = []
        namespace = obj["metadata"].get("namespace", "")
        for ref in obj["metadata"].get("ownerReferences") or []:
            where = self.registry.storage.by_uid.get(ref.get("uid", ""))
            if where is not None and where[1][0] not in ("", namespace):
                continue
            if where is not None:
                owner = self.registry.storage.bucket(where[0]).objects.get(where[1])
                if owner is not None:
                    alive.append(owner)
        return bool(alive), alive

    def _collect(self, bucket_name: str, key: Key) -> None:
        obj = self.registry.storage.bucket(bucket_name).objects.get(key)
        res = self.resource_of.get(bucket_name)
        if obj is None or res is None or obj["metadata"].get("deletionTimestamp"):
            return
        alive, owners = self._owners_alive(obj)
        if alive:
            # an owner being deleted in the foreground takes its dependents with it
            if all("foregroundDeletion" in (o["metadata"].get("finalizers") or []) for o in owners):
                self.registry.delete(res, key[0] or None, key[1], {"propagationPolicy": "Foreground"})
            return
        self.registry.delete(res, key[0] or None, key[1], {"propagationPolicy": "Background"})

    def _finish_owner(self, bucket_name: str, key: Key) -> None:
        obj = self.registry.storage.bucket(bucket_name).objects.get(key)
        res = self.resource_of.get(bucket_name)
        if obj is None or res is None or not obj["metadata"].get("deletionTimestamp"):
            return
        finalizers = obj["metadata"].get("finalizers") or []
        dependents = [d for d in self.dependents.get(obj["metadata"]["uid"], ())
                      if self.registry.storage.bucket(d[0]).objects.get(d[1]) is not None]
        if "orphan" in finalizers:
            for dep_bucket, dep_key in dependents:
                self._drop_owner(dep_bucket, dep_key, obj["metadata"]["uid"])
            self.registry.finish_finalizer(res, key, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = []
            for dep_bucket, dep_key in dependents:
                dep = self.registry.storage.bucket(dep_bucket).objects[dep_key]
                dep_res = self.resource_of.get(dep_bucket)
                if dep_res is not None and not dep["metadata"].get("deletionTimestamp"):
                    self.registry.delete(dep_res, dep_key[0] or None, dep_key[1], {"propagationPolicy": "Foreground"})
                if dep_key in self.registry.storage.bucket(dep_bucket).objects and any(
                        r.get("uid") == obj["metadata"]["uid"] and r.get("blockOwnerDeletion")
                        for r in dep["metadata"].get("ownerReferences") or []):
                    blocking.append(dep_key)
            if not blocking:
                self.registry.finish_finalizer(res, key, "foregroundDeletion")

    def _drop_owner(self, bucket_name: str, key: Key, uid: str) -> None:
        obj = self.registry.storage.bucket(bucket_name).objects.get(key)
        res = self.resource_of.get(bucket_name)
        if obj is None or res is None:
            return
        new = clone(obj)
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        if refs:
            new["metadata"]["ownerReferences"] = refs
        else:
            new["metadata"].pop("ownerReferences", None)
        self.registry.update(res, key[0] or None, key[1], new, manager="garbage-collector")
