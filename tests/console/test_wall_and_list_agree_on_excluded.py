"""The wall and `nvcre certification list` count a node once, in its worst state, per certification. gpu-node-04 is
cordoned mid-run: its all-reduce fails by the cordon, then the loopback and DCGM exclude it. The wall counted it FAILED
(the tally "0 ⊘ excluded") while the list's EXCLUDED column counted it too (1), beside FAILED NODES 2 on both."""

from __future__ import annotations

import re

import yaml
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.listing import row
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION

from .harness import certification_body

SCENARIO = Scenario.model_validate(yaml.safe_load("""
name: cordoned-mid-run
seed: 71
nodes: [{count: 5, cliques: 1}]
faults:
  - {type: slow-gpu, node: gpu-node-02, gpu: 1, factor: 0.5}
  - {type: cordon, node: gpu-node-04, at: 4m}
  - {type: cordon, node: gpu-node-05, at: 0s}
"""))
CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: behave}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, repeatCount: 2, thresholds: {busBandwidthGBps: "value >= 400"}}
    - domain: communication
      variant: nccl-loopback
    - domain: diagnostics
      variant: dcgm-level4
"""


async def test_a_node_failed_then_excluded_counts_once_on_the_wall_and_in_the_list() -> None:
    session = await SimSession.open(SCENARIO, None, history=None)
    assert session.engine is not None
    await session.store.create(CERTIFICATION, certification_body(CERT))
    await session.engine.run_until_settled()
    cert = await session.store.get(CERTIFICATION, "behave", "default")
    listed = row(cert, session.clock.now())
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        failed = int(app.screen.query_one("#count-failed", Digits).value) + int(app.screen.query_one("#count-suspect", Digits).value)
    excluded = re.search(r"(\d+) ⊘ excluded", tally)
    assert excluded is not None, tally
    assert listed["result"] == "FAILED" and listed["failedNodes"] == failed == 2, (listed, failed)
    assert listed["excludedNodes"] == int(excluded.group(1)) == 1, (listed, tally)  # gpu-node-05; gpu-node-04 is a failed node
