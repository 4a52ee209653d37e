"""A category whose Jobs wait for pods that never come (an API server with no Trainer, JobSet or Job controller: the Job's
InProgress condition has reason WorkloadPending and says why) said "running" on the dashboard and the map, and "its pods
have not started" in the log pane: the reason was two levels down, in the Job's detail. Each says why now, from the
read model (the Job's condition, its run's pendingSince), and never that anything runs: the map shows such nodes
◷ waiting."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from textual.widgets import DataTable, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.session import SIM_START, SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.report.readmodel import pods_pending
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB
from nvcre_tui.engine.views.nodes import node_history, node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.waiting import pods_waiting
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.log_view import LogView
from nvcre_tui.widgets.node_state import NodeState
from nvcre_tui.widgets.rack_map import RackMap

from .harness import certification_body, intra_all_reduce

NAME = "waiting"
WORKFLOW = f"{NAME}-communication-nccl-all-reduce"
FIRST_JOB = f"{WORKFLOW}-group-0-iter-1"  # group-0 is gpu-node-01
# What the engine writes on a cluster with no Trainer or JobSet controller (controllers/job.py, runners/kubernetes/pods.py).
WHY = "no pods yet (0/5): waiting for Kubeflow Trainer's controller and JobSet's to create them; it fails after 5m00s of this"
AT_1S = WHY.replace("after 5m00s", "in 4m59s, after 5m00s")  # as said 1s into the wait: the time left, then the bound


def in_progress(reason: str, message: str) -> list[dict[str, Any]]:
    at = format_time(SIM_START)
    return [{"type": "Failed", "status": "False", "reason": reason, "message": "", "lastTransitionTime": at},
            {"type": "InProgress", "status": "True", "reason": reason, "message": message, "lastTransitionTime": at},
            {"type": "Succeeded", "status": "False", "reason": reason, "message": "", "lastTransitionTime": at}]


async def waiting_session(running: tuple[str, ...] = ()) -> SimSession:
    """The default fleet with one all-reduce certification one second in (its 32 runs scheduling), each Job then saying
    what it says on a cluster without the Trainer's controllers (WHY); those of `running` run."""
    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, certification_body(intra_all_reduce(NAME)))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=1)
    for job in (await session.store.list(JOB, "default")).items:
        name = job["metadata"]["name"]
        conditions = in_progress("WorkloadRunning", "running on 1 node(s)") if name in running else in_progress("WorkloadPending", WHY)
        await session.store.patch_status(JOB, name, "default", {"conditions": conditions})
    return session


async def test_the_read_model_says_which_jobs_wait_for_pods_why_and_since_when() -> None:
    session = await waiting_session(running=(f"{WORKFLOW}-group-1-iter-1", f"{WORKFLOW}-group-2-iter-1"))
    try:
        snapshot = await Snapshot.read(session.store, "default")
        [category] = snapshot.views[NAME].categories
        waiting = pods_waiting(snapshot, category)
        assert waiting is not None and (waiting.waiting, waiting.in_progress, waiting.job) == (30, 32, FIRST_JOB)
        assert waiting.why == WHY and not waiting.nothing_runs
        assert waiting.said() == f"30 of the 32 groups in progress waiting for pods: {WHY}"
        # the time left in place of the whole bound once the wait has gone on (it said "after 5m00s" at 4m30s too)
        rest = WHY.removesuffix("; it fails after 5m00s of this")
        assert waiting.said(SIM_START + timedelta(seconds=80)) == (f"30 of the 32 groups in progress waiting 1m20s for pods: {rest}; "
                                                                   "it fails in 3m40s, after 5m00s of this")
        assert waiting.said(SIM_START + timedelta(seconds=270)).endswith("waiting 4m30s for pods: " + rest + "; it fails in 30s, after 5m00s of this")
        assert waiting.said(SIM_START - timedelta(seconds=5)).startswith("30 of the 32 groups in progress waiting 0s for pods")  # a clock behind
        running = next(job for job in snapshot.jobs if job["metadata"]["name"] == f"{WORKFLOW}-group-1-iter-1")
        assert pods_pending(running) is None
        # The map's states: waiting, not running, where a group's pods do not run yet; its line says why.
        states = node_states(snapshot, NAME)
        assert states["gpu-node-01"] == ("waiting", f"communication/nccl-all-reduce: waiting for pods: {WHY}")
        assert states["gpu-node-02"][0] == "running"  # group-1: its pods run
        assert node_states(snapshot, "another")["gpu-node-01"] == ("untested", "")
        # the node screen's row for the Job says it too (it said running under a header saying waiting)
        assert [row["state"] for row in node_history(snapshot, "gpu-node-01")] == ["waiting"]
        assert [row["state"] for row in node_history(snapshot, "gpu-node-02")] == ["running"]
        finished = copy.deepcopy(snapshot)  # once every Job runs, nothing waits
        for job in finished.jobs:
            job["status"]["conditions"] = in_progress("WorkloadRunning", "running on 1 node(s)")
        assert pods_waiting(finished, finished.views[NAME].categories[0]) is None
    finally:
        await session.close()


def text_of(widget: Static) -> str:
    return str(widget.render())


async def test_the_dashboard_drilldown_map_and_log_pane_say_why_the_pods_do_not_run() -> None:
    app = NvcreApp(session=await waiting_session(), live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        # The dashboard: the row says the category waits, and the line under the table why and for how long.
        row = [str(cell) for cell in app.screen.query_one("#certs", DataTable).get_row_at(0)]
        assert row[0] == NAME and row[-1] == "· nccl-all-reduce"  # not shown as running, whole on 80 columns
        line = text_of(app.screen.query_one("#waiting", Static))
        assert line == f"· communication/nccl-all-reduce: waiting 1s for pods: {AT_1S}", line
        # The drill-down: the category's line and its groups' (not shown running), and the category's detail.
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        [category] = tree.root.children
        assert str(category.label) == f"· communication/nccl-all-reduce  waiting for pods: {WHY}"  # not ⋯: nothing of it runs
        groups = [str(group.label) for group in category.children]
        assert groups[0] == f"· group-0 (1 node)  waiting for pods: {WHY}" and all(g.startswith("· ") for g in groups)
        tree.move_cursor(category)
        await pilot.pause()
        detail = text_of(app.screen.query_one("#detail", Static))
        assert f"Waiting           waiting 1s for pods: {AT_1S}" in detail, detail
        # The log pane: why its pods have not started, on rows of their own.
        await app.push_screen(LogsScreen(FIRST_JOB))
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = app.screen.query_one(LogView).log_lines.placeholder
        assert said.startswith("No output yet: the run is Scheduling; its pods have not started.\nWhy: no pods yet (0/5)"), said
        assert " ".join(said.splitlines()[1:-1]) == f"Why: {AT_1S}" and said.endswith("Its output will appear here as it comes.")
        # The map: the node's line under it.
        await app.push_screen(TopologyScreen())
        await pilot.pause()
        app.screen.query_one(RackMap).highlighted = "gpu-node-01"
        await pilot.pause()
        explained = text_of(app.screen.query_one("#explain", Static)).replace("\n", " ")  # wrapped at words to its lines
        assert explained == f"gpu-node-01: ◷ waiting — communication/nccl-all-reduce: waiting for pods: {WHY}", explained
        assert (cell := app.screen.query_one(RackMap).cell("gpu-node-01")) is not None and cell.state == NodeState.WAITING
