"""Deterministic console sessions: the default simulated fleet on a ManualClock, certifications
submitted and run to a known point before the app starts (no live engine, no wall clock)."""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION

INTRA_NODE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: burn-in}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, maxConcurrent: 8, thresholds: {busBandwidthGBps: "value >= 400"}}
    - domain: communication
      variant: nccl-loopback
      options: {maxConcurrent: 8, thresholds: {busBandwidthGBps: "value >= 300"}}
"""


EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "certification.yaml").read_text()


def intra_all_reduce(name: str) -> str:
    """One category: every node alone on all-reduce, against 400 GB/s (gpu-node-07 misses it)."""
    return f"""apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.present: "true"}}}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {{testScale: intra-node}}
  options: {{thresholds: {{busBandwidthGBps: "value >= 400"}}}}
"""


# 32 nodes in 4 cliques, every node healthy: a degraded link between clique-0 and clique-1, and clique-3's uplink.
LINK_FAULTS = Scenario.model_validate({
    "name": "link-faults", "seed": 7, "nodes": [{"count": 32, "nameDigits": 2, "cliques": 4}],
    "faults": [{"type": "degraded-fabric", "cliques": ["clique-0", "clique-1"], "factor": 0.5},
               {"type": "degraded-fabric", "cliques": ["clique-3"], "factor": 0.5}],
})

# 32 H100 nodes in 4 cliques (a walkthrough's): the link between clique-0 and clique-1 degraded and gpu-node-03's GPU 2
# slow. DIAGNOSE convicts gpu-node-03, names the link, and clears gpu-node-04, which failed beside gpu-node-03 in
# screening and across the link in a link test, and passed a confirmation.
FABRIC_AND_SLOW_GPU = Scenario.model_validate({
    "name": "fabric-and-slow-gpu", "seed": 14, "nodes": [{"count": 32, "gpusPerNode": 8, "cliques": 4}],
    "faults": [{"type": "degraded-fabric", "cliques": ["clique-0", "clique-1"], "factor": 0.5},
               {"type": "slow-gpu", "node": "gpu-node-03", "gpu": 2, "factor": 0.5}],
})

# 32 H100 nodes in 4 cliques: gpu-node-11 crashes half the tests it runs in, the link between clique-0 and clique-1 is
# degraded. DIAGNOSE names the link in round 2 and convicts gpu-node-11 intermittent (3 of 5 tests failed) by round
# 4, while gpu-node-09 and gpu-node-12 are still suspects (300 simulated seconds in); it clears them later.
FLAKY_AND_FABRIC = Scenario.model_validate({
    "name": "flaky-and-fabric", "seed": 7, "nodes": [{"count": 32, "gpusPerNode": 8, "cliques": 4}],
    "faults": [{"type": "degraded-fabric", "cliques": ["clique-0", "clique-1"], "factor": 0.5},
               {"type": "flaky", "node": "gpu-node-11", "probability": 0.5}],
})

DIAGNOSE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: isolate}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: diagnose, minGroupSize: 2, thresholds: {busBandwidthGBps: "value >= 300"}}
"""


# The all-reduce diagnosis convicts gpu-node-07 and gpu-node-12; the training run, one group of all 32 nodes, misses
# its TFLOP/s threshold and makes every node suspect with one group-wide reason (32 failures on the wall).
DIAGNOSE_AND_TRAIN = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: diagnose-and-train}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: diagnose, minGroupSize: 2, maxConcurrent: 8, thresholds: {busBandwidthGBps: "value >= 300"}}
    - domain: training
      variant: nemotron5-8b
      options: {thresholds: {avgTFLOPsPerGPU: "value >= 800"}}
