"""A status written with nulls reads back without them on the API server (merge patch deletes null keys, the
structural schema prunes nulls inside lists); the engine must see no change there, or it patches every sweep."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.context import Context
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_crds
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import CERTIFICATION, kind_of
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer

CERT = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "nulls", "namespace": "default"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}
# A category row mirrored from a Workflow that has no phase condition yet (controllers/certification.py _mirror).
STATUS = {"categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "InProgress",
                                "workflowRef": {"name": "nulls-communication-nccl-all-reduce", "namespace": "default"},
                                "reason": None, "message": None}]}


async def test_a_status_row_with_nulls_reads_back_unchanged_for_the_engine(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    server = ApiServer(clock=clock)
    await server.start()
    store = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "kubeconfig", namespace="default"))), clock)
    try:
        for crd in install_crds():
            await store.apply(kind_of(crd), crd, field_manager=FIELD_MANAGER)
        await store.create(CERTIFICATION, CERT)
        written = await store.patch_status(CERTIFICATION, "nulls", "default", STATUS)
        row = written["status"]["categoryStatuses"][0]
        assert "reason" not in row and row["status"] == "InProgress"  # the server's convention, as on a real one
        assert not Context.changes(written, STATUS)  # so the next sweep sends nothing
        assert Context.changes(written, {"categoryStatuses": [{**STATUS["categoryStatuses"][0], "reason": "WorkflowCreated"}]})
        assert Context.changes(written, {"summary": None}) is False and Context.changes({"status": {"summary": {"a": 1}}}, {"summary": None})
    finally:
        await store.close()
        await server.stop()
