"""A Session on a Kubernetes API server: the server is the database, its watch feeds the cache.

Who reconciles: one engine per cluster, decided by the `nvcre-engine` Lease in the install namespace.
A session that wants an engine (the console, `run --wait`, `nvcre controller`) and has a runner takes the
Lease when nobody live holds it, and renews it in the background; otherwise it is a viewer and says who
holds it. Runs are real pods through the Kubernetes runner (runners/kubernetes: TrainJobs, or batch Jobs without
Kubeflow Trainer), their logs read from the pods (kube/podlogs.py); with `--sim-runner` the simulated
fleet plays kubelet and GPUs against the real API server instead, registering the scenario's Nodes when
they are absent, as KWOK does.

The simulated fleet writes through its own KubeStore (user agent `nvcre-sim`), so the engine's requests
(user agent `nvcre-engine`) are exactly what the RBAC of `nvcre setup init` must allow.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nvcre_tui.engine.clock import Clock, SimulatedClock, SystemClock
from nvcre_tui.engine.controllers.conditions import is_terminal, is_true
from nvcre_tui.engine.engine import Engine, Metrics, engine_cache
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.api.bodies import annotations_of, meta_of
from nvcre_tui.engine.api.nodes import NODES_GRANT
from nvcre_tui.engine.api.vocabulary import (ANNOTATION_ENGINE_RUNNER, SIMULATOR_AGENT, ENGINE_NAME, INSTALL_NAMESPACE, RUNNER_PODS,
                                             RUNNER_SIMULATED, SIMULATED)
from nvcre_tui.engine.grants import rbac_refused, with_grant
from nvcre_tui.engine.kube.access import CONTROLLER_NEEDED, allowed, engine_refused
from nvcre_tui.engine.kube.config import KubeTarget
from nvcre_tui.engine.kube.install import schema_refusal
from nvcre_tui.engine.kube.schemaguard import changed_under, installed_crds, restored
from nvcre_tui.engine.kube.installs import InstallRefused, require_install
from nvcre_tui.engine.kube.podlogs import PodLogSource
from nvcre_tui.engine.names import controller_uid
from nvcre_tui.engine.lease import NO_HOLDER, EngineLease, LeaseHolder, engine_identity
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.simulated import SimulatedRunner, played_by_the_fleet
from nvcre_tui.engine.session import LogSource, RunnerLogs, Session, TitleCut
from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP, FleetError, SimulatedFleet, latest_played
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import Forbidden, NotFound, NotKubernetes, StoreError
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, NAMESPACE, NODE, NVCRE_GROUP, WORKFLOW, WORKLOADRUN, ResourceKind, ResourceStore
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore

if TYPE_CHECKING:
    from nvcre_tui.engine.history import Archiver, HistoryQuery
    from nvcre_tui.engine.history.deletion import Authorizer

__all__ = ["KubeSession", "DEFAULT_INSTALL_NAMESPACE", "NoLogs", "authorizer_of", "describe_holder"]

Obj = dict[str, Any]
DEFAULT_INSTALL_NAMESPACE = INSTALL_NAMESPACE
# Who made each request, as a server's audit log and managedFields say it: the user's own writes (a certification
# created or deleted) are the command's; the engine's reconciling (status, Jobs, runs, workloads, its Lease) its own.
COMMAND_AGENT = "nvcre"
ENGINE_AGENT = ENGINE_NAME
VIEWER_AGENT = "nvcre-viewer"
# Said once by a process that opened as a viewer on another nvcre's CRDs, when they carry its schema again.
SCHEMA_RESTORED = ("the nvcre CRDs now carry this nvcre's schema (`nvcre setup init` of this version ran): this process takes "
                   "the engine Lease once it is free, and runs the engine")
KEY_IN_HAND_SECONDS = 30.0  # the longest a stopped engine's last reconcile is waited for before its Lease goes back
MAX_AHEAD_SECONDS = 30 * 86400.0  # the furthest a simulated clock follows the fleet's runs ahead of its own now


class SchemaRefused(InputError):
    """This engine may not run: its CRDs carry another nvcre's schema (`why`, from schema_refusal)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(f"{server}: {why}")
        self.why = why


@dataclass
class NoLogs:
    """The LogSource a session holds until `open` chooses its runner (and the runner's logs)."""

    reason: str

    async def lines(self, run: Obj) -> list[str]:
        return [f"no log source: {self.reason}"]


