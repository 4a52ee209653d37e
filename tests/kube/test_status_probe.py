"""`setup status`'s probe over a store: install state, lease, Trainer, GPU Operator, DCGM, GPU nodes.

The probe only reads through the ResourceStore, so these cases run on MemoryStore with a ManualClock
(exact ages); tests/kube/test_setup.py runs the command itself over HTTP against the emulator.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from nvcre_tui.engine.api.vocabulary import ANNOTATION_SCHEMA_HASH
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.kube.install import install_objects
from nvcre_tui.engine.kube.status import TRAINER_CRDS, probe
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.store import CLUSTER_ROLE, CRD, NAMESPACE, NODE, SERVICE, MemoryStore, kind_of

NS = "nvcre-system"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return MemoryStore(clock)


async def established(store: MemoryStore, crd: dict) -> None:
    created = await store.create(CRD, crd)
    await store.patch_status(CRD, created["metadata"]["name"], None,
                             {"conditions": [{"type": "Established", "status": "True"}]})


async def install(store: MemoryStore, namespace: str = NS) -> None:
    for obj in install_objects(namespace):
        if obj["kind"] == "CustomResourceDefinition":
            await established(store, obj)
        else:
            await store.create(kind_of(obj), obj)


def trainer_crd(name: str) -> dict:
    plural, group = name.split(".", 1)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/version": "v2.2.1"}},
            "spec": {"group": group, "versions": [{"name": "v1alpha1", "served": True}]}}


def node(name: str, labels: dict | None = None, gpus: int = 0) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"capacity": {"nvidia.com/gpu": str(gpus)}}}


async def test_an_empty_cluster_has_nothing_installed(store, clock) -> None:
    status = await probe(store, clock, NS)
    assert not status.installed
    assert [c.present for c in status.crds] == [False] * 4
    assert not status.namespace_present and not any(o.present for o in status.rbac)
    assert status.lease is None and status.gpu_nodes == 0 and status.dcgm_services == []


async def test_a_complete_install_is_installed(store, clock) -> None:
    await install(store)
    status = await probe(store, clock, NS)
    assert status.installed
    assert all(c.current and c.established for c in status.crds)
    assert status.to_json()["installed"] is True


async def test_a_part_of_ours_refused_is_unknown_unless_a_part_read_is_not_installed(store, clock) -> None:
    """`setup status` exited 1 both for an install not there and for one a refused read (RBAC) left unknown. Unknown:
    a check of ours unread, every one read as init makes it; one read missing says not installed, whatever the rest."""
    await install(store)
    status = await probe(store, clock, NS)
    assert status.installed and not status.install_unknown
    refused = replace(status, unknown={"rbac": "forbidden"}, rbac=[replace(o, present=False, current=False, read=False) for o in status.rbac])
    assert refused.install_unknown and not refused.installed and refused.to_json()["installed"] is None
    assert not replace(status, unknown={"lease": "forbidden"}).install_unknown  # not our part: the install is known
    empty = await probe(MemoryStore(clock), clock, NS)
    partly = replace(empty, unknown={"rbac": "forbidden"})  # CRDs and namespace read, and missing: not installed
    assert not partly.install_unknown and partly.to_json()["installed"] is False


async def test_an_outdated_schema_is_not_installed(store, clock) -> None:
    await install(store)
    crd = await store.get(CRD, "jobs.nvcre.nvidia.com")
    crd["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH] = "0123456789abcdef"
    await store.update(CRD, crd)
    status = await probe(store, clock, NS)
    assert not status.installed
    assert [c.name for c in status.crds if not c.current] == ["jobs.nvcre.nvidia.com"]


def test_the_schema_hash_follows_what_objects_are_checked_against_not_kubectls_aliases() -> None:
    """Renaming the short names (cert to nvcert: cert-manager owns cert) made every install "another nvcre version",
    refusing `nvcre controller` until `setup init` ran (a review found it). Aliases are left out; a schema change is not."""
    import copy

    from nvcre_tui.engine.kube.install import install_crds, schema_hash

    crd = install_crds()[0]
    renamed = copy.deepcopy(crd)
    renamed["spec"]["names"]["shortNames"] = ["cert"]
    renamed["spec"]["names"]["categories"] = ["all"]
    assert schema_hash(renamed) == schema_hash(crd)
    for change in (("kind", "Other"), ("plural", "others")):
        other = copy.deepcopy(crd)
        other["spec"]["names"][change[0]] = change[1]
        assert schema_hash(other) != schema_hash(crd)
    stricter = copy.deepcopy(crd)
    stricter["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["required"] = ["spec", "status"]
    assert schema_hash(stricter) != schema_hash(crd)


async def test_changed_rbac_is_not_installed(store, clock) -> None:
    await install(store)
    role = await store.get(CLUSTER_ROLE, "nvcre-engine")
    role["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    await store.update(CLUSTER_ROLE, role)
    status = await probe(store, clock, NS)
    assert not status.installed
    assert [(o.kind, o.current) for o in status.rbac if not o.current] == [("ClusterRole", False)]


async def test_an_install_without_the_lease_reader_is_not_current(store, clock) -> None:
    """An install made before the Role that lets every user read the engine Lease: its viewers cannot say who runs the
    engine, so `setup status` says what `setup init` would add."""
    from nvcre_tui.engine.store import ROLE_BINDING

    await install(store)
    await store.delete(ROLE_BINDING, "nvcre-engine-lease-reader", NS)
    status = await probe(store, clock, NS)
    assert not status.installed
    assert [(o.kind, o.name, o.present) for o in status.rbac if not o.current] == [("RoleBinding", "nvcre-engine-lease-reader", False)]


async def test_another_namespace_is_probed_where_asked(store, clock) -> None:
    await install(store, "other")
    assert not (await probe(store, clock, NS)).installed
    assert (await probe(store, clock, "other")).installed


async def test_lease_holder_and_ages(store, clock) -> None:
    await install(store)
    await EngineLease(store, clock, NS, "engine@host/7").try_acquire()
    clock.advance(90)
    lease = (await probe(store, clock, NS)).lease
    assert lease is not None
    assert (lease.holder, lease.live, lease.held_seconds, lease.renewed_seconds_ago) == ("engine@host/7", False, 90.0, 90.0)


async def test_a_holder_whose_clock_runs_ahead_is_shown_so(store, clock) -> None:
    """`setup status` said `renewed 0s ago` of a renewal a minute in its future."""
    from datetime import timedelta

    from nvcre_tui.cli.status_rows import status_rows

    await install(store)
    fast = ManualClock(clock.now() + timedelta(seconds=60))
    await EngineLease(store, fast, NS, "engine@fast/1").try_acquire()
    status = await probe(store, clock, NS)
    [row] = [r for r in status_rows(status) if r[0] == "engine lease"]
    assert row[1] == "held" and "renewTime 1m00s ahead of this clock" in row[2], row
    clock.advance(100)
    [row] = [r for r in status_rows(await probe(store, clock, NS)) if r[0] == "engine lease"]
    assert row[1] == "expired" and "renewed 40s ago" in row[2], row


async def test_a_lease_renewed_long_ago_says_its_age_in_units(store, clock) -> None:
    """`renewed 183640s ago` of an engine gone since the day before yesterday: in units now, as every age said."""
    from nvcre_tui.cli.status_rows import status_rows

    await install(store)
    await EngineLease(store, clock, NS, "engine@host/7").try_acquire()
    clock.advance(4000)
    [row] = [r for r in status_rows(await probe(store, clock, NS)) if r[0] == "engine lease"]
    assert row[1] == "expired" and "renewed 1h06m ago" in row[2], row
    clock.advance(2 * 86400 + 3 * 3600 + 40 - 4000)
    [row] = [r for r in status_rows(await probe(store, clock, NS)) if r[0] == "engine lease"]
    assert "renewed 2d3h ago" in row[2], row


async def test_what_nvcre_relies_on(store, clock) -> None:
    for name in TRAINER_CRDS[:2]:
        await store.create(CRD, trainer_crd(name))
    await store.create(CRD, trainer_crd("clusterpolicies.nvidia.com"))
    await store.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}})
    # sim-1: a Node --sim-runner registered carries GPU Feature Discovery's label too, which proves no GPU Operator
    simulated = node("sim-1", {"nvidia.com/gpu.present": "true", "nvcre.nvidia.com/simulated": "true"}, 8)
    for n in (node("gpu-1", {"nvidia.com/gpu.present": "true"}, 8), node("gpu-2", gpus=4), node("cpu-1"), simulated):
        created = await store.create(NODE, n)
        await store.update_status(NODE, {**created, "status": n["status"]})
    for ns, name in (("gpu-operator", "nvidia-dcgm-exporter"), ("default", "kubernetes")):
        await store.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns}})
    status = await probe(store, clock, NS)
    assert [(c.name.split(".")[0], c.present, c.versions, c.release) for c in status.trainer] == [
        ("trainjobs", True, ["v1alpha1"], "v2.2.1"), ("trainingruntimes", True, ["v1alpha1"], "v2.2.1"),
        ("clustertrainingruntimes", False, [], None), ("jobsets", False, [], None)]
    assert status.gpu_operator == ["clusterpolicies.nvidia.com CRD", "namespace gpu-operator"]  # the operator's own objects
    assert status.gpu_labelled_nodes == 1  # GPU Feature Discovery's label, told apart (sim-1's is not counted)
    assert status.dcgm_services == ["gpu-operator/nvidia-dcgm-exporter"]
    assert (status.gpu_nodes, status.nodes) == (3, 4)
    # The exporter is not the hostengine DCGM level 4 connects to (dcgmi --host nvidia-dcgm.gpu-operator.svc:5555).
    assert status.dcgm_hostengine == {"nvidia-dcgm.gpu-operator.svc:5555": False}


async def test_the_dcgm_hostengine_service_the_catalog_names(store, clock) -> None:
    await store.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}})
    await store.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nvidia-dcgm", "namespace": "gpu-operator"},
                                 "spec": {"internalTrafficPolicy": "Local", "ports": [{"name": "dcgm", "port": 5555}]}})
    status = await probe(store, clock, NS)
    assert status.dcgm_hostengine == {"nvidia-dcgm.gpu-operator.svc:5555": True}


async def test_a_terminating_namespace_is_not_an_install(store, clock) -> None:
    await install(store)
    ns = await store.get(NAMESPACE, NS)
    await store.update_status(NAMESPACE, {**copy.deepcopy(ns), "status": {"phase": "Terminating"}})
    status = await probe(store, clock, NS)
    assert not status.namespace_present and not status.installed


async def test_gb200_nodes_and_whether_compute_domains_are_served(store, clock) -> None:
    """GB200/GB300 runs with MNNVL on (their default) need a ComputeDomain each: NVIDIA's DRA driver."""
    from nvcre_tui.cli.status_rows import status_rows

    def row(status) -> tuple[str, str, str]:
        return next(r for r in status_rows(status) if r[0] == "compute domains")

    assert row(await probe(store, clock, NS)) == ("compute domains", "-", "no GB200/GB300 nodes")
    for n in (node("gb-1", {"nvidia.com/gpu.product": "NVIDIA-GB200"}, 4), node("h-1", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, 8)):
        await store.create(NODE, n)
    status = await probe(store, clock, NS)
    assert (status.rack_scale_nodes, status.compute_domains) == (1, False)
    state, detail = row(status)[1:]
    assert state == "missing" and "install NVIDIA's DRA driver for GPUs, or set enableMNNVL: false" in detail
    await store.create(CRD, trainer_crd("computedomains.resource.nvidia.com"))
    status = await probe(store, clock, NS)
    assert status.compute_domains and row(status)[1] == "found"
    assert status.to_json()["computeDomains"] is True and status.to_json()["rackScaleNodes"] == 1
