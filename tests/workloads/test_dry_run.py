"""Rendered workload objects sent to a real kube-apiserver with server-side dry-run and strict field
validation (an unknown or misspelt field is an error, not silently pruned).

Needs $KUBEBUILDER_ASSETS (etcd + kube-apiserver, see tests/envtest.py); without it the tests skip, naming it.
The Trainer objects meet Kubeflow Trainer's CRDs: the v2.3.0 ones vendored in tests/kubeapi/trainer_crds, or those
of another release when $NVCRE_TRAINER_CRDS names a folder of its CRD YAMLs (manifests/base/crds of kubeflow/trainer).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from tests import envtest
from tests.kubeapi.trainer_crds import real_trainer_crd
from tests.workloads.dry_paths import NAMESPACE, PATHS
from tests.workloads.matrix import REPRESENTATIVES, architectures, placement, run_spec

TRAINER_CRDS_ENV = "NVCRE_TRAINER_CRDS"
needs_api_server = pytest.mark.skipif(envtest.assets_dir() is None, reason=f"needs ${envtest.ASSETS_ENV} (etcd + kube-apiserver)")


def _dry_run(plane: envtest.ControlPlane, obj: dict, seconds: float = 10.0) -> None:
    """POST with dryRun=All; retried while the path answers 404 (a kind is served a moment after its CRD)."""
    path = PATHS[obj["kind"]].format(ns=NAMESPACE)
    deadline = time.monotonic() + seconds
    while True:
        try:
            plane.request("POST", f"{path}?dryRun=All&fieldValidation=Strict", obj)
            return
        except envtest.ApiError as error:
            if error.code != 404 or time.monotonic() > deadline:
                raise AssertionError(f"{obj['kind']}/{obj['metadata']['name']}: {error}") from None
        time.sleep(0.2)


def _objects(trainer: bool) -> list[dict]:
    return [obj for platform in PLATFORMS for arch in architectures() for entry in REPRESENTATIVES.values()
            for obj in workload_manifests(run_spec(entry, platform, arch), placement(entry, platform, arch), trainer=trainer)
            if obj["kind"] in PATHS]


@needs_api_server
def test_batch_objects_are_accepted_by_a_real_api_server(tmp_path: Path) -> None:
    assets = envtest.assets_dir()
    assert assets is not None
    with envtest.ControlPlane(assets, tmp_path) as plane:
        plane.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        for obj in _objects(trainer=False):
            _dry_run(plane, obj)


def trainer_crds() -> list[dict]:
    """The Trainer's CRDs: from $NVCRE_TRAINER_CRDS when set, else the vendored v2.3.0 ones."""
    folder = os.environ.get(TRAINER_CRDS_ENV)
    if not folder:
        return [real_trainer_crd(plural) for plural in ("trainjobs", "trainingruntimes")]
    crds = [doc for path in sorted(Path(folder).glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())
            if doc and doc.get("kind") == "CustomResourceDefinition"]
    assert crds, f"${TRAINER_CRDS_ENV}={folder} holds no CustomResourceDefinition YAML"
    return crds


def test_the_vendored_trainer_crds_serve_trainjobs_and_runtimes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRAINER_CRDS_ENV, raising=False)
    assert sorted(crd["spec"]["names"]["plural"] for crd in trainer_crds()) == ["trainingruntimes", "trainjobs"]


@needs_api_server
def test_trainer_objects_are_accepted_by_a_real_api_server(tmp_path: Path) -> None:
    assets = envtest.assets_dir()
    assert assets is not None
    crds = trainer_crds()
    with envtest.ControlPlane(assets, tmp_path) as plane:
        for crd in crds:
            plane.apply(f"{envtest.CRD_PATH}/{crd['metadata']['name']}", crd)
        for crd in crds:
            plane.wait_crd(crd["metadata"]["name"], envtest.established)
        plane.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        for obj in _objects(trainer=True):
            _dry_run(plane, obj)
