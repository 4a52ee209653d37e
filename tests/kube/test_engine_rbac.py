"""The engine stays inside the RBAC `setup init` grants, and never writes a Node (design property 8).

A certification runs with today's Engine on a KubeStore (user agent nvcre-engine) that authenticates as
the nvcre-engine ServiceAccount, so the emulator's RBAC authorizer judges every request by the roles
init applied; the simulated fleet and runner play the cluster through a second KubeStore (user agent
nvcre-sim, admin: the simulator is the kubelet and NVSentinel, so it may write Nodes). Every request from
nvcre-engine is also checked against the same rules with our own checker (engine/kube/rbac.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.controllers.iterations import blamed_nodes
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.kube.install import ENGINE_NAME, FIELD_MANAGER, INSTALL_NAMESPACE, install_objects, rbac_objects
from nvcre_tui.engine.kube.rbac import READ, grants_for, rbac_allows
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, kind_of
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer
from tests.scenarios.harness import catalog

SCENARIO = """
name: rbac
seed: 5
nodes: [{count: 3, cliques: 1}]
faults:
  - {type: slow-gpu, node: gpu-node-02, gpu: 1, factor: 0.5}
  - {type: cordon, node: gpu-node-03, at: 4m}
"""
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: rights}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, thresholds: {busBandwidthGBps: "value >= 400"}}
"""
NAMESPACE = "team-a"
# Non-resource URLs every authenticated user may GET (the default system:discovery and
# system:public-info-viewer ClusterRoles), so the engine needs no grant for them.
PUBLIC_PATHS = ("/api", "/apis", "/version", "/healthz", "/readyz", "/livez", "/openapi")


def is_public(request) -> bool:
    return (not request.resource and request.method == "GET"
            and any(request.path == p or request.path.startswith(p + "/") for p in PUBLIC_PATHS))


def describe(request) -> str:
    where = f"{request.namespace}/" if request.namespace else ""
    sub = f"/{request.subresource}" if request.subresource else ""
    return f"{request.verb} {request.api_group or 'core'} {request.resource}{sub} {where}{request.name or ''}"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[ApiServer, str, str, ManualClock]]:
    clock = ManualClock(SIM_START)
    server = ApiServer(clock=clock, garbage_collector=True)
    await server.start()
    try:
        yield (server, str(server.write_kubeconfig(tmp_path / "kubeconfig", namespace="default")),
               service_account_kubeconfig(server, tmp_path), clock)
    finally:
        await server.stop()


async def store(kubeconfig: str, clock: ManualClock, user_agent: str) -> KubeStore:
    return KubeStore(await load_target(kubeconfig), clock, user_agent=user_agent)


def service_account_kubeconfig(server: ApiServer, folder: Path) -> str:
    """A kubeconfig whose user is system:serviceaccount:nvcre-system:nvcre-engine (as in the Deployment)."""
    token = server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)
    return str(server.write_kubeconfig(folder / "engine-kubeconfig", namespace="default", token=token))


async def test_a_certification_stays_inside_the_engine_rbac(cluster) -> None:
    server, kubeconfig, engine_kubeconfig, clock = cluster
    admin = await store(kubeconfig, clock, "test-admin")
    engine_store = await store(engine_kubeconfig, clock, "nvcre-engine")
    sim_store = await store(kubeconfig, clock, "nvcre-sim")
    try:
        for obj in install_objects(INSTALL_NAMESPACE):  # what `nvcre setup init` applies
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)
        await admin.apply(kind_of({"apiVersion": "v1", "kind": "Namespace"}),
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        scenario = Scenario.model_validate(yaml.safe_load(SCENARIO))
        fleet = SimulatedFleet(sim_store, clock, scenario)
        await fleet.ensure_nodes()
        engine = Engine(engine_store, clock, catalog(), SimulatedRunner(sim_store, clock, scenario, fleet))
        lease = EngineLease(engine_store, clock, INSTALL_NAMESPACE, "engine@test/1")
        assert await lease.try_acquire()
        cert = certification_from_text("cert.yaml", CERT, catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        await admin.create(CERTIFICATION, cert)

        async def finished() -> bool:
            return cond.is_terminal(await admin.get(CERTIFICATION, "rights", NAMESPACE))

        assert await engine.run_until_settled(until=finished, max_seconds=6 * 3600)
        assert await lease.renew()
        await lease.release()
        final = await admin.get(CERTIFICATION, "rights", NAMESPACE)
        assert final["status"]["summary"]["result"] == "FAILED"  # the run reached its verdict on the cluster
        reasons = {c.get("reason") for kind in (CERTIFICATION, WORKFLOW, JOB)
                   for obj in (await admin.list(kind, NAMESPACE)).items
                   for c in (obj.get("status") or {}).get("conditions") or []}
        assert "ReconcileError" not in reasons  # the verdict of the GPUs, not of a refused request
        jobs = (await admin.list(JOB, NAMESPACE)).items
        blamed = {f["name"]: f.get("reason") for wf in (await admin.list(WORKFLOW, NAMESPACE)).items for f in blamed_nodes(wf, jobs)}
        assert blamed == {"gpu-node-02": "ThresholdViolation", "gpu-node-03": "HardwareFailureDetected"}
    finally:
        for s in (admin, engine_store, sim_store):
            await s.close()

    grants = grants_for(rbac_objects(INSTALL_NAMESPACE), INSTALL_NAMESPACE, ENGINE_NAME)
    engine_requests = [r for r in server.requests if r.user_agent.startswith("nvcre-engine")]
    sim_requests = [r for r in server.requests if r.user_agent.startswith("nvcre-sim")]
    seen = {(r.verb, r.resource, r.subresource or "") for r in engine_requests}
    # the run exercised every kind of write the engine makes (else this test proves little)
    for expected in [("create", "workflows", ""), ("create", "jobs", ""), ("create", "workloadruns", ""),
                     ("patch", "certifications", "status"), ("patch", "jobs", "status"), ("create", "events", ""),
                     ("create", "configmaps", ""), ("list", "nodes", ""), ("update", "leases", "")]:
        assert expected in seen, expected
    assert [describe(r) for r in engine_requests if r.status == 403] == []  # the server's authorizer agrees
    denied = [describe(r) for r in engine_requests if not is_public(r) and not rbac_allows(
        grants, r.verb, r.api_group, r.resource, r.subresource, r.namespace, r.name or None)]
    assert denied == []
    assert not [describe(r) for r in engine_requests if r.resource == "nodes" and r.verb not in READ]
    # the checker would catch a Node write: the simulator's own writes (playing the cluster) are denied to the engine
    node_writes = [r for r in sim_requests if r.resource == "nodes" and r.verb not in READ]
    assert node_writes and not any(
        rbac_allows(grants, r.verb, "", "nodes", r.subresource or "", None, r.name or None) for r in node_writes)
