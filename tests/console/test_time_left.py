"""A running certification says what it has left where that can be said honestly (views.eta): on the dashboard's Left
column and the wall's title. It showed its runtime alone: a five-minute burn-in read as a five-hour one."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.views.eta import TimeLeft, time_left
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.wall import WallScreen

from .harness import DIAGNOSE, session_with

# Four waves of eight loopback runs, one after another on the same fleet.
LOOPBACK = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: loop}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-loopback
      options: {maxConcurrent: 8, thresholds: {busBandwidthGBps: "value >= 1"}}
"""
STEP = 20.0  # simulated seconds between looks


async def _left(session: SimSession, name: str) -> TimeLeft | None:
    return time_left(await Snapshot.read(session.store), name, session.clock.now())


async def _until(session: SimSession, name: str, estimate: bool) -> tuple[TimeLeft | None, float]:
    """Run the engine a step at a time until what the certification has left is an estimate (`estimate`) or it ends;
    what it said then, and the simulated seconds it ran until then."""
    assert session.engine is not None
    start = session.clock.now()
    while (left := await _left(session, name)) is not None and not (estimate and left.seconds is not None and not left.bound):
        await session.engine.run_until_settled(max_seconds=STEP)
    return left, (session.clock.now() - start).total_seconds()


async def test_the_time_left_is_bounded_before_runs_finish_then_estimated_from_them() -> None:
    session = await session_with(LOOPBACK, settle=False)
    try:
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=STEP)
        bound = await _left(session, "loop")
        assert bound is not None and bound.bound and bound.seconds is not None and bound.short.startswith("≤"), bound
        estimate, _ = await _until(session, "loop", estimate=True)  # the first wave done: its runs time the others
        assert estimate is not None and estimate.seconds is not None and estimate.short.startswith("~"), estimate
        app = NvcreApp(session=session, live=False)
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            table = app.screen.query_one("#certs", DataTable)
            row = [str(cell) for cell in table.get_row("loop")]
            assert row[[str(c.label) for c in table.ordered_columns].index("Left")] == estimate.short, row
            app.run_command("wall")
            await pilot.pause()
            assert isinstance(app.screen, WallScreen)
            assert f"  {estimate.said}" in str(app.screen.query_one("#title", Static).render())
        _, ran = await _until(session, "loop", estimate=False)
        assert bound.seconds >= ran  # a bound holds
        assert abs(estimate.seconds - ran) <= 0.25 * ran + STEP, (estimate, ran)  # an estimate comes near
    finally:
        await session.close()


async def test_a_diagnosis_has_no_time_left_to_say() -> None:
    session = await session_with(DIAGNOSE, settle=False)
    try:
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=60)
        left = await _left(session, "isolate")
        assert left == TimeLeft(None) and left.short == "unknown" and left.said == "time left unknown"
    finally:
        await session.close()


async def test_a_workflow_whose_numbers_cannot_be_read_has_unknown_time_left() -> None:
    """A Workflow another hand wrote (a timeout that is no duration) never stops the dashboard: its time left is unknown."""
    import copy

    session = await session_with(LOOPBACK, settle=False)
    try:
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=STEP)
        read = await Snapshot.read(session.store)
        [workflow] = copy.deepcopy(read.workflows)
        workflow["spec"]["jobTemplate"]["spec"]["timeout"] = "a while"
        damaged = Snapshot(nodes=read.nodes, certifications=read.certifications, workflows=[workflow], jobs=read.jobs, runs=read.runs)
        assert time_left(damaged, "loop", session.clock.now()) == TimeLeft(None)
    finally:
        await session.close()


