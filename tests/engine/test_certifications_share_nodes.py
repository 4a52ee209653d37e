"""Two certifications on the same nodes run one after the other, as two categories of one do: on a cluster the second's
pods waited for the GPUs the first held and failed unplaced after the scheduling grace, blaming nobody (and the
simulator measured each as if alone). A category waits only for Workflows already made: first come, first served;
certifications on other nodes run side by side."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status, workflow_status
from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, WORKFLOW, MemoryStore
from tests.scenarios.harness import CASES, NAMESPACE, catalog

CASE = CASES / "all-pass-full-scale"  # four nodes gpu-node-01 to -04


def certification(name: str, nodes: list[str]) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"target": {"nodeNames": nodes},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                     "options": {"testScale": "full-scale", "thresholds": {"busBandwidthGBps": "value >= 300"}}}]}}


async def run_two(first: list[str], second: list[str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Two certifications created together on those nodes, run to the end: each one's Workflow (start, completion)
    by certification, and the messages the second's category showed while pending."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    await store.create(CERTIFICATION, certification("first", first))
    await store.create(CERTIFICATION, certification("second", second))
    said: list[str] = []

    async def done() -> bool:
        waiting = await store.get(CERTIFICATION, "second", NAMESPACE)
        said.extend(s.get("message", "") for s in certification_status(waiting).get("categoryStatuses") or [] if s["status"] == "Pending")
        return all([cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE)) for name in ("first", "second")])

    assert await engine.run_until_settled(until=done, max_seconds=4 * 3600)
    for name in ("first", "second"):
        assert certification_status(await store.get(CERTIFICATION, name, NAMESPACE))["summary"]["result"] == "PASSED"
    times = {}
    for wf in (await store.list(WORKFLOW, NAMESPACE)).items:
        owner = wf["metadata"]["ownerReferences"][0]["name"]
        times[owner] = (workflow_status(wf)["startTime"], workflow_status(wf)["completionTime"])
    return times, said


async def test_a_second_certification_on_the_same_nodes_waits_for_the_first() -> None:
    times, said = await run_two(["gpu-node-01", "gpu-node-02", "gpu-node-03"], ["gpu-node-03", "gpu-node-04"])
    assert parse_time(times["second"][0]) >= parse_time(times["first"][1])
    assert "waits for certification first, which runs on 1 of this category's nodes" in said


async def test_a_category_held_on_every_node_says_so_in_a_whole_sentence() -> None:
    """It read "waits for certification first, running on 4 nodes of this category's": cut short after "category's"."""
    nodes = ["gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04"]
    _, said = await run_two(nodes, nodes)
    assert "waits for certification first, which runs on all 4 of this category's nodes" in said, said
    _, said = await run_two(nodes, ["gpu-node-01"])
    assert "waits for certification first, which runs on this category's node" in said, said


async def test_certifications_on_other_nodes_run_side_by_side() -> None:
    times, said = await run_two(["gpu-node-01", "gpu-node-02"], ["gpu-node-03", "gpu-node-04"])
    assert times["second"][0] == times["first"][0] and not said


def test_a_category_held_by_a_workflow_is_woken_when_a_workflow_ends_not_by_node_changes() -> None:
    """Node changes never stop on a large fleet, and each look at a held category reads every Workflow."""
    from nvcre_tui.engine.engine import _waits_for_nodes
    from nvcre_tui.engine.store.protocol import CERTIFICATION as KIND

    held = {"status": {"categoryStatuses": [{"status": "Pending", "message": "waits for certification first, which runs on 1 of this category's nodes"}]}}
    discovering = {"status": {"categoryStatuses": [{"status": "Pending", "message": "no node matches the target"}]}}
    assert not _waits_for_nodes(KIND, held) and _waits_for_nodes(KIND, held, held=True)
    assert _waits_for_nodes(KIND, discovering) and _waits_for_nodes(KIND, discovering, held=True)



async def test_the_console_says_why_a_held_category_waits() -> None:
    """Its Workflow is not made yet: the dashboard's waiting line and the wall said nothing of the wait."""
    from textual.widgets import Static

    from nvcre_tui.app import NvcreApp
    session = await second_held()
    why = "communication/nccl-all-reduce: waits for certification first, which runs on 1 of this category's nodes"
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        from textual.widgets import DataTable

        table = app.screen.query_one("#certs", DataTable)
        results = {str(table.get_row_at(i)[0]): str(table.get_row_at(i)[1]) for i in range(table.row_count)}
        assert results == {"first": "⋯ RUNNING", "second": "◷ WAITING"}, results  # second read RUNNING, as the wall's title did
        await pilot.press("down")  # the rows: first, second (newest first: second is on top)
        await pilot.pause()
        shown = str(app.screen.query_one("#waiting", Static).render())
        if why not in shown:
            await pilot.press("up")
            await pilot.pause()
            shown = str(app.screen.query_one("#waiting", Static).render())
        assert why in shown, shown
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        if "second" not in str(app.screen.query_one("#title", Static).render()):
            await pilot.press("right")
            await pilot.pause()
            tally = str(app.screen.query_one("#tally", Static).render())
        assert why.replace(": ", " ", 1) in tally, tally


