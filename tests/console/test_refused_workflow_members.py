"""A Workflow refused while it ran (its status or spec written by another hand) has its running Jobs stopped, each failed
WorkflowRefused, and records no group's end: the drill-down showed none of those groups (a finished Workflow's current
iteration was left out), the map drew their members running. Both read the groups failed as their Jobs, their members
untested (◦)."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.vocabulary import FAILED, FOREIGN_STATUS, STATE_GLYPHS, WORKFLOW_REFUSED, NodeState
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.store import JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import intra_all_reduce, open_drilldown, session_with


async def test_the_groups_of_a_workflow_refused_mid_run_show_failed_their_members_untested() -> None:
    session = await session_with(intra_all_reduce("refused"), settle=False)
    assert session.engine is not None

    async def running() -> bool:
        return any(not cond.is_terminal(job) for job in (await session.store.list(JOB, "default")).items)

    assert await session.engine.run_until_settled(until=running, max_seconds=3600)
    # What the engine writes refusing the Workflow (controllers/foreign.py), on a store that keeps no managedFields
    now = format_time(session.clock.now())
    [wf] = (await session.store.list(WORKFLOW, "default")).items
    stopped = [job for job in (await session.store.list(JOB, "default")).items if not cond.is_terminal(job)]
    for job in stopped:
        for run in (await session.store.list(WORKLOADRUN, "default")).items:
            if [ref.get("uid") for ref in run["metadata"].get("ownerReferences") or []] == [job["metadata"]["uid"]]:
                await session.runner.stop(run)
        await session.store.patch_status(JOB, job["metadata"]["name"], "default", {"completionTime": now, "conditions": cond.with_phase(
            job["status"].get("conditions"), FAILED, WORKFLOW_REFUSED, "stopped: its Workflow was refused; no node blamed", now)})
    await session.store.patch_status(WORKFLOW, wf["metadata"]["name"], "default", {"conditions": cond.with_phase(
        wf["status"].get("conditions"), FAILED, FOREIGN_STATUS, f"Workflow default/{wf['metadata']['name']}: by hand", now)})
    names = {job["metadata"]["name"] for job in stopped}
    assert names

    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "refused")
        lines = DrilldownScreen._walk(screen.query_one(Tree).root)
        groups = [str(n.label) for n in lines if (n.data or {}).get("kind") == "group" and ((n.data or {}).get("job") or {})["metadata"]["name"] in names]
        members = [str(n.label) for n in lines if (n.data or {}).get("kind") == "node" and ((n.data or {}).get("job") or {})["metadata"]["name"] in names]
        assert len(groups) == len(names) and all(label.startswith("✗ ") and label.endswith(WORKFLOW_REFUSED) for label in groups), groups
        assert members and all(label.startswith(f"{STATE_GLYPHS[NodeState.UNTESTED]} ") for label in members), members
