"""The Certification controller makes the CLI's manifest checks before anything runs: a new certification an option
check refuses fails InvalidSpec, while one an earlier nvcre accepted and started is not failed mid-run by it."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import CERTIFICATION
from tests.history.helpers import NAMESPACE, fleet


def certification(name: str) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "options": {"maxSteps": 100},
                     "categories": [{"domain": "diagnostics", "variant": "dcgm-level4"}]}}


async def test_an_option_check_fails_a_new_certification_not_one_already_started() -> None:
    session = await SimSession.open(fleet(), None, history=None)
    try:
        await session.store.create(CERTIFICATION, certification("new"))
        started = await session.store.create(CERTIFICATION, certification("started"))
        await session.store.patch_status(CERTIFICATION, "started", NAMESPACE, {"categoryStatuses": [
            {"domain": "diagnostics", "variant": "dcgm-level4", "status": "Pending"}]}, started["metadata"]["resourceVersion"])
        assert session.engine is not None
        await session.engine.settle()
        new = await session.store.get(CERTIFICATION, "new", NAMESPACE)
        assert cond.phase(new) == "Failed"
        failed = cond.find(cond.status_of(new).get("conditions"), "Failed") or {}
        assert "spec.options.maxSteps: diagnostics/dcgm-level4 does not read maxSteps" in failed.get("message", "")
        running = await session.store.get(CERTIFICATION, "started", NAMESPACE)
        assert cond.phase(running) == "InProgress", cond.status_of(running)
    finally:
        await session.close()
