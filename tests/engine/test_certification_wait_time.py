"""The time a certification waited for nodes another certification held is said apart from its runtime: the report
(JSON, text, HTML) and `certification list`."""

from __future__ import annotations

from datetime import timedelta

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, WORKFLOW, MemoryStore
from nvcre_tui.engine.units import format_duration
from tests.engine.test_certifications_share_nodes import CASE, certification
from tests.scenarios.harness import NAMESPACE, catalog


async def test_the_time_a_certification_waited_for_nodes_is_said_apart_from_its_runtime() -> None:
    """`second` waited 6m18s for `first`, then ran 6m18s: its report's runtime said 12m36s (the wait counted as running),
    in JSON, and the text, HTML and `list` said nothing of the wait."""
    from nvcre_tui.cli.listing import row
    from nvcre_tui.engine.report.html import render_html
    from nvcre_tui.engine.report.model import build_report
    from nvcre_tui.engine.report.text import render_text
    from nvcre_tui.engine.store import JOB

    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    await store.create(CERTIFICATION, certification("first", ["gpu-node-01", "gpu-node-02"]))
    await store.create(CERTIFICATION, certification("second", ["gpu-node-02", "gpu-node-03"]))

    async def a_minute() -> bool:
        return clock.now() - SIM_START >= timedelta(minutes=1)

    assert await engine.run_until_settled(until=a_minute, max_seconds=120)
    waiting = row(await store.get(CERTIFICATION, "second", NAMESPACE), clock.now(), [])  # so far: it waits
    assert waiting["runtimeSeconds"] == 0 and waiting["waitedSeconds"] == (clock.now() - SIM_START).total_seconds(), waiting

    async def done() -> bool:
        return all([cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE)) for name in ("first", "second")])

    assert await engine.run_until_settled(until=done, max_seconds=4 * 3600)
    workflows = (await store.list(WORKFLOW, NAMESPACE)).items
    jobs = (await store.list(JOB, NAMESPACE)).items
    timings = {}
    for name in ("first", "second"):
        cert = await store.get(CERTIFICATION, name, NAMESPACE)
        mine = [wf for wf in workflows if wf["metadata"]["ownerReferences"][0]["name"] == name]
        report = build_report(cert, mine, jobs)
        listed = row(cert, clock.now(), mine)
        assert (listed["runtimeSeconds"], listed["waitedSeconds"]) == (report["runtimeSeconds"], report["waitedSeconds"])
        timings[name] = (report["runtimeSeconds"], report["waitedSeconds"], render_text(report), render_html(report))
    ran, waited, text, html = timings["first"]
    assert waited == 0 and ran > 0 and "Waited" not in text and f"Runtime:        {format_duration(ran)}" in text, text
    ran_second, waited_second, text, html = timings["second"]
    assert ran_second == ran and waited_second == ran, (ran_second, waited_second)  # it waited as long as first ran
    assert f"Runtime:        {format_duration(ran)}\n" in text and f"Waited:         {format_duration(ran)} for nodes" in text, text
    assert "<th>Waited</th>" in html or ">Waited<" in html
    from nvcre_tui.engine.views.certifications import certification_rows
    from nvcre_tui.engine.views.snapshot import Snapshot

    shown = {r.name: r.runtime for r in certification_rows(await Snapshot.read(store), clock.now())}  # the dashboard, as the report
    assert shown == {"first": format_duration(ran), "second": f"{format_duration(ran)} (+{format_duration(ran)} waited)"}, shown


def test_a_second_between_whole_second_times_is_no_wait_for_nodes() -> None:
    """A certification whose only category failed at once (a GB200 run with no ComputeDomain served: WorkloadNotCreated)
    started at :39 and its Workflow at :40, started and completed in the same second: its report said "Waited: 1s for
    nodes, nothing of it running (another certification held them, or none matched its target)", on a cluster where
    nothing else ran. The API's times are whole seconds: that second is their rounding, counted as its runtime (the text and HTML say Waited only above 0, `list` likewise)."""
    from nvcre_tui.engine.report.model import waited_and_ran
    workflow = {"status": {"startTime": "2026-12-05T23:20:40Z", "completionTime": "2026-12-05T23:20:40Z"}}
    assert waited_and_ran("2026-12-05T23:20:39Z", "2026-12-05T23:20:40Z", [workflow]) == (0.0, 1.0)
    # two seconds apart is a wait the times can tell
    assert waited_and_ran("2026-12-05T23:20:38Z", "2026-12-05T23:20:40Z", [workflow]) == (2.0, 0.0)
