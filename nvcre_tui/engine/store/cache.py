"""The watch cache: list each kind once, then watch it, into shared in-memory indexes.

One cache feeds both the engine's work queue (through `subscribe`) and the console's view model, as a
controller-runtime informer does. Objects are indexed by kind and (namespace, name), by the uid of their
owners, and by a few label keys; readers get the cached dicts themselves and must not mutate them.

Writes made in this process can be fed back at once with `observe` (write-through): the cache then never
lags behind its own process, which lets a ManualClock run settle without waiting on a watch. Every update,
from a watch or from `observe`, is accepted only when its resourceVersion is newer than the cached one, so a
late watch event never rolls an object back and the same change is announced once.

A watch that ends is resumed from the last resourceVersion it saw; one that is Gone (410) re-lists, and the
re-list is compared with the cache so subscribers hear about every object that changed or vanished meanwhile.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import math
import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from nvcre_tui.engine.names import controller_uid

from .errors import Forbidden, Gone, RetryableError, StoreError
from .protocol import ResourceKind, ResourceStore

__all__ = ["WatchCache", "Change", "Key", "key_of", "newer"]

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)
# (kind, old object or None, new object or None (deleted), written by this process)
Change = tuple[ResourceKind, Obj | None, Obj | None, bool]
Subscriber = Callable[[ResourceKind, Obj | None, Obj | None, bool], None]
RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
RETRY_AFTER_CAP = 60.0  # the most seconds of a server's Retry-After the cache waits before trying again
# How long a start retries its first lists through transient errors before it gives up, the store's own retries of each
# included: counted in tries (the ramp, then six of 5 s), a server failing each list slowly (a stall, then a cut) after
# the store's six tries of it was asked 72 times over four minutes by a one-shot `certification list`.
FIRST_LIST_SECONDS = 40.0
# A watch that failed again this long after it was resumed served meanwhile (quietly: no event to say so): its failure
# begins a new outage, not one more of the last one's retries.
SERVED_SECONDS = 30.0
CHANGES_KEPT = 4096  # changes of a kind `changed_since` remembers beyond twice the kind's objects


def key_of(obj: Mapping[str, Any]) -> Key:
    """(namespace or "", name) of an object."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _rv(obj: Mapping[str, Any] | None) -> int | None:
    text = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    return int(text) if isinstance(text, str) and text.isdigit() else None


