"""The console reads the archive and NVSentinel through the session: the node screen's history, trend,
staleness and NVSentinel view, and the map's stale and NVSentinel marks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.widgets.rack_map import RackMap
from tests.history.helpers import certify, fleet
from tests.history.sentinel import NODE_CHANGES, REQUEST

UPGRADE = [{"node": "gpu-node-03", "at": "2h", "driverVersion": "575.57.08"}]


async def finished_session(tmp_path: Path) -> SimSession:
    """Two loopback certifications, then gpu-node-03's driver upgrade: gpu-node-03 is stale."""
    session = await SimSession.open(fleet(nodeChanges=[*NODE_CHANGES, *UPGRADE], validationRequests=[REQUEST]), None, history=tmp_path / "h.db")
    await certify(session, "week-1")
    await certify(session, "week-2")
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=3 * 3600)
    return session


def rendered(app: Any, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_the_node_screen_shows_history_trend_staleness_and_nvsentinel(tmp_path: Path) -> None:
    session = await finished_session(tmp_path)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        app.push_screen(NodeScreen("gpu-node-03"))
        await pilot.pause()
        history, side = rendered(app, "#history"), rendered(app, "#sentinel")
        assert "History (2 archived certifications)" in history
        assert "week-1" in history and "week-2" in history and "✓ passed" in history
        assert "nccl-loopback busBW" in history and any(block in history for block in "▁▂▃▄▅▆▇█")
        assert "↻ STALE: stale since week-2: driver 570.124.06 → 575.57.08" in side
        assert "NVSentinel: ⧗ validating" in side and "ValidationRequest vr-weekly: Failed" in side

        app.push_screen(NodeScreen("gpu-node-02"))
        await pilot.pause()
        history, side = rendered(app, "#history"), rendered(app, "#sentinel")
        assert "✗ failed" in history and "ThresholdViolation" in history
        assert "never passed" in side and "NVSentinel: ⚑ quarantined" in side
        assert "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed=true:NoSchedule" in side
        assert "nccl-loopback/ThresholdViolation" in side and "failed this node" in side
    await session.close()


async def test_the_map_marks_stale_nodes_and_overlays_nvsentinel(tmp_path: Path) -> None:
    session = await finished_session(tmp_path)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        rack_map = app.screen.query_one(RackMap)
        assert rack_map.marks == {"gpu-node-03": "↻"}
        assert "↻ stale" in rendered(app, "#marks")
        assert "↻" in "".join(rack_map.render_line(y).text for y in range(6))  # drawn, not only coloured
        await pilot.press("v")
        await pilot.pause()
        assert rack_map.marks == {"gpu-node-02": "⚑", "gpu-node-03": "⧗"}
        assert "⚑ tainted nvcre-cert-failed" in rendered(app, "#marks")
        await pilot.press("v")
        await pilot.pause()
        assert rack_map.marks == {"gpu-node-03": "↻"}
    await session.close()


async def test_the_overlay_says_which_validation_requests_it_could_not_read(tmp_path: Path) -> None:
    """A ValidationRequest from a cluster too malformed to show (no spec.nodes) is named in the legend, not dropped."""
    from nvcre_tui.engine.store.protocol import VALIDATION_REQUEST

    session = await finished_session(tmp_path)
    await session.database.create(VALIDATION_REQUEST, {"apiVersion": VALIDATION_REQUEST.api_version, "kind": VALIDATION_REQUEST.kind,
                                                        "metadata": {"name": "vr-broken"}, "spec": {"nodes": "gpu-node-01"}})
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(200, 44)) as pilot:
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        assert "1 ValidationRequest(s) unreadable, first ValidationRequest vr-broken: spec.nodes is not a list" in rendered(app, "#marks")
    await session.close()


def _archived(certification: str, size: int, value: float, state: str = "passed") -> dict[str, Any]:
    """One certification of a node as HistoryQuery.node gives it: nccl-all-reduce measured in a group of `size`."""
    job = {"job": f"{certification}-job", "groupSize": size, "measurements": {"busBandwidthGBps": value}}
    category = {"category": "communication/nccl-all-reduce", "state": state, "reason": "", "message": "", "busBW": value,
                "measurements": {"busBandwidthGBps": value}, "evidence": [], "jobs": [job]}
    return {"id": certification, "certification": certification, "namespace": "default", "certificationResult": "Passed",
            "completionTime": "2025-01-01T00:00:00Z", "baseline": None, "categories": [category], "result": state, "passed": state == "passed"}


async def test_the_node_screens_trend_keeps_group_sizes_apart_as_the_cli_does() -> None:
    """A review: `:node gpu-node-06` drew `nccl-all-reduce busBW █▁▁▃` (482 alone, then 369 in pairs) where `nvcre history
    node` draws a series per group size; a node alone and two nodes across the network are no trend of one another."""
    from nvcre_tui.engine.history import HistoryQuery
    from tests.console.harness import session_with

    class Archive(HistoryQuery):
        """These certifications of any node (the queries the screen makes, on no database)."""

        def __init__(self, history: list[dict[str, Any]]) -> None:
            super().__init__(Path("unused.db"))
            self.history = history

        def node(self, name: str) -> list[dict[str, Any]]:
            return self.history

        def change_key(self) -> object:
            return len(self.history)

    session = await session_with()
    session.history = Archive([_archived("alone", 1, 482.18), _archived("pairs-1", 2, 369.5), _archived("pairs-2", 2, 368.99)])
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(200, 44)) as pilot:
        await pilot.pause()
        app.push_screen(NodeScreen("gpu-node-06"))
        await pilot.pause()
        first = rendered(app, "#history").splitlines()[0]
        assert "nccl-all-reduce (1 node) busBW ▄ 482.18 GB/s" in first, first
        assert "nccl-all-reduce (2 nodes) busBW █▁ 368.99 GB/s" in first, first
        assert "nccl-all-reduce busBW" not in first, first
    await session.close()
