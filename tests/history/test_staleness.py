"""Staleness: a node whose software baseline changed since its last pass needs re-certification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.history.baseline import baseline_of, changes
from nvcre_tui.engine.history.queries import HistoryQuery
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import NODE
from tests.history.helpers import certify, fleet

UPGRADE = {"nodeChanges": [{"node": "gpu-node-03", "at": "2h", "driverVersion": "575.57.08", "kernelVersion": "6.8.0-1030-aws"}]}


async def test_a_driver_upgrade_after_a_pass_makes_the_node_stale_until_it_passes_again(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    session = await SimSession.open(fleet(**UPGRADE), None, history=tmp_path / "history.db")
    try:
        await certify(session, "before")
        query = session.history
        assert query is not None
        live = {n["metadata"]["name"]: baseline_of(n) for n in session.cache.list(NODE)}
        assert query.staleness("gpu-node-03", live["gpu-node-03"]).status == "current"

        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=3 * 3600)  # the fleet upgrades gpu-node-03 at 2h
        live = {n["metadata"]["name"]: baseline_of(n) for n in session.cache.list(NODE)}
        assert live["gpu-node-03"]["driver"] == "575.57.08"
        stale = query.staleness("gpu-node-03", live["gpu-node-03"])
        assert stale.stale and stale.last_pass == "before"
        assert stale.changes == {"driver": ("570.124.06", "575.57.08"), "kernel": ("6.8.0-1021-aws", "6.8.0-1030-aws")}
        assert "driver 570.124.06 → 575.57.08" in stale.detail
        assert set(query.stale_nodes(live)) == {"gpu-node-03"}
        # Read in a few queries whatever the fleet's size: the map asks for every node, and read node by node (four
        # queries each) a fleet of 1024 held the console's screen for 12 s.
        queries: list[str] = []
        rows = HistoryQuery._rows

        def counted(self: HistoryQuery, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
            queries.append(sql)
            return rows(self, sql, parameters)

        monkeypatch.setattr(HistoryQuery, "_rows", counted)
        assert set(query.stale_nodes(live)) == {"gpu-node-03"} and len(queries) <= 6  # 4 nodes: 18 node by node
        queries.clear()
        assert [n["node"] for n in query.nodes()] == sorted(live) and len(queries) <= 6  # `history nodes` likewise
        monkeypatch.undo()
        # Never passed is not stale: gpu-node-02 (slow GPU) has nothing to go stale from.
        assert query.staleness("gpu-node-02", live["gpu-node-02"]).status == "never-passed"

        await certify(session, "after")
        assert query.staleness("gpu-node-03", live["gpu-node-03"]).status == "current"
        # Without the live Node, the latest archived baseline stands in for it.
        assert query.staleness("gpu-node-03").status == "current"
        history = query.node("gpu-node-03")
        assert [e["baseline"]["driver"] for e in history] == ["570.124.06", "575.57.08"]
        # Nodes given (`history nodes --nodes F`) that hold no gpu-node-03: it was said `current` from the archive
        others = {name: baseline for name, baseline in live.items() if name != "gpu-node-03"}
        [row] = [n for n in query.nodes(current=others) if n["node"] == "gpu-node-03"]
        assert row["staleness"].status == "absent" and "not among the current Nodes given" in row["staleness"].detail
        assert "gpu-node-03" not in query.stale_nodes(others)
    finally:
        await session.close()


async def test_a_pass_then_a_failure_on_a_new_driver_is_stale_from_the_archive_alone(tmp_path: Path) -> None:
    session = await SimSession.open(fleet(**UPGRADE), None, history=tmp_path / "history.db")
    try:
        await certify(session, "pass")
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=3 * 3600)
        await certify(session, "fail-all", threshold="value >= 100000")  # nobody passes this
        query = session.history
        assert query is not None
        assert query.node("gpu-node-03")[-1]["result"] == "failed"
        stale = query.staleness("gpu-node-03")  # latest archived baseline (575) vs the last pass (570)
        assert stale.stale and stale.last_pass == "pass" and "driver" in stale.changes
        assert query.staleness("gpu-node-01").status == "current"
    finally:
        await session.close()


def test_baseline_reads_current_and_deprecated_gfd_labels() -> None:
    current = {"metadata": {"labels": {"nvidia.com/cuda.driver-version.major": "550", "nvidia.com/cuda.driver-version.minor": "107",
                                       "nvidia.com/cuda.driver-version.revision": "02", "nvidia.com/cuda.runtime-version.full": "12.5"}},
               "status": {"nodeInfo": {"kubeletVersion": "v1.30.1"}}}
    assert baseline_of(current) == {"driver": "550.107.02", "cuda": "12.5", "kubelet": "v1.30.1"}
    deprecated = {"metadata": {"labels": {"nvidia.com/cuda.driver.major": "535", "nvidia.com/cuda.driver.minor": "104",
                                          "nvidia.com/cuda.driver.rev": "05", "nvidia.com/cuda.runtime.major": "12",
                                          "nvidia.com/cuda.runtime.minor": "2", "nvidia.com/mig.strategy": "mixed"}}}
    assert baseline_of(deprecated) == {"driver": "535.104.05", "cuda": "12.2", "migStrategy": "mixed"}
    assert baseline_of({"metadata": {}}) == {}
    assert changes({"driver": "1"}, {"driver": "2", "kernel": "k"}) == {"driver": ("1", "2"), "kernel": (None, "k")}


def test_a_node_change_naming_no_node_is_one_line_of_bad_input(tmp_path: Path) -> None:
    import pytest
    import yaml

    from nvcre_tui.engine.errors import InputError
    from nvcre_tui.engine.sim.scenario import load_scenario

    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"nodes": [{"count": 2}], "nodeChanges": [{"node": "gpu-node-09", "driverVersion": "575.57.08"}]}))
    with pytest.raises(InputError) as error:
        load_scenario(path)
    assert error.value.messages == [f"{path}: nodeChanges[0].node: no node named 'gpu-node-09'"]


def test_a_damaged_node_states_no_baseline_and_breaks_no_archive() -> None:
    """Labels or nodeInfo that are not mappings (an old JSON state edited by hand) failed the archive as a bug."""
    from nvcre_tui.engine.api.bodies import annotations_of, labels_of
    from nvcre_tui.engine.history.baseline import baseline_of

    for damaged in (-1, "x", [1]):
        node = {"metadata": {"name": "n", "labels": damaged, "annotations": damaged}, "status": {"nodeInfo": damaged}}
        assert labels_of(node) == {} and annotations_of(node) == {} and baseline_of(node) == {}
    assert baseline_of({"metadata": {"name": "n"}, "status": {"nodeInfo": {"kernelVersion": "6.8"}}}) == {"kernel": "6.8"}
