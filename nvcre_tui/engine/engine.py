"""The engine: level-triggered controllers fed by one watch cache through a work queue.

The cache lists each kind once and then follows its watch. A change to an object queues that object and
its controller owner (a Job's change wakes its Workflow, a Workflow's its Certification); a Node's change
queues the unfinished Jobs running on it (node health) and whatever still waits for nodes. A reconcile
reads the cache and writes through the store; its return value asks for another look after a delay.
Nothing lives only in memory, so an engine killed at any point and started again on the same store
reaches the same outcome (child names are deterministic; a create that meets "already exists" is a no-op).

A child whose Certification (or Workflow, or Job) was deleted is stopped and deleted where no garbage
collector is first (controllers/collect.py).

Errors: a lost race (Conflict, NotFound, AlreadyExists) looks again shortly; a transient API error
(retryable: 429, 5xx, timeouts, dropped connections) requeues the object with backoff and never fails
anything, and so do credentials the server refused (401: nothing about the object; told once); any other error fails that one object with ReconcileError and the engine goes on. The runner's fleet
tick has no object to fail: its error is retried with backoff, logged at each retry (`log`) and told once (`tell`);
so is a failure that could not be written to its object.

`run_until_settled` drives a ManualClock (tests, `--wait` on the simulator): work until the queue holds
nothing due, then jump the clock to the earliest due key. `run` is the live loop.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable
from datetime import timedelta
from typing import Any, Protocol

from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.api.vocabulary import FAILED, LABEL_CERTIFICATION, LABEL_WORKFLOW, RECONCILE_ERROR
from nvcre_tui.engine.clock import Clock, ManualClock, format_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import forget_renders, is_held, reconcile_certification
from nvcre_tui.engine.controllers.collect import collect, orphan
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.controllers.foreign import refuse_foreign_status
from nvcre_tui.engine.controllers.job import reconcile_job
from nvcre_tui.engine.controllers.timeslice import TimeSlice
from nvcre_tui.engine.controllers.workflow import reconcile_workflow
from nvcre_tui.engine.controllers.workloadrun import reconcile_workloadrun, run_finished
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.store.cache import Key, WatchCache, key_of
from nvcre_tui.engine.store.errors import AlreadyExists, Conflict, NotFound, StoreError, Unauthorized, describe, failure_line
from nvcre_tui.engine.store.objects import copy_json
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, ResourceKind, ResourceStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from nvcre_tui.engine.workqueue import WorkQueue

__all__ = ["Engine", "ENGINE_KINDS", "INDEXED_LABELS", "engine_cache", "Metrics"]

LIVE_YIELD_SECONDS = 0.02  # the live loop lets others (a console's keys and redraws) run at least this often while it works
Obj = dict[str, Any]
Reconciler = Callable[[Context, Obj, World], Awaitable[float | None]]
RECONCILERS: dict[ResourceKind, Reconciler] = {
    CERTIFICATION: reconcile_certification,
    WORKFLOW: reconcile_workflow,
    JOB: reconcile_job,
    WORKLOADRUN: reconcile_workloadrun,
}
ENGINE_KINDS: tuple[ResourceKind, ...] = (NODE, CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)
INDEXED_LABELS = (LABEL_CERTIFICATION, LABEL_WORKFLOW)
KIND_BY_NAME = {kind.kind: kind for kind in RECONCILERS}
FLEET: Hashable = ("fleet",)  # the runner's fleet-level actions (timed cordons) are one more queue key
LOST_RACE_SECONDS = 1.0
TOLD_FAILURES = 10  # distinct failures (a runner tick's, a failure that could not be written) an engine tells (Engine.tell) in its life
UNAUTHORIZED = "unauthorized"  # the key the credentials refused (401) are told under: once, whatever object met it
SAID_CHARACTERS = 300  # at most this much of an error goes into a ReconcileError message or a told line
# What an error out of a reconcile nvcre did not expect may be (failure_line's `unexpected`): the engine reads objects
# anyone may have written (test_engine_guard has every shape), and a KeyError on one is its malformed field as often as
# nvcre's bug.
MALFORMED_OR_BUG = "a field not of the shape nvcre writes (an edit by hand), or a bug in nvcre"
MAX_PASSES_PER_INSTANT = 400
WATCH_DRAIN_YIELDS = 3


class Metrics(Protocol):
    """What the engine reports to (engine/metrics.py's EngineMetrics has it)."""

    def observe_reconcile(self, kind: str, seconds: float, error: str | None = None) -> None: ...


def engine_cache(store: ResourceStore, namespace: str | None = None, *, nodes_optional: bool = False) -> WatchCache:
    """A watch cache of every kind the engine (and the console) reads; a viewer's may hold one `namespace`, and do
    without Nodes (`nodes_optional`: a viewer whose RBAC reads none; the cache's `withheld` says so)."""
    return WatchCache(store, ENGINE_KINDS, label_keys=INDEXED_LABELS, namespace=namespace,
                      optional=(NODE,) if nodes_optional else ())



def reconcile_failed(subject: str, error: BaseException) -> str:
    """Why the engine failed `subject` (`Workflow default/x`) with ReconcileError, in words: `reconciling Workflow
    default/x failed: <what failed, where>` (failure_line), at most SAID_CHARACTERS."""
    line = f"reconciling {subject} failed: {failure_line(error, unexpected=MALFORMED_OR_BUG, about=subject)}"
    return line if len(line) <= SAID_CHARACTERS else line[: SAID_CHARACTERS - 1] + "…"


def _own_copy(kind: ResourceKind, cached: Obj) -> Obj:
    """The object a reconciler gets: its own copy, for reconcilers may edit it and the cache's is shared. The Workflow
    reconciler edits only its Workflow's top level (a status patch puts the new status and metadata there) and builds
    every nested value it changes anew (orch = dict(...), [dict(group) ...]), so a Workflow is copied at its top
    level and metadata alone: it holds a group per node and a record per group, megabytes at 3,000 nodes, and was
    copied whole at each of the many reconciles its Jobs cause (a seventh of a 512-node burn-in's CPU)."""
    if kind is WORKFLOW:
        return {**cached, "metadata": copy_json(cached["metadata"])}
    return copy_json(cached)

class Engine:
    """Reconciles every nvcre object in a store."""

    def __init__(self, store: ResourceStore, clock: Clock, catalog: Catalog, runner: Runner, *,
                 cache: WatchCache | None = None, metrics: Metrics | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.cache = cache or engine_cache(store)
        self._owns_cache = cache is None
        self.store = store if isinstance(store, WriteThroughStore) and store.cache is self.cache else WriteThroughStore(store, self.cache)
        self.clock, self.runner, self.metrics = clock, runner, metrics
        self.log: Callable[[str], None] = log or (lambda message: None)  # one line each (the controller's pod log)
        # Told once per cause, where `log` is told at each retry: a session's notices (the CLI's stderr while `run --wait`
        # follows, the console's notifications). A runner tick that failed was said by `nvcre controller` alone.
        self.tell: Callable[[str], None] = lambda message: None
        self.runner_failure: str | None = None  # the runner's fleet tick's failure while it lasts (None once a tick succeeds)
        self._told: set[str] = set()
        # The live loop's share of the event loop (`run` sets its seconds): reconcilers breathe through ctx.slice too.
        self.slice = TimeSlice()
        self.ctx = Context(store=self.store, clock=clock, catalog=catalog, runner=runner, slice=self.slice)
        self.world = World(self.cache)
        self.queue = WorkQueue(clock)
        self.reconciles: Counter[str] = Counter()
        self.cpu_seconds = 0.0  # process time spent reconciling (the bench divides it by job transitions)
        self._jobs_on_node: dict[str, set[Key]] = {}
        self._started = False
        self._stopped = False  # stop() is final: a stopped engine never starts again (the Lease is another's now)
        self.reconciling = False  # a key in hand: `stop` lets it finish, and a Lease goes back only after (never half an object)
        # Which objects this engine reconciles (None: all); the others it only collects when their owner is gone.
        # `delete --wait` limits it to the deleted certifications' trees (limit_to): it collects what they and earlier
        # deletions left, and starts nothing for any other certification.
        self._scope: Callable[[ResourceKind, Obj], bool] | None = None
        self.cache.subscribe(self._on_change)

    # ----- lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Fill the cache (list once) and queue every object for a first look."""
        if self._started or self._stopped:
            return
        self._started = True
        await self.cache.start()
        for kind in RECONCILERS:
            for key, obj in self.cache.objects[kind].items():
                self._track_job(kind, None, obj)
                self.queue.add((kind, key))
        self.queue.add(FLEET)

    async def stop(self) -> None:
        """Stop reconciling: `run` returns after the key in hand (the Lease lost: another engine reconciles now). The
        cache's watches end when this engine made the cache (a shared cache is its owner's), and it no longer hears that
        cache: a session that loses the Lease and takes it back builds a new engine over the same cache each time."""
        self._started, self._stopped = False, True
        self.cache.unsubscribe(self._on_change)
        self.world.close()
        self.queue.changed.set()  # wake `run` from its wait
        if self._owns_cache:
            await self.cache.stop()

    def limit_to(self, scope: Callable[[ResourceKind, Obj], bool] | None) -> None:
        """Reconcile only the objects `scope` accepts (None: every object again), and no fleet tick while limited: of
        the rest an orphan is collected (its owner is gone), the others wait, untouched, for an engine that follows
        them. Lifting the limit queues everything for a look."""
        self._scope = scope
        if scope is None and self._started:
            for kind in RECONCILERS:
                for key in self.cache.objects[kind]:
                    self.queue.add((kind, key))
            self.queue.add(FLEET)

    # ----- change -> queue ---------------------------------------------------------------------------------

    def _on_change(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        """Queue what a change concerns. Never raises: a malformed object must not stop the cache."""
        try:
            obj = new if new is not None else old
            assert obj is not None
            if kind is NODE:
                self._node_changed(obj)
                return
            self._track_job(kind, old, new)
            if not own or old is None:  # our own status write needs no second look; a new child does
                self.queue.add((kind, key_of(obj)))
            if new is None:  # deleted: its children are orphans (collected when no garbage collector is first)
                for child in self.cache.owned_by(obj["metadata"]["uid"]):
                    child_kind = KIND_BY_NAME.get(str(child.get("kind")))
                    if child_kind is not None:
                        self.queue.add((child_kind, key_of(child)))
            # Its owner before the change too: a child whose ownerReferences were edited away names it no more, and the
            # owner waiting for it learns it lost it (Context.lost_child) instead of waiting for ever.
            refs = [*(old["metadata"].get("ownerReferences") or [] if old is not None and new is not None else []),
                    *(obj["metadata"].get("ownerReferences") or [])]
            for ref in refs:
                owner_kind = KIND_BY_NAME.get(str(ref.get("kind"))) if isinstance(ref, dict) and ref.get("controller") else None
                if owner_kind is not None:
                    self.queue.add((owner_kind, (obj["metadata"].get("namespace") or "" if owner_kind.namespaced else "", ref.get("name"))))
            # Another certification's category may wait for the nodes a Workflow held, or that a certification's
            # waiting category had queued for first: the one ended, the other went away or finished.
            if kind in (WORKFLOW, CERTIFICATION) and (new is None or cond.is_terminal(new)) and not (old is not None and cond.is_terminal(old)):
                self._wake_waiting((CERTIFICATION,), held=True)
            if kind is CERTIFICATION and (new is None or cond.is_terminal(new)):
                forget_renders(self.ctx, str(obj["metadata"].get("uid") or ""))
            if kind is JOB and new is not None and cond.is_terminal(new):
                for run in self.cache.owned_by(new["metadata"]["uid"], WORKLOADRUN):
                    if not run_finished(run):  # its Job gave up on it: stop it and free the GPUs
                        self.queue.add((WORKLOADRUN, key_of(run)))
        except Exception:  # noqa: BLE001 - the reconcile of that object reports what is wrong with it
            return

    def _track_job(self, kind: ResourceKind, old: Obj | None, new: Obj | None) -> None:
        """Index unfinished Jobs by the nodes of their group (the group-nodes annotation)."""
        if kind is not JOB:
            return
        for obj, keep in ((old, False), (new, True)):
            if obj is None:
                continue
            for name in group_nodes(obj):
                if keep and not cond.is_terminal(obj):
                    self._jobs_on_node.setdefault(name, set()).add(key_of(obj))
                elif (jobs := self._jobs_on_node.get(name)) is not None:
                    jobs.discard(key_of(obj))
                    if not jobs:  # a node with nothing running is not remembered (a cluster's nodes come and go by name)
                        del self._jobs_on_node[name]

    def _node_changed(self, node: Obj) -> None:
        for key in sorted(self._jobs_on_node.get(node["metadata"].get("name"), ())):
            self.queue.add((JOB, key))
        self._wake_waiting((CERTIFICATION, WORKFLOW))  # discovery may now find (or lose) nodes it waits for

    def _wake_waiting(self, kinds: tuple[ResourceKind, ...], *, held: bool = False) -> None:
        """Queue the unfinished objects of `kinds` that wait for nodes: for discovery, or (`held`) also for a Workflow
        on their nodes to finish."""
        for kind in kinds:
            for key, obj in self.cache.objects[kind].items():
                if not cond.is_terminal(obj) and _waits_for_nodes(kind, obj, held=held):
                    self.queue.add((kind, key))

    # ----- reconcile ----------------------------------------------------------------------------------------

    async def _reconcile(self, key: Hashable) -> None:
        started = time.process_time()
        if key == FLEET:
            if self._scope is not None:  # the runner's fleet-wide work is every certification's (limit_to)
                return
            try:
                delay = await self.runner.tick()
            except Exception as error:  # noqa: BLE001 - no object to fail: said in one line, retried with backoff
                retry = self.queue.retry(FLEET)
                self.runner_failure = f"runner tick failed: {failure_line(error, limit=SAID_CHARACTERS)}"
                self.log(f"{self.runner_failure} (retried in {retry:g}s)")
                self._tell_once(self.runner_failure, f"{self.runner_failure} (retried with backoff; said once)")
            else:
                self.runner_failure = None
                self.queue.forget(FLEET)
                if delay is not None:
                    self.queue.add_after(FLEET, delay)
            self.cpu_seconds += time.process_time() - started
            return
        assert isinstance(key, tuple)  # (ResourceKind, Key): every key but FLEET
        kind: ResourceKind = key[0]
        object_key: Key = key[1]
        cached = self.cache.objects[kind].get(object_key)
        if cached is None:
            self.queue.forget(key)
            return
        error_class: str | None = None
        try:
            deleting = bool(cached["metadata"].get("deletionTimestamp"))
            obj = _own_copy(kind, cached)  # reconcilers may edit their object; the cache is shared
            if not deleting:
                self.reconciles[kind.kind] += 1
            # One being deleted is never reconciled, but is still collected once its owner is gone: a finalizer holds it
            # (kubectl's --cascade=foreground hands it to a garbage collector an API server alone lacks), and collecting
            # it stops its runs, and its delete in the background makes the server drop the collector's finalizer.
            live_orphan = await orphan(self.ctx, kind, obj, self.world)
            if live_orphan is not None:
                await collect(self.ctx, kind, live_orphan, self.world)
                delay = None
            elif deleting:
                return
            elif self._scope is not None and not self._scope(kind, cached):  # outside limit_to: an orphan is collected, nothing else is done
                delay = None
            elif await refuse_foreign_status(self.ctx, kind, obj, self.world):  # a status someone else wrote: failed, not reconciled
                delay = None
            else:
                delay = await RECONCILERS[kind](self.ctx, obj, self.world)
        except (Conflict, NotFound, AlreadyExists):
            error_class = "Conflict"
            self.queue.add_after(key, LOST_RACE_SECONDS)  # lost a race with another writer: look again shortly
        except Unauthorized as error:
            # The server took no credentials (401): nothing about this object. A passing one (an authentication webhook
            # timing out, a restarted apiserver whose token authenticator has not synced, a token mid-rotation) failed
            # the certification as ReconcileError; one that lasts costs the engine its Lease, which says so.
            error_class = "Retryable"
            retry = self.queue.retry(key)
            said = " ".join(str(error).split())[:300]
            self.log(f"{said} (retried in {retry:g}s)")
            self._tell_once(UNAUTHORIZED, f"{said} (retried with backoff; said once)")
        except StoreError as error:
            if not error.retryable:
                error_class = "Permanent"
                await self._quarantine(kind, cached, error)
            else:
                error_class = "Retryable"
                self.queue.retry(key)  # a transient API error never fails a certification
        except Exception as error:  # one broken object must not stop every other certification
            error_class = RECONCILE_ERROR
            await self._quarantine(kind, cached, error)
        else:
            self.queue.forget(key)
            if delay is not None:
                self.queue.add_after(key, max(delay, 0.0))
        finally:
            spent = time.process_time() - started
            self.cpu_seconds += spent
            if self.metrics is not None:
                self.metrics.observe_reconcile(kind.kind, spent, error_class)

    async def _quarantine(self, kind: ResourceKind, obj: Obj, error: Exception) -> None:
        """Fail an object its reconciler cannot handle, with the error as reason, instead of crashing."""
        meta: Obj = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        message = reconcile_failed(describe(kind.kind, str(meta.get("name") or "?"), meta.get("namespace")), error)
        try:
            if kind is WORKLOADRUN:
                status = {"phase": FAILED, "reason": RECONCILE_ERROR, "message": message, "completionTime": format_time(self.clock.now())}
                await self.ctx.patch_status(kind, copy.deepcopy(obj), status)
                return
            state: Obj = obj["status"] if isinstance(obj.get("status"), dict) else {}
            conditions = state.get("conditions") if isinstance(state.get("conditions"), list) else None
            patch = {"conditions": cond.with_phase(conditions, FAILED, RECONCILE_ERROR, message, self.ctx.now())}
            await self.ctx.transition(kind, copy.deepcopy(obj), patch, [("Warning", RECONCILE_ERROR, message)])
        except Exception as unwritten:  # noqa: BLE001 - an object so broken (or a store so refusing) that even its failure cannot be written
            # It stays as it is until it changes (the next change tries again): said, for a certification that stands
            # still with no word anywhere (its status write refused by RBAC, say) looks like one still running.
            said = (f"{message}, and that failure could not be written: {failure_line(unwritten, limit=SAID_CHARACTERS)}; "
                    "it stays as it is until it changes")
            self.log(said)
            self._tell_once(said, said)

    def _tell_once(self, key: str, text: str) -> None:
        """Tell `text` (Engine.tell) once per `key`: a retry that fails alike is said once, not every few seconds; a
        long-lived engine whose errors differ each time (a changing resourceVersion in the text) tells the first
        TOLD_FAILURES only (`log` has them all)."""
        if key not in self._told and len(self._told) < TOLD_FAILURES:
            self._told.add(key)
            self.tell(text)

    # ----- driving --------------------------------------------------------------------------------------

    async def sweep(self) -> float | None:
        """One pass over every key due now; seconds until the next due key (None: nothing scheduled). In the live
        loop (`run`) it lets the event loop run whenever LIVE_YIELD_SECONDS of reconciles went by without a pause: a
        store's writes do not yield, and a console sharing the loop would otherwise wait for the whole pass (at 3,000
        nodes, several Workflow and Certification reconciles: up to 0.9 s). `settle` never pauses (a ManualClock run
        takes in the others' work between passes, as before)."""
        await self.start()
        if self._stopped:
            return None
        self.slice.restart()
        for key in self.queue.take_ready():
            if self._stopped:
                break  # stopped meanwhile: the rest is another engine's now
            self.reconciling = True
            try:
                await self._reconcile(key)
            finally:
                self.reconciling = False
            await self.slice.breathe()
        return self._wake()

    def _wake(self) -> float | None:
        due = self.queue.next_due()
        return None if due is None else max((due - self.clock.now()).total_seconds(), 0.0)

    async def _drain_watches(self) -> None:
        """Let the cache's watch tasks take in what other writers (the runner, a user) just wrote."""
        for _ in range(WATCH_DRAIN_YIELDS):
            await asyncio.sleep(0)

    async def settle(self, *, strict: bool = True) -> float | None:
        """Work until nothing is due now; the next wake-up. On a ManualClock (strict) an instant that never
        settles is a bug and raises; on a running clock time moves meanwhile, so stop trying."""
        await self.start()
        for _ in range(MAX_PASSES_PER_INSTANT):
            await self.sweep()
            await self._drain_watches()
            if self._stopped:
                return None
            if not self.queue.has_ready():
                return self._wake()
        if strict:
            raise RuntimeError("engine did not settle: reconcilers keep requeueing at the same instant")
        return 0.0

    async def run_until_settled(self, *, until: Callable[[], Awaitable[bool]] | None = None, max_seconds: float | None = None) -> bool:
        """On a ManualClock: settle, jump to the next wake-up, repeat; stop when nothing is scheduled,
        `until()` is true, or `max_seconds` of clock time passed. Returns whether `until` was met."""
        assert isinstance(self.clock, ManualClock), "run_until_settled needs a ManualClock"
        deadline = self.clock.now() + timedelta(seconds=max_seconds) if max_seconds is not None else None
        try:
            while True:
                wake = await self.settle()
                if until is not None and await until():
                    return True
                if wake is None or self._stopped:  # nothing scheduled, or stopped (the Lease lost)
                    return False
                target = self.clock.now() + timedelta(seconds=max(wake, 0.001))
                if deadline is not None and target > deadline:
                    self.clock.advance_to(deadline)
                    await self.settle()
                    return bool(until and await until())
                self.clock.advance_to(target)
        except BaseException:
            await self.stop()  # a dying engine leaves no watch behind
            raise

    async def run(self, *, idle_poll: float = 30.0) -> None:
        """The live loop (console, controller): work what is due, then wait for a change or the next due key; returns
        once `stop` was called. Cancelling it pauses it (`run --wait` between following a certification and its
        --cleanup, which runs it again to collect what the deletion orphans); an error stops it for good."""
        await self.start()
        try:
            while not self._stopped:
                self.slice.seconds = LIVE_YIELD_SECONDS
                try:
                    await self.sweep()
                finally:
                    self.slice.seconds = None
                await asyncio.sleep(0)
                if self.queue.has_ready():
                    continue
                wake = self._wake()
                sleep = asyncio.create_task(self.clock.sleep(min(wake if wake is not None else idle_poll, idle_poll)))
                signal = asyncio.create_task(self.queue.changed.wait())
                try:
                    await asyncio.wait({sleep, signal}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for task in (sleep, signal):
                        task.cancel()
        except asyncio.CancelledError:
            raise  # paused: its session's close() stops it
        except BaseException:
            await self.stop()  # a dying engine leaves no watch behind
            raise


def _waits_for_nodes(kind: ResourceKind, obj: Obj, *, held: bool = False) -> bool:
    status: Obj = obj["status"] if isinstance(obj.get("status"), dict) else {}
    if kind is WORKFLOW:
        return not (status.get("orchestration") or {}).get("groups")
    # A category held by a Workflow on its nodes is woken when a Workflow finishes (_on_change), not by Node changes:
    # at 10,000 nodes they never stop, and each look reads every Workflow.
    return any(isinstance(s, dict) and s.get("status") == "Pending" and (held or not is_held(s))
               for s in status.get("categoryStatuses") or [{"status": "Pending"}])