async def test_a_bound_said_once_a_run_is_overdue_bounds_the_runs_still_to_start_too() -> None:
    """Once one run ran past what the others took (a slow node's), the time left is said as a bound ('at most'), yet the
    runs still waiting to start were counted at the finished runs' median, not their timeout: with the overdue run near
    its timeout, 'at most' said little more than one median where the waves still to start may each take a timeout."""
    import copy
    from datetime import timedelta

    from nvcre_tui.engine.api.bodies import job_template_spec
    from nvcre_tui.engine.clock import format_time
    from nvcre_tui.engine.units import parse_duration

    session = await session_with(LOOPBACK, settle=False)
    try:
        estimate, _ = await _until(session, "loop", estimate=True)  # a wave finished, one runs, two wait to start
        assert estimate is not None and estimate.seconds is not None and not estimate.bound, estimate
        read = copy.deepcopy(await Snapshot.read(session.store))
        [workflow] = read.workflows
        timeout = parse_duration(str(job_template_spec(workflow).get("timeout") or "24h"))
        groups = workflow["status"]["orchestration"]["groups"]
        assert any(g.get("phase") == "Pending" for g in groups), groups
        running = next(g["jobRef"] for g in groups if g.get("phase") == "Running")
        job = next(j for j in read.jobs if j["metadata"]["name"] == running)
        job["status"]["workloadStartTime"] = format_time(session.clock.now() - timedelta(seconds=timeout - 1))  # overdue: 1 s to its timeout
        left = time_left(Snapshot(nodes=read.nodes, certifications=read.certifications, workflows=read.workflows, jobs=read.jobs, runs=read.runs),
                         "loop", session.clock.now())
        assert left is not None and left.bound and left.seconds is not None, left
        assert left.seconds >= timeout, (left, timeout)  # the runs still to start may each run to their timeout
    finally:
        await session.close()


async def test_a_run_stamped_on_a_clock_ahead_has_run_as_long_as_the_drill_down_says() -> None:
    """A run a --sim-runner engine stamped on a clock ahead of the reader's has run the API server's time since its Job
    was made (report.runtime: the drill-down's and the logs pane's Runtime); the time left counted the reader's clock
    from the Job's creation instead, so a run 30 s old read overdue (an hour and a half) and the Left column a bound."""
    import copy
    from datetime import timedelta

    from nvcre_tui.engine.clock import format_time
    from nvcre_tui.engine.report.runtime import run_seconds
    from nvcre_tui.engine.views.certifications import certification_row

    session = await session_with(LOOPBACK, settle=False)
    try:
        estimate, _ = await _until(session, "loop", estimate=True)
        assert estimate is not None and not estimate.bound, estimate
        read = copy.deepcopy(await Snapshot.read(session.store))
        now = session.clock.now()
        server_now = now - timedelta(hours=1)  # the API server's clock, behind the reader's simulated one
        [workflow] = read.workflows
        running = [g["jobRef"] for g in workflow["status"]["orchestration"]["groups"] if g.get("phase") == "Running"]
        for job in read.jobs:
            if job["metadata"]["name"] in running:
                job["metadata"]["creationTimestamp"] = format_time(server_now - timedelta(seconds=30))
                job["status"]["workloadStartTime"] = format_time(now + timedelta(minutes=10))  # stamped ahead of the reader
                assert run_seconds(job, now, server_now) == 30.0  # as the drill-down says it
        snapshot = Snapshot(nodes=read.nodes, certifications=read.certifications, workflows=read.workflows, jobs=read.jobs, runs=read.runs)
        [cert] = snapshot.certifications
        said = certification_row(snapshot, cert, now, stamped_now=server_now).left
        assert said.startswith("~"), said  # an estimate: the run is 30 s old, not overdue
        left = time_left(snapshot, "loop", now, server_now)  # as the wall says it
        assert left is not None and left.seconds is not None and not left.bound and left.short == said, left
    finally:
        await session.close()


# Four cliques' intra-rack runs one after another, narrowed down by a diagnosis once one failed (gpu-node-07 misses 400).
ON_FAILURE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: narrow}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, onFailure: diagnose, maxConcurrent: 1, thresholds: {busBandwidthGBps: "value >= 400"}}
"""


async def test_a_category_a_diagnosis_will_follow_has_unknown_time_left() -> None:
    """onFailure: diagnose narrows a failed group down once its iterations end, for as many rounds as its results take:
    once a group failed, the groups left were said to be all it had left ('~12m' or 'at most ...'), a diagnosis after them."""
    session = await session_with(ON_FAILURE, settle=False)
    try:
        assert session.engine is not None
        while True:
            await session.engine.run_until_settled(max_seconds=STEP)
            [workflow] = (await Snapshot.read(session.store)).workflows
            groups = workflow.get("status", {}).get("orchestration", {}).get("groups") or []
            if any(g.get("phase") == "Failed" for g in groups) or workflow.get("status", {}).get("orchestration", {}).get("diagnose"):
                break
        assert any(g.get("phase") == "Pending" for g in groups), groups  # the premise: groups still to run, then the diagnosis
        assert await _left(session, "narrow") == TimeLeft(None)
    finally:
        await session.close()
