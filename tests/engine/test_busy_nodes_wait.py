"""One rule for a category none of whose target nodes is available: every one cordoned or not Ready (found as the
category is planned) or busy with others' pods (found as its Workflow starts) waits the same window (NODE_WAIT) for a
node, saying so in one wording, then fails NodesUnavailable, testing and blaming none. Busy nodes failed the Workflow at
once while cordoned ones waited five minutes: another team's training that ends a minute later failed the category."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.planning.discovery import NODE_WAIT
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, WORKFLOW, MemoryStore
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.waiting import categories_waiting_for_nodes, waiting_to_start
from tests.engine.test_certifications_share_nodes import CASE, certification
from tests.scenarios.harness import NAMESPACE, catalog

Obj = dict[str, Any]
NODES = [f"gpu-node-0{n}" for n in range(1, 5)]


class SharedFleet(SimulatedRunner):
    """The simulated fleet, where team-a's training holds every node's 8 GPUs until `freed` (never: None)."""

    def __init__(self, *args: Any, freed: datetime | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.freed = freed

    async def others_on(self, nodes: Sequence[str]) -> dict[str, list[Obj]]:
        if self.freed is not None and self.clock.now() >= self.freed:
            return {}
        return {node: [{"metadata": {"name": f"trainer-{node[-1]}", "namespace": "team-a"}, "status": {"phase": "Running"},
                        "spec": {"nodeName": node, "containers": [{"resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}] for node in nodes}


async def _certify(freed: timedelta | None) -> tuple[Obj, Obj, list[tuple[str, str, str]], list[tuple[list[tuple[str, str]], str | None]], timedelta]:
    """A certification of four nodes all held by team-a (until `freed` after the start); its category status, its
    Workflow, what that Workflow's InProgress condition said on the way (status, reason, message), what the console's
    views said of it then (categories_waiting_for_nodes, waiting_to_start), and how long it took."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    runner = SharedFleet(store, clock, scenario, SimulatedFleet(store, clock, scenario), freed=None if freed is None else SIM_START + freed)
    engine = Engine(store, clock, catalog(), runner)
    await store.create(CERTIFICATION, certification("shared", NODES))
    said: list[tuple[str, str, str]] = []
    shown: list[tuple[list[tuple[str, str]], str | None]] = []  # the console's (wall, run --wait) words for its wait

    async def over() -> bool:
        for wf in (await store.list(WORKFLOW, NAMESPACE)).items:
            now = cond.find((wf.get("status") or {}).get("conditions"), "InProgress")
            if now is not None and now.get("status") == "True" and (seen := (now["status"], now["reason"], now["message"])) not in said:
                said.append(seen)
                snapshot = await Snapshot.read(store, NAMESPACE)
                shown.append((categories_waiting_for_nodes(snapshot, "shared"), waiting_to_start(snapshot, "shared")))
        return cond.is_terminal(await store.get(CERTIFICATION, "shared", NAMESPACE))

    assert await engine.run_until_settled(until=over, max_seconds=6 * 3600)
    [status] = certification_status(await store.get(CERTIFICATION, "shared", NAMESPACE))["categoryStatuses"]
    [wf] = (await store.list(WORKFLOW, NAMESPACE)).items
    return dict(status), wf, said, shown, clock.now() - SIM_START


WAITING = ("no node to test yet, every one the target selects unavailable (4 nodes: GPUs, CPUs or memory a pod needs held by "
           "other pods (not nvcre's) (the first, gpu-node-01: 8 of 8 nvidia.com/gpu requested by team-a/trainer-1, 8 needed); "
           "gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04): waiting for one, up to 5m00s")


async def test_a_category_every_node_of_which_is_busy_waits_for_one_and_runs_when_they_are_freed() -> None:
    """team-a's training ends two minutes in: the category waited for it, said so on its Workflow, and then certified
    the four nodes. Before, its Workflow failed NodesUnavailable at its first look, a cordoned fleet's five minutes not given."""
    status, wf, said, shown, _ = await _certify(freed=timedelta(minutes=2))
    assert (status["status"], status.get("reason")) == ("Succeeded", "JobCompleted"), status
    assert ("True", "WaitingForNodes", WAITING) in said, said
    # the wall's "waits: ..." and the title's WAITING, as for a category waiting for nodes before its Workflow is made
    assert shown[0] == ([("communication/nccl-all-reduce", WAITING)], "for a node of its target to be available"), shown
    assert wf["status"]["orchestration"]["totalNodes"] == 4 and not wf["status"]["orchestration"].get("excludedNodes"), wf["status"]


async def test_a_category_every_node_of_which_stays_busy_fails_after_the_same_wait_as_a_cordoned_one() -> None:
    """Never freed: it fails NodesUnavailable once NODE_WAIT has gone by, in the words a cordoned fleet fails with."""
    status, wf, said, _, took = await _certify(freed=None)
    assert (status["status"], status["reason"]) == ("Failed", "NodesUnavailable"), status
    assert status["message"] == WAITING.replace("no node to test yet", "no node to test").replace(
        ": waiting for one, up to 5m00s", ": nothing tested, no node blamed"), status
    assert NODE_WAIT <= took < NODE_WAIT + timedelta(minutes=1), took
    assert [item["name"] for item in wf["status"]["orchestration"]["excludedNodes"]] == NODES


async def test_a_cordoned_fleet_waits_in_the_same_words() -> None:
    """Every node cordoned (found as the category is planned, on the Nodes): the category says it waits as a busy fleet's
    Workflow says it, then fails in the same words after the same NODE_WAIT."""
    from tests.scenarios.harness import CASES

    case = CASES / "all-nodes-cordoned-waits-then-fails"
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(case / "scenario.yaml")
    fleet = SimulatedFleet(store, clock, scenario)
    await fleet.ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, fleet))
    await store.create(CERTIFICATION, certification("cordoned", ["gpu-node-01", "gpu-node-02"]))
    said: list[str] = []

    async def over() -> bool:
        cert = await store.get(CERTIFICATION, "cordoned", NAMESPACE)
        said.extend(str(s.get("message")) for s in certification_status(cert).get("categoryStatuses") or []
                    if s.get("reason") == "WaitingForNodes" and s.get("message") not in said)
        return cond.is_terminal(cert)

    assert await engine.run_until_settled(until=over, max_seconds=3600)
    unavailable = "every one the target selects unavailable (2 nodes: cordoned (spec.unschedulable); gpu-node-01, gpu-node-02)"
    assert said == [f"no node to test yet, {unavailable}: waiting for one, up to 5m00s"], said
    [status] = certification_status(await store.get(CERTIFICATION, "cordoned", NAMESPACE))["categoryStatuses"]
    assert (status["status"], status["reason"], status["message"]) == ("Failed", "NodesUnavailable", f"no node to test, {unavailable}: "
                                                                       "nothing tested, no node blamed"), status
    assert clock.now() - SIM_START == NODE_WAIT
