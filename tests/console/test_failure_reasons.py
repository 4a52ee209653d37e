"""A failed node's reason is the one of the category that convicted it, named by that category, and the same on the
wall, the map's explain line and the node screen as in the dashboard's failures pane (found by a
console review: a node the all-reduce diagnosis convicted was explained by the training category's group-wide
reason, and a node failed in two categories by the second one's value, with no category named)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.rack_map import RackMap

from .harness import reopen


def _expected(snapshot: Snapshot, cert: str, node: str) -> str:
    """What the failures pane says of the node: its first blaming category, reason and message."""
    row = next(r for r in failure_rows(snapshot, cert) if r.node == node)
    return f"{row.category}: {row.reason}: {row.message}"


async def test_a_diagnosed_node_reads_its_diagnosis_not_another_categorys_group_reason(finished_diagnose_and_train: Path) -> None:
    session = await reopen(finished_diagnose_and_train)
    snapshot = await Snapshot.read(session.store)
    for node in ("gpu-node-07", "gpu-node-12"):
        state, detail = node_states(snapshot)[node]
        assert state == "failed"
        assert detail.startswith(_expected(snapshot, "diagnose-and-train", node)), detail
        assert "avgTFLOPsPerGPU" not in detail.split(" (also ")[0]
    # A node only the training run marks says so, under its category.
    assert node_states(snapshot)["gpu-node-01"][1].startswith("training/nemotron5-8b: ThresholdViolation: ")


async def test_a_node_failed_in_two_categories_reads_the_first_one_everywhere(finished_intra_node: Path) -> None:
    """burn-in: gpu-node-07 fails all-reduce (first) and loopback; every screen says all-reduce's value."""
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert app.snapshot is not None
        expected = _expected(app.snapshot, "burn-in", "gpu-node-07")
        detail = node_states(app.snapshot)["gpu-node-07"][1]  # the informer's incremental model
        assert detail == expected + " (also communication/nccl-loopback)"
        assert node_states(app.snapshot, "burn-in")["gpu-node-07"][1] == detail  # the wall's filter
        assert app.session is not None
        assert node_states(await Snapshot.read(app.session.store))["gpu-node-07"][1] == detail  # computed in full
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        rack_map = app.screen.query_one(RackMap)
        rack_map.highlighted = "gpu-node-07"
        await pilot.pause()
        assert expected in str(app.screen.query_one("#explain", Static).render()).replace("\n", " ")
        await pilot.press("escape")
        app.push_screen(NodeScreen("gpu-node-07"))
        await pilot.pause()
        assert expected in str(app.screen.query_one("#summary", Static).render()).replace("\n", " ")


def test_a_category_run_twice_is_named_by_its_title_as_the_report_names_it() -> None:
    """Two dcgm-level4 categories, the second failing gpu-node-02 on skipped tests: the node's reason names
    `diagnostics/dcgm-level4 #2`, as every report and the history do, not the key both share."""
    from nvcre_tui.engine.report.nodestates import compute
    from nvcre_tui.engine.report.readmodel import CertificationView
    from tests.scenarios.harness import run_case

    case = run_case("dcgm-skipped-tests-marked")
    [cert] = case.objects["Certification"]
    view = CertificationView.of(cert, case.objects["Workflow"], case.objects.get("Job", []))
    state, detail = compute(view.categories, [{"metadata": {"name": "gpu-node-02"}}])["gpu-node-02"]
    assert state == "failed" and detail.startswith("diagnostics/dcgm-level4 #2: "), detail
