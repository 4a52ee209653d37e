"""Where the drill-down opens (enter on the dashboard): on the worst failure, as the failures pane lists them first."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import session_with

HUNG_AND_CRASHED = Scenario.model_validate({
    "name": "hung and crashed", "seed": 5,
    "nodes": [{"count": 4, "gpuProduct": "NVIDIA-H100-80GB-HBM3", "cliques": 2}],
    "faults": [{"type": "hang", "node": "gpu-node-01"}, {"type": "xid", "node": "gpu-node-04", "xid": 79}],
})

BY_CLIQUE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: crashy}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, timeoutPerJob: 2m, thresholds: {busBandwidthGBps: "value >= 300"}}
"""


async def test_enter_opens_on_the_node_blamed_by_name_before_a_group_blamed_whole() -> None:
    """An on-call walkthrough: group-0 hung (its members `! Timeout`, blamed only with their whole group), group-1 crashed
    on gpu-node-04's Xid (`✗`, blamed by name, the first row of the failures pane). `enter` opened the drill-down on
    gpu-node-01's suspect line, `f` walking the four suspects before the node to drain. It opens on gpu-node-04."""
    app = NvcreApp(session=await session_with(BY_CLIQUE, scenario=HUNG_AND_CRASHED), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        labels = [str(node.label) for node in DrilldownScreen._walk(tree.root)]
        assert "! gpu-node-01  Timeout" in labels and "✗ gpu-node-04  WorkloadFailed" in labels, labels
        assert tree.cursor_node is not None and str(tree.cursor_node.label) == "✗ gpu-node-04  WorkloadFailed"
