"""A child found under the name the engine gives it was adopted when ANY of its ownerReferences named the owner's uid:
a hand could plant, say, the failed-nodes ConfigMap of a Workflow with a plain (not controller) reference to it, and
the engine took its node list for the one it measured. As Kubernetes controllers adopt, only a child whose controller
reference is the owner's is ours; another is a name collision, refused and said, never adopted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.context import Context, NameCollision
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import CERTIFICATION, CONFIGMAP
from tests.kube.cluster import case_certification, installed, store_on
from tests.scenarios.harness import CASES

NAMESPACE = "default"
Obj = dict[str, Any]


def _config_map(name: str, nodes: str, refs: list[Obj] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": {"nodes": nodes},
            "metadata": {"name": name, "namespace": NAMESPACE, **({"ownerReferences": refs} if refs else {})}}


async def test_a_child_naming_its_owner_only_in_a_non_controller_reference_is_not_adopted(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    async with installed(tmp_path, clock) as (_, kubeconfig):
        store = await store_on(kubeconfig, clock, "nvcre-engine")
        try:
            owner = await store.create(CERTIFICATION, case_certification(CASES / "all-pass-every-category", NAMESPACE))
            ctx = Context(store=store, clock=clock, catalog=default_catalog(), runner=None)  # type: ignore[arg-type]  # creates only
            plain = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
            await store.create(CONFIGMAP, _config_map("planted", "gpu-node-09", [{**plain, "controller": False}]))
            with pytest.raises(NameCollision, match=f"ConfigMap planted exists and is not owned by Certification {owner['metadata']['name']}"):
                await ctx.create_child(CONFIGMAP, owner, _config_map("planted", "gpu-node-01"))
            assert (await store.get(CONFIGMAP, "planted", NAMESPACE))["data"] == {"nodes": "gpu-node-09"}  # left as it was
            # the engine's own (its controller reference) is adopted as before: a restart creates nothing twice
            made = await ctx.create_child(CONFIGMAP, owner, _config_map("ours", "gpu-node-01"))
            assert await ctx.create_child(CONFIGMAP, owner, _config_map("ours", "gpu-node-02")) == made
        finally:
            await store.close()