async def _go_on_from_the_fleet(store: KubeStore, clock: SimulatedClock, namespace: str | None) -> None:
    """Simulated time goes on from where the fleet's runs left it (sim.fleet.latest_played), before anything is
    written: a run another process started on its clock is neither stalled nor stamped back in time. A moment further
    ahead than any certification plays is damage, not time, and is passed over."""
    try:
        runs = (await store.list(WORKLOADRUN, namespace)).items
    except Forbidden:
        return  # a viewer that may not list runs shows none either
    latest = latest_played(runs, until=clock.now() + timedelta(seconds=MAX_AHEAD_SECONDS))
    if latest is not None:
        clock.jump_to(latest)


def cluster_title_parts(where: str, namespace: str, scenario: str | None, clock_mark: str = "") -> tuple[tuple[str, TitleCut], ...]:
    """KubeSession.title_parts: `cluster <context or server> · <namespace>[ · SIM RUNNER <scenario><clock_mark>]`, the
    context or server cut in its middle, the scenario's name left out where the room is short, the namespace never."""
    parts = (("cluster", TitleCut.NEVER), (f" {where}", TitleCut.SHORTEN), (f" · {namespace}", TitleCut.NEVER))
    if scenario is None:
        return parts
    return (*parts, (" · SIM RUNNER", TitleCut.NEVER), (f" {scenario}", TitleCut.GONE), (clock_mark, TitleCut.NEVER))


def describe_holder(holder: LeaseHolder | None, now: datetime) -> str:
    """`engine held by host-123 (renewed 4s ago)`, or that nobody holds it (the identity neutralised: any writer of
    the Lease chose it; a renewTime ahead of this clock said as such, never a negative age)."""
    if holder is None or not holder.live:
        return NO_HOLDER
    renewal = holder.renewal(now)
    return f"engine held by {printable(holder.identity, newlines=False)}" + (f" ({renewal})" if renewal is not None else "")