def newer(candidate: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """Whether `candidate` is a later state than `current` (opaque resourceVersions: any different one is)."""
    if current is None:
        return True
    mine, theirs = _rv(candidate), _rv(current)
    if mine is None or theirs is None:
        return (candidate.get("metadata") or {}).get("resourceVersion") != (current.get("metadata") or {}).get("resourceVersion")
    return mine > theirs


class WatchCache:
    """Every object of `kinds`, kept current from the store's watches."""

    def __init__(self, store: ResourceStore, kinds: Iterable[ResourceKind], *, label_keys: Iterable[str] = (),
                 selectors: Mapping[ResourceKind, str] | None = None, namespace: str | None = None,
                 optional: Iterable[ResourceKind] = (), first_list_seconds: float | None = None) -> None:
        self.store = store
        self.first_list_seconds = FIRST_LIST_SECONDS if first_list_seconds is None else first_list_seconds
        self.kinds = tuple(kinds)
        # Kinds a reader can do without: a first list the server refuses (403) leaves them empty and unwatched, and
        # `withheld` says why (a viewer whose RBAC reads no Nodes still lists its certifications).
        self.optional = frozenset(optional)
        self.withheld: dict[ResourceKind, str] = {}
        self.label_keys = tuple(label_keys)
        self.selectors = dict(selectors or {})  # kind -> label selector: cache only the matching objects
        # Namespaced kinds of this one namespace only (a viewer whose RBAC reads one namespace); None: every namespace.
        self.namespace = namespace
        self.objects: dict[ResourceKind, dict[Key, Obj]] = {kind: {} for kind in self.kinds}
        self.version = 0  # goes up with every change seen (the console redraws when it moves)
        self.kind_versions: dict[ResourceKind, int] = defaultdict(int)  # the same, per kind (memos keyed on the Nodes)
        self.relists = 0
        self.synced = asyncio.Event()
        self._owned: dict[str, set[tuple[ResourceKind, Key]]] = defaultdict(set)
        # Each owner's dependents in owned_by's order, kept until one joins or leaves (not when one changes): a
        # Workflow of a Job per node is asked for its Jobs on every reconcile, and sorting thousands each time was
        # a tenth of a 3,000-node run.
        self._owned_order: dict[str, builtins.list[tuple[ResourceKind, Key]]] = {}
        # Per owner uid: a stamp that moves whenever one of its dependents joins, changes or leaves, and per kind
        # the controlled dependents `controlled_by` last answered with it. A Workflow of a Job per node was filtered
        # on its Jobs' ownerReferences at each of its reconciles and its Certification's (a tenth of a large run).
        # Stamps come from one counter (`_stamp`), so an entry can go with its owner's last dependent and a later one
        # never meets an earlier answer: kept for ever, they grew by every owner a long-lived engine saw (weeks of burn-in).
        self._owner_versions: dict[str, int] = {}
        self._stamp = 0
        self._controlled_answers: dict[str, dict[str, tuple[int, builtins.list[Obj]]]] = {}
        self._by_uid: dict[str, tuple[ResourceKind, Key]] = {}
        self._labelled: dict[tuple[ResourceKind, str, str], set[Key]] = defaultdict(set)
        # Per (kind, label, value): a stamp (from `_stamp`) that moves whenever an object with that label value changes,
        # and the sorted list `labelled` last answered with it, so a read repeats no work for a set nothing touched;
        # both go when no object carries the value any more.
        self._label_versions: dict[tuple[ResourceKind, str, str], int] = {}
        self._labelled_answers: dict[tuple[ResourceKind, str, str], tuple[int, builtins.list[Obj]]] = {}
        self._listed: dict[ResourceKind, tuple[int, builtins.list[Obj]]] = {}  # the same for `list` of a whole kind
        # Per kind, the key of each change in order (`changed_since`), from the change its kind version was
        # `_changed_from` at: a reader that keeps a kind sorted or filtered (cacheview.py) takes in what changed, at the
        # cost of an append per change (a subscriber per reader cost ten times that under 5,000 events a second).
        self._changed: dict[ResourceKind, builtins.list[Key]] = {kind: [] for kind in self.kinds}
        self._changed_from: dict[ResourceKind, int] = defaultdict(int)
        self._subscribers: list[Subscriber] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        # Kinds whose watch failed and whose list has not answered since: time.time() of the first failure. The
        # console says it shows the last known state meanwhile rather than pass stale objects off as live.
        self._unreachable: dict[ResourceKind, float] = {}
        self.last_error = ""
        # The last failure was an answer (a 403 once RBAC is gone, a 404 once the CRDs are): the server is there and
        # refuses, which is not "no answer", and waiting alone will not end it.
        self.refused = False

    @property
    def unreachable_since(self) -> float | None:
        """time.time() since when the store has not answered (None: it answers): a watch that failed and no list
        since, or an API server giving no answer at all while its client waits it out (KubeStore's stats)."""
        stats = getattr(self.store, "stats", None)
        waiting = getattr(stats, "unreachable_since", None)
        # watches of this cache's kinds the store keeps failing to open (each answered 5xx or 429), which it waits out
        # itself for minutes: what is cached stopped following the server meanwhile
        failing = getattr(stats, "watches_failing", None)
        times = [*self._unreachable.values(), *([waiting] if isinstance(waiting, float) else []),
                 *(failing.values() if isinstance(failing, dict) else [])]
        return min(times, default=None)

    def silence(self) -> str | None:
        """`no answer from the store since 19:20:05` (or `the store refuses the watches since ...`) while what the cache
        holds is the last known state, as the console's header and `run --wait` say it; None while the store answers."""
        stats = getattr(self.store, "stats", None)
        uncredentialed = getattr(stats, "uncredentialed_since", None)
        if isinstance(uncredentialed, float):  # first: its way out (log in from a shell) is for the user, not the server
            return f"{getattr(stats, 'credentials_problem', '')} (since {time.strftime('%H:%M:%S', time.localtime(uncredentialed))})"
        since = self.unreachable_since
        if since is None:
            return None
        what = "the store refuses the watches" if self.refusing else "no answer from the store"
        return f"{what} since {time.strftime('%H:%M:%S', time.localtime(since))}"

    @property
    def refusing(self) -> bool:
        """Stale because the server answers the watches with errors (forbidden, not found), not because it is silent
        (a server that has since stopped answering at all, as its client sees, is silent again)."""
        silent = getattr(getattr(self.store, "stats", None), "unreachable_since", None)
        return self.refused and bool(self._unreachable) and silent is None

    # ----- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """List every kind (the cache is complete on return), then keep it current in the background."""
        if self._started:
            return
        self._started = True
        try:
            deadline = time.monotonic() + self.first_list_seconds  # for every kind's first list together
            versions = {kind: await self._first_list(kind, deadline) for kind in self.kinds}
        except BaseException:
            # Not started: the next start lists again (and fails again, or fills it). Left started, it returned at once,
            # empty: a viewer whose pod list RBAC refused read "the run's pods are gone" on its second look.
            self._started = False
            raise
        self._tasks = [asyncio.create_task(self._follow(kind, versions[kind]), name=f"watch {kind.plural}")
                       for kind in self.kinds if kind not in self.withheld]
        self.synced.set()

    async def stop(self) -> None:
        """End the watches (the cached objects stay readable)."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        self._started = False

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call `subscriber(kind, old, new, own)` on every change from now on (new is None for a deletion)."""
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """No more calls to `subscriber` (an engine stopped over a cache its session keeps: the next engine subscribes
        its own). A new list, so that a change being told goes on over the old one."""
        self._subscribers = [each for each in self._subscribers if each != subscriber]

    # ----- reads ------------------------------------------------------------------------------------

    def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj | None:
        """The cached object, or None."""
        return self.objects[kind].get((namespace or "" if kind.namespaced else "", name))

    def list(self, kind: ResourceKind, namespace: str | None = None) -> list[Obj]:
        """Cached objects of a kind, sorted by (namespace, name), optionally of one namespace."""
        bucket = self.objects[kind]
        if namespace is not None:
            return [bucket[key] for key in sorted(bucket) if key[0] == namespace]
        answered = self._listed.get(kind)
        if answered is None or answered[0] != self.kind_versions[kind]:  # the kind changed since: sort again
            answered = (self.kind_versions[kind], [bucket[key] for key in sorted(bucket)])
            self._listed[kind] = answered
        return list(answered[1])

    def owned_by(self, uid: str, kind: ResourceKind | None = None) -> builtins.list[Obj]:
        """Objects whose ownerReferences name `uid` (optionally of one kind), sorted by name."""
        order = self._owned_order.get(uid)
        if order is None:
            order = sorted(self._owned.get(uid, ()), key=lambda pair: (pair[0].plural, pair[1]))
            if uid in self._owned:  # an owner of none (a WorkloadRun, one deleted) is not remembered: _unindex never drops it
                self._owned_order[uid] = order
        return [self.objects[k][key] for k, key in order if (kind is None or k == kind) and key in self.objects[k]]

    def controlled_by(self, uid: str, kind: str) -> builtins.list[Obj]:
        """owned_by(uid)'s objects whose `kind` field is `kind` and whose ownerReference to `uid` is the controller's."""
        version = self._owner_versions.get(uid, 0)
        answers = self._controlled_answers.get(uid)
        answered = answers.get(kind) if answers is not None else None
        if answered is None or answered[0] != version:
            answered = (version, [child for child in self.owned_by(uid) if child.get("kind") == kind and _controlled_by(child, uid)])
            if uid in self._owned:  # forgotten with the owner's last dependent (an owner of none is not remembered)
                self._controlled_answers.setdefault(uid, {})[kind] = answered
        return list(answered[1])

    def get_by_uid(self, uid: str) -> Obj | None:
        """The cached object with this uid, or None."""
        found = self._by_uid.get(uid)
        return self.objects[found[0]].get(found[1]) if found else None

    def labelled(self, kind: ResourceKind, label: str, value: str) -> builtins.list[Obj]:
        """Objects of `kind` whose label `label` is `value` (label must be one of `label_keys`)."""
        assert label in self.label_keys, f"label {label} is not indexed"
        index = (kind, label, value)
        version = self._label_versions.get(index, 0)
        answered = self._labelled_answers.get(index)
        if answered is None or answered[0] != version:
            bucket = self.objects[kind]
            answered = (version, [bucket[key] for key in sorted(self._labelled.get(index, ())) if key in bucket])
            if index in self._labelled:  # a value nothing carries (a deleted certification's name) is not remembered
                self._labelled_answers[index] = answered
        return list(answered[1])

    def changed_since(self, kind: ResourceKind, version: int) -> builtins.list[Key] | None:
        """The keys of the objects of `kind` that joined, changed or left since its `kind_versions` was `version`, in
        order (a key once per change); None when that is further back than the cache remembers (read the kind whole)."""
        start = version - self._changed_from[kind]
        if start < 0 or version > self.kind_versions[kind]:
            return None
        return self._changed[kind][start:]

    def label_version(self, kind: ResourceKind, label: str, value: str) -> int:
        """A stamp that moves whenever an object of `kind` with `label` = `value` changes (memo keys); 0 while none
        carries it, and never an earlier one's again."""
        return self._label_versions.get((kind, label, value), 0)

    # ----- writes seen --------------------------------------------------------------------------------

    def observe(self, kind: ResourceKind, obj: Obj) -> None:
        """Take in an object this process just wrote (ignored when the cache already holds a later state)."""
        if kind in self.objects:
            self._apply(kind, obj, own=True)

    def forget(self, kind: ResourceKind, obj: Mapping[str, Any]) -> None:
        """Drop an object this process saw deleted (a NotFound on a live read)."""
        if kind in self.objects:
            self._remove(kind, key_of(obj), own=True)

    def _apply(self, kind: ResourceKind, obj: Obj, own: bool, listed_at: int | None = None, went_back: bool = False) -> None:
        """`listed_at`: the resourceVersion of the list `obj` is from; `went_back`: that list is older than what the
        cache had followed (the server's history went back): the list's state wins over any other."""
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            return  # not an object at all: nothing a reader could use
        key = key_of(obj)
        old = self.objects[kind].get(key)
        if not newer(obj, old) and not (old is not None and _contradicted(old, obj, listed_at, went_back)):
            return
        if old is not None:
            self._unindex(kind, key, old, staying=frozenset(_owner_uids(obj)))
        self.objects[kind][key] = obj
        self._index(kind, key, obj)
        self._announce(kind, key, old, obj, own)

    def _remove(self, kind: ResourceKind, key: Key, own: bool) -> None:
        old = self.objects[kind].pop(key, None)
        if old is not None:
            self._unindex(kind, key, old)
            self._announce(kind, key, old, None, own)

    def _announce(self, kind: ResourceKind, key: Key, old: Obj | None, new: Obj | None, own: bool) -> None:
        self.version += 1
        self.kind_versions[kind] += 1
        changed = self._changed[kind]
        changed.append(key)
        if len(changed) > CHANGES_KEPT + 2 * len(self.objects[kind]):  # a reader further behind reads the kind whole
            half = len(changed) // 2
            del changed[:half]
            self._changed_from[kind] += half
        for subscriber in self._subscribers:
            subscriber(kind, old, new, own)

    def _index(self, kind: ResourceKind, key: Key, obj: Obj) -> None:
        uid = obj["metadata"].get("uid")
        if isinstance(uid, str):
            self._by_uid[uid] = (kind, key)
        for uid in _owner_uids(obj):
            self._owner_versions[uid] = self._next_stamp()
            dependents = self._owned[uid]
            if (kind, key) not in dependents:
                dependents.add((kind, key))
                self._owned_order.pop(uid, None)
        labels = obj["metadata"].get("labels")
        if isinstance(labels, dict):
            for label in self.label_keys:
                if isinstance(labels.get(label), str):
                    self._labelled[(kind, label, labels[label])].add(key)
                    self._label_versions[(kind, label, labels[label])] = self._next_stamp()

    def _next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    def _unindex(self, kind: ResourceKind, key: Key, obj: Obj, staying: Iterable[str] = ()) -> None:
        """Drop `obj` from the indexes; it stays a dependent of the owners in `staying` (its next version names them)."""
        uid = obj["metadata"].get("uid")
        if isinstance(uid, str) and self._by_uid.get(uid) == (kind, key):
            del self._by_uid[uid]
        for uid in _owner_uids(obj):
            self._owner_versions[uid] = self._next_stamp()  # staying or not: the dependent changes
            if uid in staying:
                continue
            self._owned[uid].discard((kind, key))
            self._owned_order.pop(uid, None)
            if not self._owned[uid]:  # its last dependent left: forget the owner (a later stamp is never an earlier one)
                del self._owned[uid]
                self._controlled_answers.pop(uid, None)
                self._owner_versions.pop(uid, None)
        labels = obj["metadata"].get("labels")
        if isinstance(labels, dict):
            for label in self.label_keys:
                if isinstance(labels.get(label), str):
                    index = (kind, label, labels[label])
                    self._labelled[index].discard(key)
                    self._label_versions[index] = self._next_stamp()
                    if not self._labelled[index]:  # nothing carries the value any more: forget it
                        del self._labelled[index]
                        self._labelled_answers.pop(index, None)
                        self._label_versions.pop(index, None)

    # ----- list and watch --------------------------------------------------------------------------------

    async def _relist(self, kind: ResourceKind, position: str | None = None) -> str:
        """List a kind and bring the cache in line with it; returns the list's resourceVersion. `position`: where the
        kind's watch had got to (None: the first list)."""
        result = await self.store.list(kind, self._namespace_of(kind), label_selector=self.selectors.get(kind))
        self.relists += 1
        self._unreachable.pop(kind, None)
        listed = {key_of(obj): obj for obj in result.items}
        snapshot = _rv({"metadata": {"resourceVersion": result.resource_version}})
        followed = _rv({"metadata": {"resourceVersion": position}})
        # A list older than what the watch had seen: the server's history went back (etcd restored from a backup), and
        # a cached state that looks newer than the list's is from the history that is no more. Kept, a Node changed
        # after the backup kept that change for ever, and one created after it was never removed.
        went_back = snapshot is not None and followed is not None and snapshot < followed
        for key in [key for key in self.objects[kind] if key not in listed]:
            written = _rv(self.objects[kind][key])
            if not went_back and snapshot is not None and written is not None and written > snapshot:
                # Written (and `observe`d) after the list's snapshot, while its pages were read: not gone. Removed, it came
                # back with the watch's next event: a DELETED and an ADDED told for an object that never left.
                continue
            self._remove(kind, key, own=False)
        for obj in listed.values():
            self._apply(kind, obj, own=False, listed_at=snapshot, went_back=went_back)
        return result.resource_version

    def _namespace_of(self, kind: ResourceKind) -> str | None:
        return self.namespace if kind.namespaced else None

    async def _first_list(self, kind: ResourceKind, deadline: float) -> str:
        """The first list, retried through transient errors (429, 5xx, timeouts) until `deadline` (time.monotonic())."""
        failures = 0
        while True:
            try:
                return await self._relist(kind)
            except Forbidden as error:
                if kind not in self.optional:
                    raise
                self.withheld[kind] = " ".join(str(error).split())
                return ""
            except StoreError as error:
                if not getattr(error, "retryable", False):
                    raise
                delay = backoff(failures, error)
                if time.monotonic() + delay >= deadline:
                    raise
                failures += 1
                await asyncio.sleep(delay)

    async def _follow(self, kind: ResourceKind, resource_version: str) -> None:
        failures = 0
        failing_since = 0.0  # time.time() of the first of the failures in a row
        resumed = 0.0  # time.monotonic() the watch was resumed after the last failure
        gone = 0  # watches in a row that met 410 before any event: each relists, so the next one waits longer
        while True:
            try:
                async for event in self.store.watch(kind, self._namespace_of(kind), label_selector=self.selectors.get(kind),
                                                    resource_version=resource_version):
                    failures = gone = 0
                    self._unreachable.pop(kind, None)
                    resource_version = event.object["metadata"].get("resourceVersion") or resource_version
                    if event.type == "DELETED":
                        self._remove(kind, key_of(event.object), own=False)
                    else:
                        self._apply(kind, event.object, own=False)
                await asyncio.sleep(0)  # the server ended the watch: resume from where it stopped
            except Gone:
                # The first relists at once (history compacted past a quiet watch); a server answering every watch 410
                # (an apiserver whose watch cache lags the one that served the list) was asked hundreds of times a second.
                if gone:
                    await asyncio.sleep(backoff(gone - 1))
                gone += 1
                resource_version = await self._relist_quietly(kind, resource_version)
            except StoreError as error:
                if failures and time.monotonic() - resumed > SERVED_SECONDS:  # the watch served meanwhile, quiet
                    failures = 0
                if not failures:  # the first of failures in a row, no event between (a relist that answers is none)
                    waiting = getattr(getattr(self.store, "stats", None), "unreachable_since", None)  # since the store's
                    failing_since = min(time.time(), waiting if isinstance(waiting, float) else math.inf)  # first silence
                self._failed(kind, error, failing_since)
                await asyncio.sleep(backoff(failures, error))
                failures += 1
                # A list proves the server answers again (a quiet watch would not say so) and brings in what the
                # broken watch missed.
                resource_version = await self._relist_quietly(kind, resource_version)
                resumed = time.monotonic()
            except Exception as error:  # noqa: BLE001 - a bug, or an answer no check foresaw: said, and followed on
                # Left to end the task, the kind stood still for the rest of the process and nothing said so.
                self._failed(kind, _unforeseen(kind, error))
                await asyncio.sleep(backoff(failures))
                failures += 1
                resource_version = await self._relist_quietly(kind, resource_version)

    def _failed(self, kind: ResourceKind, error: StoreError, since: float | None = None) -> None:
        """Record a failed watch or list of `kind`: the cache shows its last known state from now on. `since`: when the
        failures in a row began (a watch refused again after each relist answered: the outage goes on, from then)."""
        self._unreachable.setdefault(kind, since or time.time())
        self.last_error = str(error)
        # A 5xx or 429 is the server struggling (an etcd election, overload), not refusing: "no answer" fits.
        self.refused = not isinstance(error, RetryableError)

    async def _relist_quietly(self, kind: ResourceKind, position: str) -> str:
        """Relist until a list answers: a watch resumed before that would never say that the server answers again
        while the kind's objects do not change (the header said it refused long after it stopped)."""
        failures = 0
        while True:
            try:
                return await self._relist(kind, position)
            except Exception as error:  # noqa: BLE001 - as _follow's: never a task ended unseen
                self._failed(kind, error if isinstance(error, StoreError) else _unforeseen(kind, error))
                await asyncio.sleep(backoff(failures, error if isinstance(error, StoreError) else None))
                failures += 1


def backoff(failures: int, error: StoreError | None = None) -> float:
    """Seconds before the cache tries again after `failures` failures in a row: RETRY_SECONDS' step, jittered (half to
    all of it: consoles and engines that failed together do not all come back at the same instant), and never sooner than
    the server's Retry-After (up to RETRY_AFTER_CAP), which the fixed steps ignored."""
    step = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)] * (0.5 + random.random() / 2)
    asked = error.retry_after if error is not None else None
    return max(step, min(asked, RETRY_AFTER_CAP)) if asked else step


