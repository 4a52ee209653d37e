"""A node the diagnosis cleared shows the tests that cleared it: a walkthrough found gpu-node-04 (failed beside the
faulty gpu-node-03 in screening and across the degraded clique-0 ↔ clique-1 link, passed a confirmation) said only
"cleared (healthy): this test's failure is not held against it", in the drill-down and on the node screen, while
faulty and intermittent verdicts listed the tests that decided them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.diagnosis import diagnose_state
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import FABRIC_AND_SLOW_GPU, open_drilldown, open_node_screen, reopen


def _tests_of(snapshot: Snapshot, node: str) -> dict[str, dict[str, Any]]:
    state = diagnose_state(snapshot.views["isolate"].categories[0])
    assert state is not None and node in state["healthyNodes"] and "gpu-node-03" in state["faultyNodes"]
    return {str(t["group"]): t for t in state["tests"] if node in t["nodes"]}


async def test_the_drill_down_says_what_cleared_a_member_of_a_failed_test(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        assert app.snapshot is not None
        tests = _tests_of(app.snapshot, "gpu-node-04")
        passed = [name for name, t in tests.items() if t["passed"]]
        screened = next(name for name, t in tests.items() if t["stage"] == "screening")
        linked = [name for name, t in tests.items() if t["stage"] == "link" and not t["passed"]]
        assert passed and not tests[screened]["passed"] and "gpu-node-03" in tests[screened]["nodes"] and linked, tests
        [member] = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root)
                    if (n.data or {}).get("kind") == "node" and (n.data or {})["node"] == "gpu-node-04" and (n.data or {})["group"]["name"] == screened]
        screen._show_detail(member)
        detail = " ".join(str(screen.query_one("#detail", Static).render()).split())  # its lines joined: it wraps
        # this test's failure is the faulty partner's; the pass that cleared it, with its value
        assert "✓ cleared (healthy): this test's failure is not held against it: explained by gpu-node-03 (faulty)" in detail, detail
        for name in passed:
            assert re.search(rf"✓ {name} \(\w+\) with gpu-node-\d+ {tests[name]['value']:.2f} GB/s", detail), detail
        # every failure of its record, each with what explained it: the link test by the named link fault
        for name in linked:
            assert re.search(rf"✗ {name} \(link\) with gpu-node-\d+ [\d.]+ GB/s: explained by the link fault clique-0 ↔ clique-1", detail), detail
        assert detail.index("Tests that cleared it") < detail.index("Job ")  # above the Job's own detail


async def test_the_node_screen_says_what_cleared_the_node_first(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        tests = _tests_of(app.snapshot, "gpu-node-04")
        [passed] = [name for name, t in tests.items() if t["passed"]]
        await open_node_screen(app, pilot, "gpu-node-04")  # its cursor on its first Job: the screening test
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        start = next(i for i, line in enumerate(lines) if "Diagnosis: ✓ cleared" in line)
        said = " ".join(line.strip() for line in lines[start : start + 2])
        assert (f"this Job's failure is not held against it: explained by gpu-node-03 (faulty); passed {passed} at "
                f"{tests[passed]['value']:.2f} GB/s") in said, "\n".join(lines)


async def test_the_verdicts_list_each_node_cleared_after_failing_tests_with_the_tests_that_cleared_it(finished_fabric_and_slow_gpu: Path) -> None:
    """A review watched a diagnosis with a flaky node and a degraded link: the suspects it cleared (2 of 7 tests failed)
    left the verdicts altogether, "31 nodes healthy" their only trace, so why they were cleared was found only by
    opening each round's groups. The verdicts list them after the convicted under one collapsed line (`✓ 9 nodes
    cleared after failing tests`), each `✓ NODE  cleared  x/y failed`, its detail the record and the tests that
    cleared it; `f` does not stop at them."""
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        assert app.snapshot is not None
        state = diagnose_state(app.snapshot.views["isolate"].categories[0])
        assert state is not None
        failing = {node: [t for t in state["tests"] if node in t["nodes"]] for node in state["healthyNodes"]}
        failing = {node: tests for node, tests in failing.items() if any(t["passed"] is False for t in tests)}
        assert "gpu-node-04" in failing, failing
        [verdicts] = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root) if str(n.label).startswith("verdicts")]
        [listed] = [n for n in verdicts.children if (n.data or {}).get("kind") == "cleared-list"]
        assert str(listed.label) == f"✓ {len(failing)} nodes cleared after failing tests" and not listed.is_expanded
        rows = {(n.data or {})["node"]: n for n in listed.children if (n.data or {}).get("kind") == "cleared"}
        assert sorted(rows) == sorted(failing), (sorted(rows), sorted(failing))
        for node, tests in failing.items():
            failed = sum(t["passed"] is False for t in tests)
            assert str(rows[node].label) == f"✓ {node}  cleared  {failed}/{len(tests)} failed"
            assert not (rows[node].data or {}).get("failed") and not (rows[node].data or {}).get("suspect")
        labels = [str(n.label) for n in verdicts.children]
        assert labels.index(str(listed.label)) > next(i for i, label in enumerate(labels) if label.startswith("✗ gpu-node-03  faulty"))
        screen._show_detail(rows["gpu-node-04"])
        detail = " ".join(str(screen.query_one("#detail", Static).render()).split())
        assert detail.startswith("Node gpu-node-04 Verdict healthy, failed "), detail  # the node named once
        assert "Tests that cleared it" in detail and "explained by gpu-node-03 (faulty)" in detail, detail
        assert "explained by the link fault clique-0 ↔ clique-1" in detail, detail
        # `l` there: the log of a test it failed
        assert (rows["gpu-node-04"].data or {}).get("job") is not None