@dataclass
class KubeSession:
    """Store, cache, optional simulated runner, and an engine when this process holds the Lease."""

    target: KubeTarget
    kube: KubeStore
    store: WriteThroughStore  # reads and intents; in-process writes reach the cache at once
    clock: Clock
    catalog: Catalog
    cache: WatchCache
    logs: LogSource
    runner: Runner | None = None
    engine: Engine | None = None
    scenario: Scenario | None = None
    lease: EngineLease | None = None
    viewer_reason: str | None = None
    install_namespace: str = DEFAULT_INSTALL_NAMESPACE
    history: HistoryQuery | None = None  # see Session.history
    archiver: Archiver | None = None
    notices: list[str] = field(default_factory=list)  # see Session.notices
    validation_requests: WatchCache | None = None  # NVSentinel's ValidationRequests (None: no NVSentinel)
    engine_stopped: str | None = None  # see Session.engine_stopped
    _sim_store: KubeStore | None = None
    _engine_kube: KubeStore | None = None  # the engine's connection (ENGINE_AGENT); None in a viewer
    _holding: asyncio.Task[None] | None = field(default=None, repr=False)
    _guarding: asyncio.Task[str | None] | None = field(default=None, repr=False)  # guard_schema, while this session holds the Lease
    _awaiting: asyncio.Task[None] | None = field(default=None, repr=False)  # _await_schema, while its CRDs are another nvcre's
    _candidate: EngineLease | None = field(default=None, repr=False)  # the Lease this session would run an engine under
    _stopped_engine: Engine | None = field(default=None, repr=False)  # the last engine stopped (its key in hand may still be written)
    _viewing: tuple[EngineLease, str] | None = field(default=None, repr=False)  # (Lease, "viewer: ... {}") a viewer says
    _metrics: Metrics | None = field(default=None, repr=False)
    _nodes_registered: bool = field(default=False, repr=False)  # --sim-runner: the fleet's Nodes, by this process
    _closing: bool = field(default=False, repr=False)  # close() began: no wait for the schema is begun any more

    @property
    def cluster(self) -> str:
        """`cluster <context or server>`: where this session is, for messages that name the namespace themselves."""
        return f"cluster {self.target.context or self.target.server}"

    @property
    def engine_kube(self) -> KubeStore:
        """The engine's connection (its requests say ENGINE_AGENT); a viewer's only, which never writes."""
        return self._engine_kube or self.kube

    @property
    def engine_store(self) -> WriteThroughStore:
        """What the engine writes through: its own connection, the session's cache seeing each write at once."""
        return WriteThroughStore(self.engine_kube, self.cache)

    @property
    def title(self) -> str:
        return "".join(text for text, _ in self.title_parts())

    def title_parts(self, clock_mark: str = "") -> tuple[tuple[str, TitleCut], ...]:
        return cluster_title_parts(self.target.context or self.target.server, self.target.namespace,
                                   self.scenario.name if self.scenario else None, clock_mark)

    @property
    def namespace(self) -> str:
        """Where this session creates certifications (the -n flag, else the context's namespace)."""
        return self.target.namespace

    @classmethod
    async def open(cls, target: KubeTarget, catalog: Catalog, *, clock: Clock | None = None, scenario: Scenario | None = None,
                   want_engine: bool = True, install_namespace: str = DEFAULT_INSTALL_NAMESPACE,
                   metrics: Metrics | None = None, role: str = "engine",
                   history: Path | None | Literal["default"] = "default", elect: bool = True,
                   archive_writes: bool = True, nodes_needed: bool = True) -> KubeSession:
        """Connect; check our CRDs are served; with `scenario` (--sim-runner) register its Nodes and play its
        runs, else run real pods (the Kubernetes runner); take the engine Lease when `want_engine` and nobody
        live holds it. With `elect=False` the engine is built but the Lease is the caller's (`nvcre controller`
        queues for it and runs the engine only while it holds it). Finished certifications are archived into
        `history` ("default": $NVCRE_HISTORY or $XDG_STATE_HOME/nvcre/history.db; None: none), which a
        read-only console (`archive_writes=False`) only reads. A viewer whose RBAC reads no Nodes goes on without
        them and says so in a notice, unless what it shows needs none (`nodes_needed=False`: `certification list`)."""
        from nvcre_tui.engine.history import attach_archiver, default_history_path
        from nvcre_tui.engine.history.nvsentinel import open_validation_requests

        clock = clock or SystemClock()
        store = KubeStore(target, clock, user_agent=COMMAND_AGENT if want_engine else VIEWER_AGENT)
        refused = None  # why this user may not run the engine (RBAC): a viewer from the start, of its namespace only
        try:
            await _require_crds(store, target)
            # An engine's Lease lives in the install namespace: said before a Node or the Lease is written there. Not for
            # `nvcre controller` (elect=False), whose ServiceAccount may not read Namespaces: its Lease queue says it.
            if want_engine and elect and (refusal := await require_install(store, install_namespace)) is not None:
                why, closing = refusal
                raise InstallRefused(target.server, why, closing=closing)
            if want_engine and elect:
                refused = await engine_refused(store, install_namespace)
                want_engine = refused is None
            if scenario is not None and isinstance(clock, SimulatedClock):
                await _go_on_from_the_fleet(store, clock, None if want_engine else target.namespace)
        except BaseException:
            await store.close()
            raise
        outdated, notice = None, None
        if want_engine:
            try:
                outdated, notice = await _schema_check(store, target)
                if outdated is None and scenario is None and not elect:  # `nvcre controller`: said now (others: _elect)
                    outdated = await _fleet_played(store, install_namespace)
                if outdated and not elect:  # `nvcre controller` runs an engine or nothing
                    raise InputError(f"{target.server}: {outdated}")
            except BaseException:
                await store.close()
                raise
        # CRDs of another nvcre's schema: a viewer, which says why. One that elects (a console, run --wait) is made able to
        # run the engine all the same, and may once `setup init` of this version gives them its schema (_await_schema).
        engine_now = want_engine and outdated is None
        want_engine = want_engine and (outdated is None or elect)
        # A viewer shows one namespace (its RBAC may read no other); an engine reconciles certifications anywhere.
        cache = engine_cache(store, None if want_engine else target.namespace, nodes_optional=not want_engine)
        session = cls(target, store, WriteThroughStore(store, cache), clock, catalog, cache, NoLogs("no runner chosen yet"),
                      scenario=scenario, install_namespace=install_namespace)
        if notice:
            session.notices.append(notice)
        try:
            if want_engine:
                session._engine_kube = KubeStore(target, clock, user_agent=ENGINE_AGENT)
            if scenario is not None:
                session._sim_store = KubeStore(target, clock, user_agent=SIMULATOR_AGENT)
                # The cache sees the fleet's own writes at once; a viewer's fleet only regenerates logs, never writes.
                writer: ResourceStore = WriteThroughStore(session._sim_store, cache) if want_engine else ReadOnlyStore(session._sim_store)
                fleet = SimulatedFleet(writer, clock, scenario, install_namespace)
                try:
                    await fleet.check()  # another scenario's fleet on this cluster: refused before anything is written
                    if engine_now and elect:  # a console or `run`; `nvcre controller` registers them once it holds the Lease
                        await _require_namespace(store, target)  # before a Node is registered: nothing half-made
                        await fleet.ensure_nodes()
                        session._nodes_registered = True
                except FleetError as error:
                    raise InputError(f"{target.server}: {error}") from None
                session.runner = SimulatedRunner(writer, clock, scenario, fleet, fleet_only=True)  # other Nodes may be real GPUs
                session.logs = RunnerLogs(session.runner)
            else:
                # Real pods: the Kubernetes runner; a viewer's only reads their logs (it never reconciles).
                runner = (KubernetesRunner(session.engine_store, clock, session.engine_kube) if want_engine
                          else KubernetesRunner(ReadOnlyStore(store), clock, store, namespace=target.namespace))
                session.runner, session.logs = runner, PodLogSource(runner)
            if want_engine and not elect:
                session._make_engine(metrics)
            else:
                await session._elect(want_engine, metrics, role, refused, outdated)
            archive = default_history_path() if history == "default" else history
            session.archiver = attach_archiver(session, archive, f"cluster:{target.server}", required=history != "default",
                                               write=archive_writes)
            await cache.start()
            if NODE in cache.withheld and nodes_needed:
                session.notices.append(nodes_withheld(session.cluster))
            session.validation_requests = await open_validation_requests(store)
        except BaseException:
            await session.close()
            raise
        return session

    async def _elect(self, want_engine: bool, metrics: Metrics | None, role: str, refused: str | None = None,
                     outdated: str | None = None) -> None:
        """Take the Lease when `want_engine` and it is free, else view; `refused`: why this user may not run the engine
        (said after who holds the Lease, for good: such a viewer never takes it over); `outdated`: why the CRDs keep it
        from running the engine until `setup init` of this version gives them its schema (`_await_schema`)."""
        # Lease times are wall-clock times whatever clock the engine runs on: other processes read them.
        wall = SystemClock()
        lease = EngineLease(self.engine_kube, wall, self.install_namespace, engine_identity(role), runner=self.runner_kind)
        if not want_engine:
            self._viewing = (lease, "viewer: {}" + (f"; {refused}".replace("{", "{{").replace("}", "}}") if refused else ""))
            await self.refresh_viewer()
            return
        if outdated is not None:
            self._metrics, self.viewer_reason = metrics, f"viewer: {outdated}"
            self._await_schema(lease)
            return
        self._candidate, self._metrics = lease, metrics
        if (played := await self._fleet_in_play()) is not None:  # take_over asks again later
            self.viewer_reason = f"viewer: {played}"
            return
        try:
            acquired = await lease.try_acquire()
        except Forbidden:  # RBAC refused a write the access review did not foresee (or the server would not say)
            self._candidate = None
            self._viewing = (lease, f"viewer: {{}}; this user may not run the engine (RBAC: the Lease was refused): {CONTROLLER_NEEDED}")
            await self.refresh_viewer()
            return
        if not acquired:
            self.viewer_reason = "viewer: " + await _holder_text(lease)
            return
        self._hold(lease)

    def _await_schema(self, lease: EngineLease) -> None:
        """A session kept from running the engine by CRDs of another nvcre's schema (it opened on them, found them at a
        take-over, or its engine stopped when they were re-stamped under it: `guard_schema`): once `setup init` of this
        version gives them its own, it may take `lease` again (`take_over`, which the console and `run --wait` call),
        said once. One path for all three: one that stopped its engine stayed a viewer for good, and was restarted to."""
        self._candidate = None
        if self._awaiting is not None:
            self._awaiting.cancel()
        if self._closing:
            return
        self._awaiting = asyncio.create_task(self._schema_restored(lease), name="schema-restored")

    async def _schema_restored(self, lease: EngineLease) -> None:
        if await restored(self.engine_kube, SystemClock()):
            self._candidate, self.engine_stopped = lease, None
            self.notices.append(SCHEMA_RESTORED)

    async def refresh_viewer(self) -> None:
        """A viewer by choice (read-only, the wall) says who holds the Lease now: it never takes it over, so without
        this its header showed the holder of its start for good, a dead one included."""
        if self._viewing is not None and self.engine is None:
            lease, form = self._viewing
            self.viewer_reason = form.format(await _holder_text(lease))

    def _hold(self, lease: EngineLease) -> None:
        """Run an engine under `lease`, just acquired, and keep renewing it."""
        self.lease, self.viewer_reason = lease, None
        self._make_engine(self._metrics)
        self._holding = asyncio.create_task(lease.hold(on_lost=self._lost), name="lease")
        self._guarding = asyncio.create_task(self.guard_schema(), name="schema")

    async def guard_schema(self) -> str | None:
        """While this session's engine runs: once its CRDs carry another schema (`setup init` of another nvcre applied
        them under it), stop the engine after the object in hand (never half of one written), give the Lease back for
        the engine of that version, and stay a viewer, saying why (`engine_stopped`, the header), until `setup init` of
        this version gives the CRDs its schema again (`_await_schema`); the reason. None when the CRDs may not be read
        (nothing to guard). `nvcre controller` runs it beside its Lease queue (and exits on the reason)."""
        why = await changed_under(self.engine_kube, SystemClock())
        if why is None:
            return None
        self.engine_stopped, self.viewer_reason = why, f"viewer: {why}"
        candidate, self._candidate, self._viewing = self._candidate, None, None  # not while the schema is another's
        engine, self.engine = self.engine, None
        if engine is not None:
            self._stopped_engine = engine
            await engine.stop()
            # The key in hand is written whole before the Lease goes back: the next engine must not meet its last writes.
            # The Lease is renewed meanwhile (a Lease left to lapse is another's after its duration, 15 s, while it writes).
            deadline = asyncio.get_running_loop().time() + KEY_IN_HAND_SECONDS
            while engine.reconciling and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
        if self._holding is not None:
            self._holding.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._holding
            self._holding = None
        if self.lease is not None:
            with contextlib.suppress(StoreError):
                await self.lease.release()
            self.lease = None
        if candidate is not None:  # a session that elects (a console, run --wait; not `nvcre controller`)
            self._await_schema(candidate)
        return why

    async def take_over(self) -> bool:
        """A session that would run the engine but does not (another held the Lease, or this one lost it) takes the
        Lease once it is free, and once the engine it last stopped has written its key in hand; True when this session
        runs the engine now. A viewer by choice never does."""
        if self.engine is not None:
            return True
        lease = self._candidate
        if lease is None:
            await self.refresh_viewer()  # a viewer by necessity (RBAC) still says who holds the Lease now
            return False
        if self._stopped_engine is not None:  # its last object still written: a new engine over the cache would write beside it
            if self._stopped_engine.reconciling:
                return False
            self._stopped_engine = None  # done: let it go
        try:
            if (played := await self._fleet_in_play()) is not None:
                self.viewer_reason = f"viewer: {played}"
                return False
            acquired = await lease.try_acquire()
        except StoreError:
            return False  # the API server is away: the header says the last reason
        if not acquired:
            self.viewer_reason = "viewer: " + await _holder_text(lease)
            return False
        try:
            await self.go_on_from_the_fleet()
        except (InputError, StoreError) as error:  # it cannot run here (yet): the Lease goes back, the header says why
            with contextlib.suppress(StoreError):
                await lease.release()
            self.viewer_reason = "viewer: " + " ".join(str(getattr(error, "message", None) or error).split())
            if isinstance(error, SchemaRefused):  # the CRDs carry another version's schema (said as at opening): until
                self.engine_stopped, self.viewer_reason = error.why, f"viewer: {error.why}"  # setup init of this one
                self._await_schema(lease)
            return False
        self._hold(lease)
        return True

    async def go_on_from_the_fleet(self) -> None:
        """What an engine does once it holds the Lease, before it writes (at opening, and when it takes the Lease over).
        With --sim-runner: move the simulated clock on to where the fleet's runs were left (another process played the
        fleet, and its time ran on, while this one waited; `_go_on_from_the_fleet`), and register the fleet's Nodes if
        this process has not (a standby controller). With real pods: InputError while the simulated fleet's
        certifications run (`_fleet_played`). Either way SchemaRefused once its CRDs carry another nvcre's schema: it
        checked them when it opened, and `setup init` of another version may have run while it waited for the Lease (a
        standby controller, a viewer console). Only an engine's session calls it: every namespace."""
        try:
            installed = await installed_crds(self.engine_kube)
        except StoreError:
            installed = None  # unreadable (said at opening) or away: the guard looks again while it runs
        if installed is not None and installed.order != "same":
            raise SchemaRefused(self.target.server, schema_refusal(installed))
        if self.scenario is None:  # real pods: not while the simulated fleet's certifications run (InputError)
            if (played := await self._fleet_in_play()) is not None:
                raise InputError(f"{self.target.server}: {played}")
            return
        if isinstance(self.clock, SimulatedClock):
            await _go_on_from_the_fleet(self.kube, self.clock, None)
        if isinstance(self.runner, SimulatedRunner) and not self._nodes_registered:  # a standby controller wrote nothing
            fleet = self.runner.fleet
            try:
                await fleet.check()  # another scenario's fleet registered meanwhile: nothing half-made
                await fleet.ensure_nodes()
            except FleetError as error:
                raise InputError(f"{self.target.server}: {error}") from None
            self._nodes_registered = True

    async def _fleet_in_play(self) -> str | None:
        """Why this session, which runs real pods, may not run the engine now (`_fleet_played`); None with --sim-runner."""
        return None if self.scenario is not None else await _fleet_played(self.kube, self.install_namespace)

    def _make_engine(self, metrics: Metrics | None) -> Engine:
        """The engine over this session's store, cache and runner (one way to assemble it on a cluster)."""
        assert self.runner is not None
        self.engine = Engine(self.engine_store, self.clock, self.catalog, self.runner, cache=self.cache, metrics=metrics)
        self.engine.tell = self.notices.append  # told once (a runner tick that fails): the CLI's stderr, the console's notification
        if isinstance(self.runner, KubernetesRunner):  # pod and Node events wake the runs they concern
            self.runner.connect(self.engine.queue.add, self.cache)
        return self.engine

    async def _lost(self) -> None:
        """Another engine took the Lease (we could not renew in time): stop reconciling at once. Lost while `guard_schema`
        stopped the engine (the CRDs another nvcre's), it waits for this version's schema as the guard would have: the
        guard, cancelled here, never got to, and the session stayed a viewer for good."""
        if self._guarding is not None:
            self._guarding.cancel()
            self._guarding = None
        if self.engine is not None:
            self._stopped_engine = self.engine
            await self.engine.stop()
        lease, self.engine, self.lease = self.lease, None, None
        if self.engine_stopped is not None:  # the guard was stopping it: the header keeps why it runs no engine
            self.viewer_reason = f"viewer: {self.engine_stopped}"
            if lease is not None:
                self._await_schema(lease)
            return
        self.viewer_reason = "viewer: lost the engine lease"

    async def holder(self) -> LeaseHolder | None:
        """Who holds the engine Lease now."""
        return await _holder(EngineLease(self.kube, SystemClock(), self.install_namespace, "probe"))

    @property
    def runner_kind(self) -> str:
        """What this session's engine runs workloads with (said on the Lease it holds: ANNOTATION_ENGINE_RUNNER)."""
        return RUNNER_SIMULATED if self.scenario is not None else RUNNER_PODS

    def stamp(self, body: dict[str, Any]) -> None:
        """With --sim-runner, mark the certification as the simulated fleet's (ANNOTATION_ENGINE_RUNNER): an engine that
        runs real pods then leaves it alone before any of its runs has started (`_fleet_played`)."""
        if self.scenario is not None:
            metadata = body.setdefault("metadata", {})
            metadata["annotations"] = {**(metadata.get("annotations") or {}), ANNOTATION_ENGINE_RUNNER: RUNNER_SIMULATED}

    async def runs_otherwise(self) -> str | None:
        """Why a certification this process creates now would be run wrongly: the live Lease holder's engine runs
        workloads otherwise than this process would (real pods fail the simulated fleet's runs; the fleet plays a
        certification meant for GPUs). None when this process runs the engine, nobody live holds the Lease, or its
        holder does not say (an older nvcre)."""
        if self.engine is not None:
            return None
        holder = await self.holder()
        if holder is None or not holder.live or holder.runner in (None, self.runner_kind):
            return None
        if holder.runner == RUNNER_PODS:
            return (f"the engine that holds the Lease ({holder.identity}) runs real pods: it would fail the simulated "
                    "fleet's runs of this certification; stop it first, or run without --sim-runner")
        return (f"the engine that holds the Lease ({holder.identity}) plays the simulated fleet (--sim-runner): this "
                "certification would get made-up measurements; stop it first, or pass --sim-runner")

    async def close(self) -> None:
        """Stop reconciling, give the Lease up, end the watches and close the connections. Each task read when its turn
        comes, and no wait for the schema begun from then on: the Lease lost while the guard was cancelled began one,
        which went on reading the CRDs over closed connections for good."""
        self._closing = True
        for name in ("_guarding", "_holding", "_awaiting"):
            task = getattr(self, name)
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self.engine is not None:
            await self.engine.stop()
        if self.lease is not None:
            with contextlib.suppress(StoreError):
                await self.lease.release()
        await self.cache.stop()
        if isinstance(self.runner, KubernetesRunner):
            await self.runner.close()
        if self.validation_requests is not None:
            await self.validation_requests.stop()
        if self.archiver is not None:
            self.archiver.close()
        for store in (self._sim_store, self._engine_kube, self.kube):
            if store is not None:
                await store.close()


