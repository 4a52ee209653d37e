"""A certification an nvcre before the one-node-one-state rule finished keeps its stored summary: kubectl's Excluded
Nodes column (status.summary.excludedNodes) said 1 for a node the first category blamed and the second excluded
(cordoned mid-run), where the wall, the report and `certification list` say 0, until something wrote its status
again. The engine counts a finished certification's summary again, once, when it sees it, through the status
subresource inside the RBAC `setup init` grants (the emulator judges the nvcre-engine ServiceAccount's requests),
changing nothing else and running nothing again."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.kube.install import FIELD_MANAGER, INSTALL_NAMESPACE, install_objects
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, kind_of
from nvcre_tui.engine.store.kube import KubeStore
from tests.kube.cluster import simulated_engine
from tests.kubeapi import ApiServer
from tests.scenarios.harness import CASES, catalog

from .test_engine_rbac import cluster, describe, store  # noqa: F401 - cluster is a fixture

CASE = CASES / "cordon-during-first-category"  # gpu-node-02 blamed in the all-reduce, excluded from the all-gather
NAMESPACE = "team-a"
NAME = "cordon-during-first-category"


async def engine_on(engine_store: KubeStore, sim_store: KubeStore, clock: ManualClock) -> Engine:
    engine, _ = await simulated_engine(engine_store, sim_store, clock, CASE)
    return engine


async def test_the_engine_recounts_an_old_finished_summary_once_within_its_rbac(cluster, tmp_path: Path) -> None:  # noqa: F811
    server, kubeconfig, engine_kubeconfig, clock = cluster
    admin = await store(kubeconfig, clock, "test-admin")
    sim_store = await store(kubeconfig, clock, "nvcre-sim")
    first = await store(engine_kubeconfig, clock, "nvcre-engine")
    try:
        for obj in install_objects(INSTALL_NAMESPACE):  # what `nvcre setup init` applies
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)
        await admin.apply(kind_of({"apiVersion": "v1", "kind": "Namespace"}),
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        engine = await engine_on(first, sim_store, clock)
        cert = certification_from_text("cert.yaml", (CASE / "cert.yaml").read_text(), catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        await admin.create(CERTIFICATION, cert)

        async def finished() -> bool:
            return cond.is_terminal(await admin.get(CERTIFICATION, NAME, NAMESPACE))

        assert await engine.run_until_settled(until=finished, max_seconds=6 * 3600)
        await engine.stop()
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert done["status"]["summary"]["excludedNodes"] == 0 and done["status"]["summary"]["failedNodes"] == 1
        # As an nvcre before the rule stored it (its engine: a status another hand wrote is refused, not recounted):
        # gpu-node-02 counted excluded too
        old = await first.patch_status(CERTIFICATION, NAME, NAMESPACE, {"summary": {**done["status"]["summary"], "excludedNodes": 1}})
        assert old["status"]["summary"]["excludedNodes"] == 1
        workflows_before = [(w["metadata"]["name"], w["metadata"]["resourceVersion"]) for w in (await admin.list(WORKFLOW, NAMESPACE)).items]
        jobs_before = len((await admin.list(JOB, NAMESPACE)).items)
    finally:
        await first.close()

    server.clear_requests()
    engine_store = await store(engine_kubeconfig, clock, "nvcre-engine")  # a new engine (an upgrade) starts
    try:
        engine = await engine_on(engine_store, sim_store, clock)
        await engine.run_until_settled(max_seconds=60)
        after = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert after["status"]["summary"] == {**old["status"]["summary"], "excludedNodes": 0}
        assert {k: v for k, v in after["status"].items() if k != "summary"} == {k: v for k, v in old["status"].items() if k != "summary"}
        # nothing ran again, no Workflow written
        assert [(w["metadata"]["name"], w["metadata"]["resourceVersion"]) for w in (await admin.list(WORKFLOW, NAMESPACE)).items] == workflows_before
        assert len((await admin.list(JOB, NAMESPACE)).items) == jobs_before
        engine_requests = [r for r in server.requests if r.user_agent.startswith("nvcre-engine")]
        writes = [describe(r) for r in engine_requests if r.verb not in ("get", "list", "watch")]
        assert [w for w in writes if "certifications" in w] == [f"patch nvcre.nvidia.com certifications/status {NAMESPACE}/{NAME}"], writes
        assert [describe(r) for r in engine_requests if r.status == 403] == []
        # once: a later look (a restart again) finds nothing to change
        server.clear_requests()
        await engine.stop()
        again = await engine_on(engine_store, sim_store, clock)
        await again.run_until_settled(max_seconds=60)
        assert not [r for r in server.requests if r.user_agent.startswith("nvcre-engine") and r.resource == "certifications"
                    and r.verb not in ("get", "list", "watch")]
        await again.stop()
        assert copy.deepcopy(after) == await admin.get(CERTIFICATION, NAME, NAMESPACE)
    finally:
        for s in (admin, engine_store, sim_store):
            await s.close()
