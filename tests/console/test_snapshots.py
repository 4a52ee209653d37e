"""Snapshots of every screen at 120x40 and the map at 200x50, on a finished deterministic session
(run once per test session and reopened: conftest's finished_* fixtures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from .harness import app_on, app_with


def _keys(*keys: str) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return run_before


def test_dashboard(snap_compare: Any, finished_intra_node_and_example: Path) -> None:
    assert snap_compare(app_on(finished_intra_node_and_example), terminal_size=(120, 40), run_before=_keys())


def test_drilldown_on_first_failed_node(snap_compare: Any, finished_intra_node: Path) -> None:
    assert snap_compare(app_on(finished_intra_node), terminal_size=(120, 40), run_before=_keys("enter"))


def test_topology_map(snap_compare: Any, finished_intra_node: Path) -> None:
    assert snap_compare(app_on(finished_intra_node), terminal_size=(120, 40), run_before=_keys("m"))


def test_topology_map_200x50(snap_compare: Any, finished_intra_node_and_example: Path) -> None:
    assert snap_compare(app_on(finished_intra_node_and_example), terminal_size=(200, 50), run_before=_keys("m"))


def test_node_screen(snap_compare: Any, finished_intra_node: Path) -> None:
    assert snap_compare(app_on(finished_intra_node), terminal_size=(120, 40), run_before=_keys("colon", *"node gpu-node-07", "enter"))


def test_wall(snap_compare: Any, finished_intra_node: Path) -> None:
    assert snap_compare(app_on(finished_intra_node, wall=True), terminal_size=(120, 40), run_before=_keys())


def test_help_read_only(snap_compare: Any, finished_intra_node: Path) -> None:
    assert snap_compare(app_on(finished_intra_node, read_only=True), terminal_size=(120, 40), run_before=_keys("question_mark"))


def test_catalog_screen(snap_compare: Any) -> None:
    assert snap_compare(app_with(), terminal_size=(120, 40), run_before=_keys("colon", *"catalog", "enter"))