def authorizer_of(session: Session) -> Authorizer | None:
    """access.allowed on this session's API server (a SelfSubjectAccessReview), to ask before a step that cannot be
    taken back; None on the simulator (no RBAC)."""
    if not isinstance(session, KubeSession):
        return None
    store = session.kube

    async def ask(verb: str, kind: ResourceKind, namespace: str | None, name: str | None) -> bool | None:
        return await allowed(store, verb, kind, namespace, name)
    return ask


def nodes_withheld(cluster: str) -> str:
    """The notice of a viewer that may not list Nodes: what it shows without them (the console, --read-only, the wall
    and `report` go on with the rest), and the grant those take."""
    return (f"Nodes: this user may not list them on {cluster} (forbidden): shown without them (no map, no node states "
            f"or GPU nodes found; the rest as usual); those take {NODES_GRANT}")


async def _holder_text(lease: EngineLease) -> str:
    """Who holds the engine Lease, or why that cannot be told: a user who may not read Leases must not read
    "no engine holds the lease" while one does."""
    try:
        holder = await lease.holder()
    except StoreError as error:
        if rbac_refused(error):  # and which Role grants the read (grants.READS: the one setup init binds to every user)
            return with_grant(f"cannot read the engine Lease {lease.namespace}/{lease.NAME} (forbidden), so not whether an engine runs", error)
        return f"cannot read the engine Lease {lease.namespace}/{lease.NAME} ({' '.join(str(error).split())[:120]})"
    return describe_holder(holder, SystemClock().now())


