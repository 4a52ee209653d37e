"""The runner's view of pods: one watch of every pod nvcre made (label `nvcre.nvidia.com/job`), cluster-wide (a viewer's: its namespace),
and the routing of its events (and of Node events) to the WorkloadRuns they concern.

A run's pods are read from this cache, never listed per look: the cache lists once, then follows the
watch (resuming from its resourceVersion, re-listing only on 410 Gone), like an informer. Each pod or
Node change wakes the runs it belongs to through the engine's work queue, so a pod that starts, ends or
vanishes is seen when it happens rather than at the next poll.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_JOB
from nvcre_tui.engine.runners.kubernetes.pods import taken_from_the_run
from nvcre_tui.engine.store.cache import Key, WatchCache
from nvcre_tui.engine.store.protocol import NODE, POD, WORKLOADRUN, ResourceKind, ResourceStore

Obj = dict[str, Any]
Wake = Callable[[Hashable], None]

__all__ = ["PodWatch", "pod_cache"]


def pod_cache(store: ResourceStore, namespace: str | None = None) -> WatchCache:
    """A watch cache of the pods of nvcre workloads only (label selector: the job label exists), in every namespace
    (an engine) or one (a viewer, whose RBAC may list pods in no other)."""
    return WatchCache(store, (POD,), label_keys=(LABEL_JOB,), selectors={POD: LABEL_JOB}, namespace=namespace)


class PodWatch:
    """Pods by run, and which runs a pod or Node event wakes."""

    def __init__(self, cache: WatchCache) -> None:
        self.cache = cache
        self._wake: Wake | None = None
        self._nodes: WatchCache | None = None  # the engine's cache this watch hears Node changes from (connect)
        self._run_of: dict[tuple[str, str], Key] = {}   # (namespace, job label) -> the run's key
        self._pair_of: dict[Key, tuple[str, str]] = {}  # and back
        self._members: dict[Key, tuple[str, ...]] = {}  # run key -> its group's nodes
        self._runs_on: dict[str, set[Key]] = {}          # node -> keys of the runs on it (a Node event is one lookup)
        self.woken = 0  # runs woken by events (tests and the bench count it)
        # A tracked run's pods Kubernetes deleted for a reason not their node's health (a NoExecute taint, a drain), as
        # last seen: once gone, nothing else says why, and the run read its pod as lost with its node (pods.judge).
        self._taken: dict[tuple[str, str], list[Obj]] = {}
        cache.subscribe(self._pod_changed)

    async def start(self) -> None:
        """List once, then follow the watch (idempotent)."""
        await self.cache.start()

    async def stop(self) -> None:
        await self.cache.stop()

    def connect(self, wake: Wake, nodes: WatchCache | None = None) -> None:
        """Wake runs through `wake((WORKLOADRUN, key))` (the engine's queue); with `nodes` (the engine's
        cache, which watches Nodes) also on Node changes of a run's group (NotReady, deleted). Connected again (each
        engine a session builds once it takes the Lease back), it hears `nodes` once: it heard them once per engine."""
        self._wake = wake
        if self._nodes is not None:
            self._nodes.unsubscribe(self._node_changed)
        self._nodes = nodes
        if nodes is not None:
            nodes.subscribe(self._node_changed)

    def track(self, run: Obj, job_label: str, members: Iterable[str]) -> None:
        """Remember which pods (by job label) and nodes belong to `run`."""
        meta = run["metadata"]
        key: Key = (meta.get("namespace") or "", meta["name"])
        self._run_of[(key[0], job_label)] = key
        self._pair_of[key] = (key[0], job_label)
        if key not in self._members:
            self._members[key] = tuple(members)
            for node in self._members[key]:
                self._runs_on.setdefault(node, set()).add(key)

    def forget(self, run: Obj) -> None:
        meta = run["metadata"]
        key: Key = (meta.get("namespace") or "", meta["name"])
        for node in self._members.pop(key, ()):
            runs = self._runs_on.get(node, set())
            runs.discard(key)
            if not runs:
                self._runs_on.pop(node, None)
        pair = self._pair_of.pop(key, None)
        if pair is not None and self._run_of.get(pair) == key:
            del self._run_of[pair]
            self._taken.pop(pair, None)

    def pods(self, namespace: str, job_label: str) -> list[Obj]:
        """The run's pods as last seen (sorted by name)."""
        return [pod for pod in self.cache.labelled(POD, LABEL_JOB, job_label)
                if (pod["metadata"].get("namespace") or "") == namespace]

    def taken(self, namespace: str, job_label: str) -> list[Obj]:
        """The run's pods Kubernetes deleted for a reason not their node's health, as last seen before they went."""
        return list(self._taken.get((namespace, job_label), ()))

    def _pod_changed(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        obj = new if new is not None else old
        if obj is None:
            return
        meta = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        labels = meta["labels"] if isinstance(meta.get("labels"), dict) else {}
        label = labels.get(LABEL_JOB)
        key = self._run_of.get((meta.get("namespace") or "", label)) if isinstance(label, str) else None
        if key is not None:
            if new is None and old is not None and taken_from_the_run(old):
                gone = {**old, "metadata": {**old["metadata"], "deletionTimestamp": old["metadata"].get("deletionTimestamp") or "gone"}}
                self._taken.setdefault((meta.get("namespace") or "", str(label)), []).append(gone)
            self._queue(key)

    def _node_changed(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        if kind is not NODE:
            return
        meta = ((new if new is not None else old) or {}).get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        for key in sorted(self._runs_on.get(name, ())) if isinstance(name, str) else ():
            self._queue(key)

    def _queue(self, key: Key) -> None:
        if self._wake is not None:
            self.woken += 1
            self._wake((WORKLOADRUN, key))