def _contradicted(cached: Obj, listed: Obj, listed_at: int | None, went_back: bool) -> bool:
    """Whether a list's state of an object replaces the cached one though it is not newer: the list is from a history
    that went back, or the cached state is one at or before the list's resourceVersion that the list does not hold
    (possible only if history went back: the cache saw a restored server's new revisions before it relisted)."""
    if went_back:  # a revision handed out again may be another state of the same object
        return cached != listed
    written = _rv(cached)
    return listed_at is not None and written is not None and written <= listed_at and written != _rv(listed)


def _unforeseen(kind: ResourceKind, error: Exception) -> StoreError:
    """A failure other than the store's, while `kind` was followed, as the one line the cache says it with."""
    return StoreError.about(kind, None, None, f"following it failed: {type(error).__name__}: {error}")


def _controlled_by(obj: Obj, uid: str) -> bool:
    return any(isinstance(ref, dict) and ref.get("uid") == uid and ref.get("controller")
               for ref in obj["metadata"].get("ownerReferences") or [])


def _owner_uids(obj: Obj) -> builtins.list[str]:
    refs = obj["metadata"].get("ownerReferences")
    if not isinstance(refs, list):
        return []
    return [ref["uid"] for ref in refs if isinstance(ref, dict) and isinstance(ref.get("uid"), str)]