async def _holder(lease: EngineLease) -> LeaseHolder | None:
    try:
        return await lease.holder()
    except StoreError:
        return None


async def _fleet_played(store: ResourceStore, install_namespace: str) -> str | None:
    """Why an engine that runs real pods must not run now: certifications the simulated fleet (--sim-runner) runs are
    unfinished, and a real-pod engine fails each of their runs, and starts their next ones on Nodes no kubelet
    serves (a `delete --wait` of one certification once wrecked another so). Such a certification carries the
    Simulated condition, or (before its status says so) one of its Jobs does, or (before any run) the mark of the
    `--sim-runner` process that created it (`stamp`). None when there are none, or when the
    ConfigMap that registers the fleet or the Certifications are not ours to read; Jobs, runs or Workflows RBAC does
    not let us list skip their own part only (one refused list skipped every part, the Certifications' own word too)."""
    try:
        await store.get(CONFIGMAP, FLEET_CONFIGMAP, install_namespace)
        certifications = (await store.list(CERTIFICATION)).items
    except (NotFound, Forbidden):
        return None
    jobs, runs = await _listed(store, JOB), await _listed(store, WORKLOADRUN)
    unfinished = {(meta_of(c).get("namespace"), meta_of(c).get("name")): c for c in certifications if not is_terminal(c)}
    played = {key for key, c in unfinished.items()
              if is_true(c, SIMULATED) or annotations_of(c).get(ANNOTATION_ENGINE_RUNNER) == RUNNER_SIMULATED}
    # Whose a Job or run is, by owner (run -> Job -> Workflow -> Certification, as the engine joins them), never by
    # label: a label removed by hand hid the fleet's runs, and a real-pod engine took the Lease and failed them. A run
    # an older nvcre's fleet started carries no Simulated condition: the server records the simulator as a writer of
    # its status.
    certification_of = _certification_by_owner(certifications, await _listed(store, WORKFLOW), jobs)
    played |= {key for job in jobs if is_true(job, SIMULATED) and (key := certification_of(job)) in unfinished}
    played |= {key for run in runs if (is_true(run, SIMULATED) or played_by_the_fleet(run)) and (key := certification_of(run)) in unfinished}
    if not played:
        return None
    names = ", ".join(f"{namespace}/{name}" for namespace, name in sorted(played)[:3]) + (" ..." if len(played) > 3 else "")
    return (f"the simulated fleet (ConfigMap {install_namespace}/{FLEET_CONFIGMAP}) runs {names}, and an engine that "
            "runs real pods would fail them: pass --sim-runner and its --scenario, or wait until they finish")