async def test_a_waiting_category_goes_before_a_later_certification_on_its_nodes() -> None:
    """First come, first served: b (all four nodes) waits for a (two of them); c, created after b on b's other two
    nodes, started at once and kept them busy, so a fleet-wide certification could wait for ever behind smaller ones."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    nodes = [f"gpu-node-0{i}" for i in range(1, 5)]
    said: list[str] = []
    for name, target in (("a-first", nodes[:2]), ("b-second", nodes), ("c-third", nodes[2:])):
        await store.create(CERTIFICATION, certification(name, target))
        clock.advance(1)  # created a second apart: the order they came in
        await engine.run_until_settled(max_seconds=0)

    async def done() -> bool:
        third = await store.get(CERTIFICATION, "c-third", NAMESPACE)
        said.extend(s.get("message", "") for s in certification_status(third).get("categoryStatuses") or [] if s["status"] == "Pending")
        return all([cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE)) for name in ("a-first", "b-second", "c-third")])

    assert await engine.run_until_settled(until=done, max_seconds=4 * 3600)
    times = {wf["metadata"]["ownerReferences"][0]["name"]: (parse_time(workflow_status(wf)["startTime"]), parse_time(workflow_status(wf)["completionTime"]))
             for wf in (await store.list(WORKFLOW, NAMESPACE)).items}
    assert times["b-second"][0] >= times["a-first"][1]
    assert times["c-third"][0] >= times["b-second"][1]  # it started at once, before b
    assert "waits for certification b-second, which is queued first for both of this category's nodes" in said, said



async def test_a_category_held_for_long_gets_its_full_grace_for_nodes_afterwards() -> None:
    """The 5-minute wait for eligible nodes counted from the certification's start: a category held 5 minutes and a
    half by another certification failed at once when its nodes stopped matching its target for a moment."""
    from nvcre_tui.engine.store import NODE

    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    node = await store.get(NODE, "gpu-node-02")
    node["metadata"]["labels"]["example.com/pool"] = "b"
    await store.update(NODE, node)
    first = certification("first", ["gpu-node-01", "gpu-node-02"])
    first["spec"]["categories"][0]["options"]["repeatCount"] = 3  # long enough: 3 runs of about 3 minutes
    await store.create(CERTIFICATION, first)
    await engine.run_until_settled(max_seconds=0)  # first's Workflow is made: it holds gpu-node-02
    second = certification("second", [])
    second["spec"]["target"] = {"nodeSelector": {"example.com/pool": "b"}}
    await store.create(CERTIFICATION, second)

    async def second_status() -> Any:
        return certification_status(await store.get(CERTIFICATION, "second", NAMESPACE))["categoryStatuses"][0]

    async def held_long() -> bool:
        return clock.now() - SIM_START >= timedelta(minutes=5, seconds=30)

    assert await engine.run_until_settled(until=held_long, max_seconds=3600)
    assert (await second_status())["message"].startswith("waits for certification first")
    assert not cond.is_terminal(await store.get(CERTIFICATION, "first", NAMESPACE))
    node = await store.get(NODE, "gpu-node-02")
    del node["metadata"]["labels"]["example.com/pool"]  # relabelled: no node matches for a while
    await store.update(NODE, node)

    async def first_done() -> bool:
        return cond.is_terminal(await store.get(CERTIFICATION, "first", NAMESPACE))

    assert await engine.run_until_settled(until=first_done, max_seconds=3600)
    await engine.run_until_settled(max_seconds=1)  # the hold ends: no node matches its target now
    status = await second_status()
    assert (status["status"], status["reason"]) == ("Pending", "WaitingForNodes"), status
    assert "waitingSince" in status, status
    assert parse_time(status["waitingSince"]) >= SIM_START + timedelta(minutes=5, seconds=30), status


async def test_the_wall_counts_a_waiting_certification_on_its_targeted_nodes() -> None:
    """Every category of `second` waits for `first`: the wall counted the whole fleet ("of 4 nodes: ... + 4 ◦ untested"),
    as if every node were in it and nothing waited. It counts the 2 nodes it targets, waiting, and says nothing runs;
    its title says WAITING and for whom (it said RUNNING, the summary's result)."""
    from textual.widgets import Digits, Static

    from nvcre_tui.app import NvcreApp
    from nvcre_tui.widgets.rack_map import RackMap

    session = await second_held()
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        if "second" not in str(app.screen.query_one("#title", Static).render()):
            await pilot.press("right")
            await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        title = str(app.screen.query_one("#title", Static).render())
        assert title.startswith("second  WAITING for certification first  0/1"), title  # it read RUNNING above "nothing runs yet"
        assert "nothing runs yet; of 2 nodes targeted: the counters above + 2 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded; 2 other nodes not in it" in tally, tally
        assert all(app.screen.query_one(f"#count-{state}", Digits).value == "0" for state in ("passed", "failed", "suspect", "inconclusive", "running"))
        cells = {name: cell.state.value for name, cell in app.screen.query_one(RackMap)._cells.items()}
        assert cells == {"gpu-node-01": "untested", "gpu-node-02": "waiting", "gpu-node-03": "waiting", "gpu-node-04": "untested"}, cells


async def second_held() -> Any:
    """A simulator session where certification first runs on gpu-node-01 and -02, and second (gpu-node-02 and -03)
    waits for it: run until second's category is held."""
    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.views.snapshot import Snapshot
    from nvcre_tui.engine.views.waiting import categories_held

    session = await SimSession.open(load_scenario(CASE / "scenario.yaml"), None)
    assert session.engine is not None
    await session.store.create(CERTIFICATION, certification("first", ["gpu-node-01", "gpu-node-02"]))
    await session.store.create(CERTIFICATION, certification("second", ["gpu-node-02", "gpu-node-03"]))

    async def held() -> bool:
        return bool(categories_held(await Snapshot.read(session.store), "second"))

    assert await session.engine.run_until_settled(until=held, max_seconds=600)
    return session
