"""Contract: every object the Kubernetes runner creates for a group, for every catalog category (torch, mpi, exec),
on every platform and GPU architecture, with and without a gang scheduler, as TrainJob + TrainingRuntime and as the
batch fallback (Indexed Job, Service, ssh-key Secret), is accepted by an API server serving Kubeflow Trainer's real
CRDs (the vendored v2.3.0 ones, and for the Trainer's kinds also v2.1.0 and the unreleased main: structural schema,
defaults, required fields, enums, CEL rules), with the runner's
`fieldValidation=Strict` (an unknown field is refused, not pruned), and carries every field the built-in types
require. Over real HTTP against the emulator (server-side dry run), so it runs without kube-apiserver; the same objects
meet a real one in test_dry_run.py when $KUBEBUILDER_ASSETS is set."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from nvcre_tui.engine.api.base import GangScheduler, TaintSelector
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from tests.kubeapi import ApiServer
from tests.kubeapi.schema import SKIPPED_RULES
from tests.kubeapi.trainer_crds import TRAINER_VERSION, TRAINER_VERSIONS, jobset_crd, real_trainer_crd
from tests.workloads.dry_paths import NAMESPACE, PATHS
from tests.workloads.matrix import architectures, gke_a3_mega, placement, run_spec
from tests.workloads.schema import check_api_object, check_object

GANG = GangScheduler(scheduler_name="kai-scheduler")
TAINTS = (TaintSelector(key="dedicated", value="gpu", effect="NoSchedule"),)
FRAMEWORKS = {"torch", "mpi", "exec"}


def rendered(trainer: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every distinct object the runner would create (JSON -> (where, object)), over the whole matrix."""
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in sorted(default_catalog().entries):
        for platform in PLATFORMS:
            for arch in architectures():
                for gang in (None, GANG):
                    where = placement(entry, platform, arch, gang=gang, taint_selectors=TAINTS)
                    wheres = [where]
                    if platform == "gcp":  # A3 High nodes as well: their fabric (GPUDirect-TCPX) is another than A3 Mega's
                        high = {name: gke_a3_mega(name, networks=4, instance_type="a3-highgpu-8g") for name in where.nodes}
                        wheres.append(dataclasses.replace(where, node_objects=high))
                    for obj in (obj for at in wheres for obj in workload_manifests(run_spec(entry, platform, arch), at, trainer=trainer)):
                        found.setdefault(json.dumps(obj, sort_keys=True), (f"{entry} {platform}/{arch}", obj))
    return found


@pytest_asyncio.fixture
async def trainer_server(request: pytest.FixtureRequest) -> AsyncIterator[tuple[ApiServer, aiohttp.ClientSession]]:
    """The emulator serving the Trainer CRDs of the version the test is parametrized with (`indirect`), else v2.3.0."""
    version = getattr(request, "param", TRAINER_VERSION)
    server = ApiServer()
    await server.start()
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {server.token}"}) as http:
            for crd in (real_trainer_crd("trainjobs", version), real_trainer_crd("trainingruntimes", version), jobset_crd()):
                assert (await _post(http, server, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd))[0] == 201
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            assert (await _post(http, server, "/api/v1/namespaces", namespace))[0] == 201
            await asyncio.sleep(0)  # the emulated apiextensions controller serves the kinds on the next turn
            yield server, http
    finally:
        await server.stop()


async def _post(http: aiohttp.ClientSession, server: ApiServer, path: str, obj: dict[str, Any],
                query: str = "") -> tuple[int, str, str | None]:
    async with http.post(server.url + path + query, json=obj) as answer:
        return answer.status, await answer.text(), answer.headers.get("Warning")


async def _dry_run(http: aiohttp.ClientSession, server: ApiServer, obj: dict[str, Any]) -> tuple[int, str, str | None]:
    return await _post(http, server, PATHS[obj["kind"]].format(ns=NAMESPACE), obj, "?dryRun=All&fieldValidation=Strict")


def test_the_matrix_covers_every_framework_and_both_shapes() -> None:
    frameworks = {entry.framework for entry in default_catalog().entries.values()}
    assert FRAMEWORKS <= frameworks, frameworks
    kinds = {obj["kind"] for trainer in (True, False) for _, obj in rendered(trainer).values()}
    assert {"TrainJob", "TrainingRuntime", "Job", "Service", "Secret"} <= kinds, kinds


