"""SimulatedFleet: Nodes in the store, an epoch that survives restarts, timed cordons."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP, FLEET_NAMESPACE, FleetError, SimulatedFleet
from nvcre_tui.engine.sim.scenario import build_nodes
from nvcre_tui.engine.store import CONFIGMAP, NODE, MemoryStore

from .helpers import scenario

TIMED = scenario(faults=[{"type": "cordon", "node": "gpu-node-05", "at": "10m"}, {"type": "cordon", "node": "gpu-node-06"}])


async def test_ensure_nodes_creates_the_scenario_nodes_with_status_once() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    fleet = SimulatedFleet(store, clock, TIMED)
    await fleet.ensure_nodes()
    nodes = (await store.list(NODE)).items
    expected = build_nodes(TIMED)
    assert [n["metadata"]["name"] for n in nodes] == [n["metadata"]["name"] for n in expected]
    assert all(n["status"] == e["status"] for n, e in zip(nodes, expected))
    assert [n["metadata"]["name"] for n in nodes if n["spec"].get("unschedulable")] == ["gpu-node-06"]
    writes = fleet.writes
    await SimulatedFleet(store, clock, TIMED).ensure_nodes()  # a restarted engine: nothing to do
    assert (await store.list(NODE)).items == nodes and fleet.writes == writes


async def test_epoch_is_kept_across_restarts() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    first = await SimulatedFleet(store, clock, TIMED).epoch()
    clock.advance(3600)
    restarted = SimulatedFleet(store, clock, TIMED)
    assert await restarted.epoch() == first
    assert await restarted.offset(clock.now()) == 3600.0
    config = await store.get(CONFIGMAP, FLEET_CONFIGMAP, FLEET_NAMESPACE)
    assert config["data"]["epoch"] == format_time(first) and config["data"]["scenario"] == TIMED.name


async def test_a_broken_epoch_is_a_clear_error() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "data": {"epoch": "yesterday"},
                                   "metadata": {"name": FLEET_CONFIGMAP, "namespace": FLEET_NAMESPACE}})
    with pytest.raises(FleetError, match="nvcre-system/nvcre-sim-fleet: data.epoch"):
        await SimulatedFleet(store, clock, TIMED).epoch()


@pytest.mark.parametrize(("other", "said"), [
    ({"seed": 99}, "the simulated fleet of scenario "),
    ({"faults": [{"type": "cordon", "node": "gpu-node-05"}]}, "another simulated fleet under the same scenario name and seed"),
])
async def test_another_scenarios_fleet_is_refused_before_anything_is_written(other: dict[str, object], said: str) -> None:
    """Its Nodes and epoch played with this scenario's physics would give another fleet's verdicts, silently."""
    clock = ManualClock()
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, TIMED).ensure_nodes()
    stranger = SimulatedFleet(store, clock, scenario(**{"faults": TIMED.to_wire()["faults"], **other}))
    revision = store.resource_version
    for step in (stranger.check, stranger.ensure_nodes, stranger.epoch):
        with pytest.raises(FleetError, match=said) as refused:
            await step()
        assert "pass that scenario's file with --scenario" in str(refused.value) and "\n" not in str(refused.value)
    assert store.resource_version == revision
    await SimulatedFleet(store, clock, TIMED).check()  # the same scenario again: fine


async def test_timed_cordon_is_applied_at_its_time_and_once() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    fleet = SimulatedFleet(store, clock, TIMED)
    assert await fleet.tick() == 600.0  # the first tick also makes the nodes
    clock.advance(599)
    assert await fleet.tick() == 1.0
    assert not (await store.get(NODE, "gpu-node-05"))["spec"].get("unschedulable")
    clock.advance(1)
    assert await fleet.tick() is None
    assert (await store.get(NODE, "gpu-node-05"))["spec"]["unschedulable"] is True
    writes = fleet.writes
    restarted = SimulatedFleet(store, clock, TIMED)
    await restarted.tick()
    assert restarted.writes == 0 and fleet.writes == writes


async def test_a_fleet_played_at_another_speed_is_the_same_fleet() -> None:
    """The speed its time runs at (the console 120x, a controller 1x) makes no other fleet."""
    clock = ManualClock()
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, TIMED).ensure_nodes()
    await SimulatedFleet(store, clock, scenario(**{"faults": TIMED.to_wire()["faults"], "speed": 1.0})).check()


async def test_a_real_node_that_bears_a_scenario_name_is_never_cordoned_or_changed() -> None:
    """--sim-runner on a cluster whose real gpu-node-05 existed before it: the fleet did not adopt it, yet its timed
    cordon and node changes were still written to it (a production node taken out of scheduling)."""
    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(NODE, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-05", "labels": {"team": "prod"}}})
    timed = scenario(faults=[{"type": "cordon", "node": "gpu-node-05", "at": "10m"}, {"type": "cordon", "node": "gpu-node-07", "at": "10m"}],
                     nodeChanges=[{"node": "gpu-node-05", "at": "5m", "labels": {"team": "sim"}}])
    fleet = SimulatedFleet(store, clock, timed)
    await fleet.ensure_nodes()
    assert fleet.not_ours == {"gpu-node-05"}
    clock.advance(3600)
    await fleet.tick()
    real = await store.get(NODE, "gpu-node-05")
    assert real["metadata"]["labels"] == {"team": "prod"} and not (real.get("spec") or {}).get("unschedulable")
    assert (await store.get(NODE, "gpu-node-07"))["spec"].get("unschedulable")  # the fleet's own node is cordoned
