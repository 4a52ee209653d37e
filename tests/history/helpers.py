"""Shared by the history tests: a small fleet, a quick certification, and running it to its end."""

from __future__ import annotations

from typing import Any

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