def _certification_by_owner(certifications: list[Obj], workflows: list[Obj], jobs: list[Obj]) -> Callable[[Obj], tuple[Any, Any] | None]:
    """(namespace, name) of the Certification a Job or run descends from by controller ownerReferences (None: an owner
    on the way is not among those listed)."""
    certified = {uid: (meta_of(c).get("namespace"), meta_of(c).get("name")) for c in certifications if (uid := meta_of(c).get("uid"))}
    parents = {uid: obj for obj in (*workflows, *jobs) if (uid := meta_of(obj).get("uid"))}

    def certification_of(obj: Obj) -> tuple[Any, Any] | None:
        for _ in range(3):  # a run's Job, its Workflow, its Certification
            uid = controller_uid(obj) or ""
            if uid in certified:
                return certified[uid]
            if (parent := parents.get(uid)) is None:
                return None
            obj = parent
        return None

    return certification_of


async def _listed(store: ResourceStore, kind: ResourceKind) -> list[Obj]:
    """Every object of `kind`, or none when they may not be listed (RBAC) or are not served."""
    try:
        return (await store.list(kind)).items
    except (NotFound, Forbidden):
        return []


async def _require_crds(store: KubeStore, target: KubeTarget) -> None:
    """Our CustomResourceDefinitions must be served: one line saying how to install them otherwise."""
    try:
        served = await store.served_resources(f"{NVCRE_GROUP}/v1alpha1")
    except NotKubernetes as error:
        raise InputError(f"{target.server} ({target.source}): {error.detail}") from None
    except StoreError as error:
        raise InputError(f"{target.server} ({target.source}): {error}") from None
    if not served:
        raise InputError(f"{target.server}: the nvcre.nvidia.com CRDs are not installed; run `nvcre setup init` first")