"""


def certification_body(text: str = INTRA_NODE) -> dict[str, Any]:
    """A validated Certification, as the console submits it."""
    body = certification_from_text("test", text, default_catalog()).to_wire()
    body["metadata"]["namespace"] = "default"
    return body


async def session_with(*texts: str, settle: bool = True, scenario: Scenario | None = None) -> SimSession:
    """A fresh simulated session (the default fleet unless `scenario`) with these certifications created (and run
    to the end when `settle`)."""
    session = await SimSession.open(scenario or default_scenario(), None)
    for text in texts:
        await session.store.create(CERTIFICATION, certification_body(text))
    if settle:
        assert session.engine is not None  # a fresh session in memory holds its own engine
        await session.engine.run_until_settled()
    return session


async def session_run_for(text: str, seconds: float) -> SimSession:
    """A fresh simulated session with this certification, its engine run for `seconds` of simulated time (mid-run)."""
    session = await session_with(text, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=seconds)
    return session


async def open_drilldown(app: NvcreApp, pilot: Any, certification: str) -> Any:
    """The drill-down of `certification` pushed on `app` (its snapshot read first), as a DrilldownScreen."""
    from nvcre_tui.screens.drilldown import DrilldownScreen

    await app.refresh_snapshot()
    await app.push_screen(DrilldownScreen(certification))
    await pilot.pause()
    assert isinstance(app.screen, DrilldownScreen)
    return app.screen


async def open_node_screen(app: NvcreApp, pilot: Any, node: str) -> Any:
    """The node screen of `node`, opened as a user does (the command `node NAME`), as a NodeScreen."""
    from nvcre_tui.screens.node import NodeScreen

    app.run_command(f"node {node}")
    await pilot.pause()
    await pilot.pause()
    assert isinstance(app.screen, NodeScreen)
    return app.screen


def save_finished(path: Path, *texts: str, scenario: Scenario | None = None) -> Path:
    """Run these certifications to the end once and save the simulator state (tests reopen copies fast)."""
    session = asyncio.run(session_with(*texts, scenario=scenario))
    session.path = path
    session.save()
    return path


async def reopen(state: Path, *, readonly: bool = False, scenario: Scenario | None = None) -> SimSession:
    """A session of its own on a copy of a saved state (the saved file is shared by many tests: opening it
    in place would turn it into one store, with one engine lease, for all of them)."""
    folder = tempfile.mkdtemp(prefix="nvcre-reopen-")
    atexit.register(shutil.rmtree, folder, True)
    copy = Path(folder) / state.name
    shutil.copyfile(state, copy)
    return await SimSession.open(scenario or default_scenario(), copy, readonly=readonly)


def app_on(state: Path, **options: Any) -> NvcreApp:
    """An app on a reopened finished session (for synchronous snapshot tests; see conftest's finished_* fixtures)."""
    return NvcreApp(session=asyncio.run(reopen(state)), live=False, **options)


def app_with(*texts: str, **options: Any) -> NvcreApp:
    """An app on a finished session (for synchronous snapshot tests)."""
    session = asyncio.run(session_with(*texts))
    return NvcreApp(session=session, live=False, **options)


async def compose_path_said(app: NvcreApp, pilot: Any, key: str, typed: str) -> str:
    """On the compose screen (pushed over the app's first screen), `key` (ctrl+o load, f2 save) opens the path prompt;
    `typed` entered there; what the prompt says under it."""
    from textual.widgets import Input, Static

    from nvcre_tui.screens.compose import ComposeScreen
    from nvcre_tui.screens.path_prompt import PathModal

    await app.push_screen(ComposeScreen())
    await pilot.pause()
    await pilot.press(key)
    await pilot.pause()
    assert isinstance(app.screen, PathModal)
    app.screen.query_one("#path", Input).value = typed
    await pilot.press("enter")
    await pilot.pause()
    return str(app.screen.query_one("#path-error", Static).render())


def marks_lines(app: NvcreApp) -> list[str]:
    """The map screen's legend lines under it (#marks), as drawn."""
    region = app.screen.query_one("#marks").region
    return [strip.text for strip in app.screen._compositor.render_strips()[region.y : region.bottom]]
