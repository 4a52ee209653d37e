"""Shared by the history tests: a small fleet, a quick certification, and running it to its end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION

NAMESPACE = "default"


def fleet(**extra: Any) -> Scenario:
    """4 nodes, one clique; gpu-node-02 has a slow GPU (its loopback bandwidth is low)."""
    return Scenario.model_validate({
        "name": "history", "seed": 5, "nodes": [{"count": 4, "cliques": 1}],
        "faults": [{"type": "slow-gpu", "node": "gpu-node-02", "gpu": 1, "factor": 0.4}], **extra})


def loopback(name: str, threshold: str = "value >= 300") -> dict[str, Any]:
    """A per-node NCCL loopback certification: each node measured on its own."""
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-loopback"}],
                 "options": {"thresholds": {"busBandwidthGBps": threshold}}},
    }


async def certify(session: Any, name: str, threshold: str = "value >= 300") -> dict[str, Any]:
    """Create a loopback certification and run the engine until it is terminal; the Certification."""
    await session.store.create(CERTIFICATION, loopback(name, threshold))

    async def done() -> bool:
        cert = session.cache.get(CERTIFICATION, name, NAMESPACE)
        return cert is not None and cond.is_terminal(cert)

    assert await session.engine.run_until_settled(until=done, max_seconds=6 * 3600)
    return session.cache.get(CERTIFICATION, name, NAMESPACE)


def all_then_one_node(folder: Path) -> Path:
    """Two certifications run from the CLI on fleet(): `all` (every node), then `one-node` (gpu-node-01 alone); the
    history file they were archived in."""
    scenario = folder / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    history = folder / "history.db"
    one = loopback("one-node")
    one["spec"]["target"] = {"nodeNames": ["gpu-node-01"]}
    for name, body in (("all", loopback("all")), ("one-node", one)):
        cert = folder / f"{name}.yaml"
        cert.write_text(yaml.safe_dump(body))
        main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(folder / "state.json"),
              "--history", str(history), "--cert-file", str(cert), "--wait"])
    return history
