"""A group's Job names its nodes in its `nvcre.nvidia.com/group-nodes` annotation, and the API server takes at most
256 KiB of annotations an object: a full-scale group of 7,000 AWS-named nodes (about 41 bytes a name) was rendered, and
the Workflow failed with a ReconcileError when the server refused its Job, hours into a certification whose earlier
categories had run. Render now refuses it, naming the largest nodesPerJob that fits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.base import MAX_ANNOTATIONS_BYTES
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, group_nodes_value
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.render import RenderError, render_category
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.errors import Invalid
from nvcre_tui.engine.store.protocol import JOB
from tests.kube.cluster import installed, store_on

COUNT = 7000


def _node(index: int) -> dict[str, Any]:
    name = f"ip-10-{index // 65536}-{index // 256 % 256}-{index % 256}.us-west-2.compute.internal"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                                  "nvidia.com/gpu.count": "8", "kubernetes.io/hostname": name}},
            "spec": {"providerID": f"aws:///us-west-2a/i-{index:017x}"},
            "status": {"allocatable": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}, "conditions": [{"type": "Ready", "status": "True"}]}}


NODES = [_node(index) for index in range(COUNT)]


def _cert(options: dict[str, Any]) -> Certification:
    return Certification.model_validate({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "fleet", "namespace": "default"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "full-scale", **options}}]}})


def test_a_group_more_than_a_job_can_name_is_refused_at_render_naming_the_nodes_per_job_that_fit() -> None:
    with pytest.raises(RenderError) as refused:
        render_category(_cert({}), 0, NODES, default_catalog())
    assert refused.value.field == "nodesPerJob"
    fit = int(str(refused.value).rsplit(" ", 1)[1])
    assert f"group group-0 of {COUNT} nodes is more than one Job can name" in str(refused.value)
    rendered = render_category(_cert({"nodesPerJob": fit}), 0, NODES, default_catalog())
    assert max(len(group_nodes_value(group.nodes)) for group in rendered.groups) <= MAX_ANNOTATIONS_BYTES - len(ANNOTATION_GROUP_NODES)
    assert fit > COUNT // 2  # all the room the names leave, not a guess


def test_the_api_server_refuses_a_job_whose_group_nodes_annotation_passes_the_limit(tmp_path: Path) -> None:
    """What render guards against: the emulator, as the real server, refuses such a Job (422)."""
    names = [node["metadata"]["name"] for node in NODES]

    async def create(count: int) -> None:
        clock = ManualClock(SIM_START)
        async with installed(tmp_path, clock=clock) as (_, kubeconfig):
            admin = await store_on(kubeconfig, clock, "nvcre-test")
            try:
                await admin.create(JOB, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
                                         "metadata": {"name": "fleet-job", "namespace": "default",
                                                      "annotations": {ANNOTATION_GROUP_NODES: group_nodes_value(names[:count])}},
                                         "spec": {"workload": {"workloadRun": {"image": "img", "numNodes": count,
                                                                               "framework": {"torch": {"script": "train.py"}}}}}})
            finally:
                await admin.close()

    with pytest.raises(Invalid, match="annotations"):
        asyncio.run(create(COUNT))
