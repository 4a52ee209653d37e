"""The simulated cluster's own actions: its Nodes, its epoch, and timed cordons.

The engine never writes a Node (it records, never remediates); the simulator plays the cluster, the way
NVSentinel would cordon a node, so this is the only module that writes Nodes.

The fleet epoch (time 0 of every fault's `at`) is kept in a ConfigMap, so an engine restarted on the same
store keeps the same epoch and every run replays the same way. The ConfigMap names the scenario it plays (and its
fingerprint): a process that would play another scenario on the same store is refused, not silently handed the
other fleet's Nodes and epoch with its own physics.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from nvcre_tui.engine.api.bodies import node_spec
from nvcre_tui.engine.api.nodes import node_labels
from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE, LABEL_MANAGED_BY, LABEL_SIMULATED, SIMULATOR_AGENT, SIMULATOR_NAME
from nvcre_tui.engine.clock import Clock, format_time, parse_time
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.sim.physics import fault_time
from nvcre_tui.engine.sim.scenario import Scenario, apply_change, build_nodes
from nvcre_tui.engine.store.errors import AlreadyExists, Conflict, Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.protocol import CONFIGMAP, NODE, VALIDATION_REQUEST, ResourceStore
from nvcre_tui.engine.units import parse_duration

Obj = dict[str, Any]
FLEET_CONFIGMAP = "nvcre-sim-fleet"
FLEET_NAMESPACE = INSTALL_NAMESPACE


class FleetError(RuntimeError):
    """The fleet's ConfigMap holds something that is not an epoch, or another scenario's fleet; the message says where."""


# The times a simulated run records on its WorkloadRun, all on the fleet's simulated clock.
RUN_TIMES = ("pendingSince", "startTime", "completionTime")


def latest_played(runs: Iterable[Obj], until: datetime) -> datetime | None:
    """The latest moment the fleet's runs record, up to `until` (a moment past it is damage, not time): where
    simulated time stood when the last process playing the fleet left it. A process that goes on (a controller taking
    over from `run --wait`, whose time ran ahead as fast as the engine could) starts there, so its runs neither wait
    for the wall clock to catch up nor go back in time."""
    moments = []
    for run in runs:
        status = run.get("status") if isinstance(run, dict) else None
        for key in RUN_TIMES:
            with contextlib.suppress(ValueError):
                moments.append(parse_time((status or {}).get(key)))
    return max((moment for moment in moments if moment <= until), default=None)


FLEET_FIELDS = ("seed", "nodes", "physics", "faults", "nodeChanges", "validationRequests")  # not its name or speed


def fingerprint(scenario: Scenario) -> str:
    """A short digest of what makes the fleet (its nodes, physics, faults and seed: not the speed its time runs at):
    two files of one name and seed differ in it when their fleets do."""
    fleet = {key: value for key, value in scenario.to_wire().items() if key in FLEET_FIELDS}
    wire = json.dumps(fleet, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(wire.encode()).hexdigest()[:16]


def registered_by_simulator(node: Obj) -> bool:
    """Whether the simulated fleet registered this Node: labelled simulated, and on an API server (which keeps
    managedFields: who set each field) the simulator is who set that label. A Node merely labelled simulated (a real one
    someone labelled, a copy of a simulated one) is not its own: it never plays, cordons or deletes it. The embedded store
    keeps no managedFields: its Nodes are the fleet's. A Node an older simulator registered carries no such label
    (`registered_before_the_label`)."""
    if node_labels(node).get(LABEL_SIMULATED) != "true":
        return registered_before_the_label(node)
    entries = (node.get("metadata") or {}).get("managedFields")
    if not entries:
        return True
    for entry in entries:
        labels = (((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels") or {})
        if str(entry.get("manager") or "").split("/")[0] == SIMULATOR_AGENT and f"f:{LABEL_SIMULATED}" in labels:
            return True
    return False


def registered_before_the_label(node: Obj) -> bool:
    """A Node without the simulated label that an nvcre from before that label registered with `--sim-runner`: the server
    records the simulator as its only writer (its managedFields: a kubelet, a node controller, a user's label or cordon
    would each be there too). Its fleet adopts it (`ensure_nodes` labels it), `setup status` counts it as simulated and
    `setup reset` deletes it: left alone it looked like a real GPU node, which `--sim-runner` refused to play."""
    if node_labels(node).get(LABEL_SIMULATED) == "true":
        return False
    entries = (node.get("metadata") or {}).get("managedFields") or []
    return bool(entries) and all(isinstance(entry, dict) and str(entry.get("manager") or "").split("/")[0] == SIMULATOR_AGENT
                                 for entry in entries)


class SimulatedFleet:
    """Nodes of a scenario in a store, the fleet epoch, and the cordons the scenario times."""

    def __init__(self, store: ResourceStore, clock: Clock, scenario: Scenario, namespace: str = FLEET_NAMESPACE, *,
                 plays_the_cluster: bool = False) -> None:
        self.store, self.clock, self.scenario = store, clock, scenario
        self.namespace = namespace  # where its epoch ConfigMap lives: nvcre's install namespace on a cluster
        self.writes = 0  # every store write, so the engine can tell a quiet sweep
        self._epoch: datetime | None = None
        self._nodes_ready = False
        self._cordoned: set[str] = set()  # a memo of cordons already seen in the store, to skip reads
        self._changed: set[int] = set()  # indexes of timed node changes already applied
        # Scenario names a Node without the simulated label already holds: a real node (or one a user made) that the
        # fleet must not play: its made-up numbers would be recorded as that node's (`--sim-runner` fails its groups).
        self.not_ours: set[str] = set()
        # A test's kubelet plays the whole cluster (its Nodes are "real", unlabelled on purpose): every one is its own.
        self.plays_the_cluster = plays_the_cluster

    async def ensure_nodes(self) -> None:
        """Create the scenario's Nodes that are missing (create drops status, so status follows) and the epoch."""
        for node in build_nodes(self.scenario):
            name = node["metadata"]["name"]
            # Said on the Node itself: `setup status` counts it apart from real GPU nodes; `setup reset` removes it, as one
            # the simulator registered (managed-by nvcre-simulator too: a real Node someone labelled simulated stays).
            node["metadata"].setdefault("labels", {}).update({LABEL_SIMULATED: "true", LABEL_MANAGED_BY: SIMULATOR_NAME})
            try:
                stored = await self.store.create(NODE, node)
                self.writes += 1
            except (AlreadyExists, Forbidden) as error:
                # Forbidden: an identity that may not write Nodes (the engine's ServiceAccount) is fine as long
                # as someone with the right registered them already.
                try:
                    stored = await self.store.get(NODE, name)
                except NotFound:
                    raise FleetError(f"cannot register the simulated Node {name}: {error.message}; the simulated "
                                     "fleet writes Nodes: install with `nvcre setup init --sim-runner` (the nvcre-simulator "
                                     "role), or run it with credentials that may create Nodes") from None
                if not registered_by_simulator(stored) and not self.plays_the_cluster:
                    self.not_ours.add(name)
                    continue
                if registered_before_the_label(stored) and not isinstance(error, Forbidden):
                    # an older simulator's: labelled as this one labels its own, so every check tells it from a real Node
                    stored["metadata"]["labels"] = {**node_labels(stored), LABEL_SIMULATED: "true", LABEL_MANAGED_BY: SIMULATOR_NAME}
                    try:
                        stored = await self.store.update(NODE, stored)
                        self.writes += 1
                    except (Conflict, NotFound):
                        continue  # changed or removed meanwhile: the next call looks again
                if stored.get("status") or isinstance(error, Forbidden):
                    continue  # present and complete: an earlier engine made it, or the user edited it
            stored["status"] = node["status"]
            try:
                await self.store.update_status(NODE, stored)
                self.writes += 1
            except (Conflict, NotFound):
                pass  # changed or removed meanwhile; the next call looks again
        await self._register_validation_requests()
        await self.epoch()
        self._nodes_ready = True

    async def _register_validation_requests(self) -> None:
        """The scenario's NVSentinel ValidationRequests (as NVSentinel's lifecycle manager would create them).
        A cluster without their CRD serves none: then there is simply no NVSentinel to show (the console says
        "no ValidationRequest CRD"). Any other refusal is a FleetError naming the request: one refused request
        must not take the others with it unseen."""
        requests = self.scenario.validation_requests or []
        if not requests:
            return
        try:
            await self.store.list(VALIDATION_REQUEST)
        except NotFound:
            return  # the kind is not served: no NVSentinel on this cluster
        except Forbidden:
            pass  # may not look: the creates below tell
        for index, request in enumerate(requests):
            name = request.metadata.name
            body = {**request.to_wire(), "apiVersion": VALIDATION_REQUEST.api_version, "kind": VALIDATION_REQUEST.kind}
            status = body.pop("status", None)
            try:
                stored = await self.store.create(VALIDATION_REQUEST, body)
                self.writes += 1
            except (AlreadyExists, Forbidden) as error:
                # As for Nodes: an identity that may not create them is fine once someone who may has.
                try:
                    stored = await self.store.get(VALIDATION_REQUEST, name)
                except NotFound:
                    if isinstance(error, AlreadyExists):
                        continue  # removed meanwhile: someone else's to keep or not
                    raise self._refused(index, name, error, "; the simulated fleet creates the scenario's ValidationRequests: "
                                        "run it with credentials that may create validationrequests.nvsentinel.nvidia.com") from None
                if stored.get("status") or status is None or isinstance(error, Forbidden):
                    continue  # present and complete: an earlier engine made it, or the user edited it
            except StoreError as error:
                if error.retryable:
                    raise
                raise self._refused(index, name, error) from None
            if status is None:
                continue
            stored["status"] = status
            try:
                await self.store.update_status(VALIDATION_REQUEST, stored)
                self.writes += 1
            except (Conflict, NotFound):
                pass  # changed or removed meanwhile: someone else's now
            except StoreError as error:
                if error.retryable:
                    raise
                raise self._refused(index, name, error, what="the status of ") from None

    @staticmethod
    def _refused(index: int, name: str, error: StoreError, hint: str = "", what: str = "") -> FleetError:
        return FleetError(f"cannot register {what}the scenario's ValidationRequest {name} (validationRequests[{index}]): {error.message}{hint}")

    async def epoch(self) -> datetime:
        """Time 0 of the fleet: read from its ConfigMap, created now if there is none."""
        if self._epoch is not None:
            return self._epoch
        try:
            config = await self.store.get(CONFIGMAP, FLEET_CONFIGMAP, self.namespace)
        except NotFound:
            config = await self._create_epoch()
        self._check_same(config)
        text = (config.get("data") or {}).get("epoch", "")
        try:
            self._epoch = parse_time(text)
        except ValueError as error:
            raise FleetError(f"ConfigMap {self.namespace}/{FLEET_CONFIGMAP}: data.epoch: {error}") from None
        return self._epoch

    async def check(self) -> None:
        """FleetError when the store already holds another scenario's fleet (nothing is written: a viewer may call it);
        a fleet not registered yet, or a ConfigMap this identity may not read, says nothing here."""
        try:
            self._check_same(await self.store.get(CONFIGMAP, FLEET_CONFIGMAP, self.namespace))
        except (NotFound, Forbidden):
            pass

    def _check_same(self, config: Obj) -> None:
        data = config.get("data") or {}
        name, seed, held = data.get("scenario"), data.get("seed"), data.get("fingerprint")
        mine = (self.scenario.name, str(self.scenario.seed))
        if name is seed is None or ((name, seed) == mine and held in (None, fingerprint(self.scenario))):
            return  # the same fleet (no fingerprint: written before them), or a ConfigMap that names no scenario
        what = ("another simulated fleet under the same scenario name and seed (its nodes, faults or settings differ)"
                if (name, seed) == mine else f"the simulated fleet of scenario {printable(str(name))!r} (seed {printable(str(seed))})")
        raise FleetError(f"ConfigMap {self.namespace}/{FLEET_CONFIGMAP}: this cluster holds {what}, not "
                         f"{self.scenario.name!r} (seed {self.scenario.seed}); pass that scenario's file with --scenario, "
                         "or remove that fleet first (`nvcre setup reset`)")

    async def offset(self, moment: datetime) -> float:
        """Seconds from the fleet epoch to `moment`."""
        return (moment - await self.epoch()).total_seconds()

    async def tick(self) -> float | None:
        """Apply cordons that are due; seconds until the next one (None: no more timed fleet events)."""
        if not self._nodes_ready:
            await self.ensure_nodes()
        now = await self.offset(self.clock.now())
        waits = []
        for fault in self.scenario.faults:
            at = fault_time(fault)
            if fault.type != "cordon" or at is None or fault.node in self._cordoned or fault.node in self.not_ours:
                continue  # untimed cordons are already in the Nodes build_nodes made; a real Node is never cordoned
            if at > now:
                waits.append(at - now)
            else:
                await self._cordon(fault.node)
        for index, change in enumerate(self.scenario.node_changes or []):
            if change.at is None or index in self._changed or change.node in self.not_ours:
                continue  # untimed changes are already in the Nodes build_nodes made; a real Node is never changed
            at = parse_duration(change.at)
            if at > now:
                waits.append(at - now)
            elif await self._change(change):
                self._changed.add(index)
        return min(waits) if waits else None

    async def _change(self, change: Any) -> bool:
        """Apply a timed node change (metadata, spec, then status); False: try again on the next tick."""
        try:
            node = await self.store.get(NODE, change.node)
        except NotFound:
            return True
        changed = apply_change(node, change)
        try:
            stored = await self.store.update(NODE, changed)
            stored["status"] = changed["status"]
            await self.store.update_status(NODE, stored)
            self.writes += 2
        except (Conflict, NotFound):
            return False
        return True

    async def _create_epoch(self) -> Obj:
        config = {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": FLEET_CONFIGMAP, "namespace": self.namespace,
                         "labels": {LABEL_MANAGED_BY: SIMULATOR_NAME}},
            "data": {"epoch": format_time(self.clock.now()), "scenario": self.scenario.name, "seed": str(self.scenario.seed),
                     "fingerprint": fingerprint(self.scenario)},
        }
        try:
            created = await self.store.create(CONFIGMAP, config)
            self.writes += 1
            return created
        except AlreadyExists:  # another engine made it first: theirs is the epoch
            return await self.store.get(CONFIGMAP, FLEET_CONFIGMAP, self.namespace)

    async def _cordon(self, name: str) -> None:
        """Set spec.unschedulable on a Node once; a node that is gone or already cordoned needs nothing."""
        try:
            node = await self.store.get(NODE, name)
        except NotFound:
            self._cordoned.add(name)
            return
        if not node_spec(node).get("unschedulable"):
            node.setdefault("spec", {})["unschedulable"] = True
            try:
                await self.store.update(NODE, node)
                self.writes += 1
            except (Conflict, NotFound):
                return  # the next tick tries again
        self._cordoned.add(name)


__all__ = ["FLEET_CONFIGMAP", "FLEET_NAMESPACE", "FleetError", "SimulatedFleet"]