async def _require_namespace(store: KubeStore, target: KubeTarget) -> None:
    """The namespace certifications go to must exist (a user whose RBAC may not read Namespaces is taken at their word)."""
    try:
        await store.get(NAMESPACE, target.namespace)
    except NotFound:
        raise InputError(f"{target.server}: namespace {target.namespace} not found (nothing was created: "
                         f"kubectl create namespace {target.namespace}, or another -n)") from None
    except Forbidden:
        pass


async def _schema_check(store: KubeStore, target: KubeTarget) -> tuple[str | None, str | None]:
    """(why this process may not run an engine here, a notice): an engine writes what this nvcre's CRDs describe,
    and CRDs that `setup init` of another version installed prune (or refuse) fields it writes, which would lose
    runs silently. A notice instead when the CRDs cannot be read; a CRD without our schema annotation was not
    installed by `setup init` and is taken as it is. A running engine looks again (KubeSession.guard_schema)."""
    try:
        installed = await installed_crds(store)
    except Forbidden as error:
        return None, f"could not check the nvcre CRDs' schema ({error}): `nvcre setup init` of this version grants it"
    except StoreError as error:
        raise InputError(f"{target.server} ({target.source}): {error}") from None
    if installed is not None and installed.order != "same":
        return schema_refusal(installed), None
    return None, None