@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
async def test_every_rendered_object_is_accepted_strictly_by_the_real_schemas(trainer_server, trainer: bool) -> None:
    server, http = trainer_server
    refused, unchecked, skipped = [], set(), set(SKIPPED_RULES)
    for where, obj in rendered(trainer).values():
        # a ComputeDomain: test_compute_domain_schema.py meets it with NVIDIA's DRA driver's CRDs; a ResourceClaimTemplate: Kubernetes' DRA API, which
        # the emulator does not serve (test_schema.py checks both, the latter against the Kubernetes models)
        if obj["kind"] not in PATHS:
            unchecked.add(obj["kind"])
            continue
        refused += [f"{where}: {problem}" for problem in check_object(obj) if "required by" in problem]
        code, text, warning = await _dry_run(http, server, obj)
        if code != 201 or warning:
            refused.append(f"{where}: {obj['kind']}/{obj['metadata']['name']}: {code} {warning or ''} {text[:300]}")
    assert refused == []
    assert unchecked <= {"ComputeDomain", "ResourceClaimTemplate"}
    assert SKIPPED_RULES - skipped == set(), "a CEL rule of the Trainer's CRDs this emulator cannot judge: not checked here"


OTHER_TRAINER_VERSIONS = sorted(set(TRAINER_VERSIONS) - {TRAINER_VERSION})


@pytest.mark.parametrize("trainer_server", OTHER_TRAINER_VERSIONS, indirect=True)
async def test_every_trainjob_and_runtime_is_accepted_strictly_by_every_supported_trainer_version(trainer_server) -> None:
    """The oldest release nvcre supports (v2.1.0: podTemplateOverrides, an int-or-string numProcPerNode) and the
    unreleased main (numProcPerNode must be at least 1) take what the newest release takes (the test above)."""
    server, http = trainer_server
    refused = []
    for where, obj in rendered(True).values():
        if obj["kind"] in ("TrainJob", "TrainingRuntime"):
            code, text, warning = await _dry_run(http, server, obj)
            if code != 201 or warning:
                refused.append(f"{where}: {obj['kind']}/{obj['metadata']['name']}: {code} {warning or ''} {text[:300]}")
    assert refused == []


@pytest.mark.parametrize("trainer_server", sorted(TRAINER_VERSIONS), indirect=True)
async def test_the_emulator_refuses_what_the_real_trainer_schema_refuses(trainer_server) -> None:
    """The checks above can fail: a misspelt field, a missing required field, a bad type, each in a TrainJob."""
    server, http = trainer_server
    train_job = next(obj for _, obj in rendered(True).values() if obj["kind"] == "TrainJob")
    misspelt, nameless, mistyped = (copy.deepcopy(train_job) for _ in range(3))
    misspelt["spec"]["trainer"]["numNode"] = 2
    del nameless["spec"]["runtimeRef"]["name"]
    mistyped["spec"]["trainer"]["numNodes"] = "two"
    code, text, _ = await _dry_run(http, server, misspelt)
    assert code == 400 and 'unknown field \\"spec.trainer.numNode\\"' in text, text
    code, text, _ = await _dry_run(http, server, nameless)
    assert code == 422 and "spec.runtimeRef.name: Required value" in text, text
    assert (await _dry_run(http, server, mistyped))[0] == 422
    job = next(obj for _, obj in rendered(False).values() if obj["kind"] == "Job")
    assert check_object({**job, "spec": {**job["spec"], "template": None}}) != []


INSTALL_MODELS = {"Namespace": "V1Namespace", "ServiceAccount": "V1ServiceAccount", "ClusterRole": "V1ClusterRole",
                  "ClusterRoleBinding": "V1ClusterRoleBinding", "Role": "V1Role", "RoleBinding": "V1RoleBinding",
                  "CustomResourceDefinition": "V1CustomResourceDefinition"}


def test_what_setup_init_applies_has_every_field_its_types_require_and_no_other() -> None:
    """The namespace, ServiceAccount, RBAC and CRDs (their schemas as JSONSchemaProps) `setup init` applies, with and
    without --sim-runner; the emulator applies them in tests/kube (and says no field was dropped: test_setup.py)."""
    from nvcre_tui.engine.kube.install import install_objects

    problems = [problem for simulator in (False, True) for obj in install_objects("nvcre-system", simulator=simulator)
                for problem in check_api_object(obj, INSTALL_MODELS[obj["kind"]], f"{obj['kind']}/{obj['metadata']['name']}")]
    assert problems == []
