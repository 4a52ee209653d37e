"""A node a running diagnosis has convicted counts as failed everywhere at once: the map and the wall showed it
untested (◦), `certification list` and the report's summary counted no failed node, while the failures pane listed
it. Its Workflow lists its verdicts only when it ends; the read model and the certification's summary read them
from the diagnosis meanwhile."""

from __future__ import annotations

from nvcre_tui.engine.api.bodies import certification_status, orchestration_of
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import fleet_summary

from .harness import DIAGNOSE, FLAKY_AND_FABRIC, session_with


# Four tests a wave: gpu-node-07 is convicted in round 4, gpu-node-12 in round 5, the last.
WAVES_OF_FOUR = DIAGNOSE.replace("minGroupSize: 2,", "minGroupSize: 2, maxConcurrent: 4,")


async def test_a_convicted_node_is_failed_on_the_map_in_the_count_and_in_the_report_before_the_diagnosis_ends() -> None:
    session = await session_with(WAVES_OF_FOUR, settle=False)
    assert session.engine is not None

    async def convicted_mid_run() -> bool:
        (wf,) = (await session.store.list(WORKFLOW, "default")).items
        return bool((orchestration_of(wf).get("diagnose") or {}).get("faultyNodes")) and not cond.is_terminal(wf)

    assert await session.engine.run_until_settled(until=convicted_mid_run, max_seconds=6 * 3600)
    (wf,) = (await session.store.list(WORKFLOW, "default")).items
    faulty = set(orchestration_of(wf)["diagnose"]["faultyNodes"])
    await session.engine.run_until_settled(max_seconds=0)  # the certification's summary catches up
    snapshot = await Snapshot.read(session.store)
    states = node_states(snapshot, "isolate")
    assert {node for node in faulty if states[node][0] == "failed"} == faulty
    assert all("diagnose: faulty, failed " in states[node][1] for node in faulty), {n: states[n] for n in faulty}  # with its tests
    assert fleet_summary(snapshot, states, "isolate")["failed"] >= len(faulty)
    assert faulty <= {row.node for row in failure_rows(snapshot, "isolate") if row.state == "failed"}
    cert = await session.store.get(CERTIFICATION, "isolate", "default")
    (wf,) = (await session.store.list(WORKFLOW, "default")).items
    assert not cond.is_terminal(cert) and certification_status(cert)["summary"]["failedNodes"] >= len(faulty)
    report = build_report(cert, [wf], (await session.store.list(JOB, "default")).items)
    assert faulty <= {node["name"] for node in report["failedNodeDetails"]}

    # A damaged history (a record without its group's name; not a list) convicts nobody here and fails nothing: the
    # certification's reconcile reads these verdicts, and failed with ReconcileError while the Workflow ran on.
    from copy import deepcopy

    from nvcre_tui.engine.controllers.iterations import blamed_nodes

    for history in ([{"iteration": 1, "groups": [{"phase": "Failed"}]}], "not a list"):
        damaged = deepcopy(wf)
        damaged["status"]["orchestration"]["iterationHistory"] = history
        assert blamed_nodes(damaged, (await session.store.list(JOB, "default")).items) == []


async def test_a_node_convicted_mid_run_says_the_tests_that_convicted_it_on_the_map() -> None:
    """Watching a diagnosis with a flaky node at 80x24, the map's line for it read "diagnose: intermittent (fails some
    tests, passes others)" until the diagnosis ended, while its suspects' lines listed the tests they failed and the
    drill-down said "failed 3 of 5 tests". The convicted say theirs too, as they do once it ends."""
    session = await session_with(DIAGNOSE, settle=False, scenario=FLAKY_AND_FABRIC)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=300)
    snapshot = await Snapshot.read(session.store)
    (wf,) = (await session.store.list(WORKFLOW, "default")).items
    assert not cond.is_terminal(wf) and orchestration_of(wf)["diagnose"]["intermittentNodes"] == ["gpu-node-11"]
    state, said = node_states(snapshot, "isolate")["gpu-node-11"]
    assert state == "failed" and "diagnose: intermittent, failed 3 of 5 tests (r0-screen-5 WorkloadFailed, " in said, said
