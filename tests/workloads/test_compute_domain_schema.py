"""Every ComputeDomain the runner makes (GB200 / GB300, every catalog entry and platform) is accepted strictly by NVIDIA's
DRA driver's real CRD, in the first release that has it, a later one and its main branch (tests/kubeapi/dra_crds), over
real HTTP against the emulator (server-side dry run, fieldValidation=Strict as the runner creates): test_emulator_contract
left ComputeDomains unchecked. The checks can fail: the CRD refuses a ComputeDomain without its channel, and a change of
its spec (`self == oldSelf`: a run's ComputeDomain is made once, never updated)."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import aiohttp
import pytest

from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from tests.kubeapi import ApiServer
from tests.kubeapi.dra_crds import COMPUTE_DOMAIN_VERSIONS, compute_domain_crd
from tests.workloads.dry_paths import NAMESPACE
from tests.workloads.matrix import placement, run_spec

PATH = f"/apis/resource.nvidia.com/v1beta1/namespaces/{NAMESPACE}/computedomains"


def compute_domains() -> dict[str, dict[str, Any]]:
    """Every distinct ComputeDomain of the matrix on the rack-scale architectures, by its JSON."""
    found: dict[str, dict[str, Any]] = {}
    for entry in sorted(default_catalog().entries):
        for platform in PLATFORMS:
            for arch in ("gb200", "gb300"):
                for trainer in (True, False):
                    for obj in workload_manifests(run_spec(entry, platform, arch), placement(entry, platform, arch), trainer=trainer):
                        if obj["kind"] == "ComputeDomain":
                            found.setdefault(json.dumps(obj, sort_keys=True), obj)
    return found


async def _answers(version: str, bodies: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[int, str, str | None]]:
    """(status, text, Warning header) of each (method, query, body) sent to the emulator serving `version`'s CRD."""
    server = ApiServer()
    await server.start()
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {server.token}"}) as http:
            async def send(method: str, path: str, body: dict[str, Any]) -> tuple[int, str, str | None]:
                kind = "application/merge-patch+json" if method == "PATCH" else "application/json"
                async with http.request(method, server.url + path, data=json.dumps(body), headers={"Content-Type": kind}) as answer:
                    return answer.status, await answer.text(), answer.headers.get("Warning")

            assert (await send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", compute_domain_crd(version)))[0] == 201
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            assert (await send("POST", "/api/v1/namespaces", namespace))[0] == 201
            await asyncio.sleep(0)  # the emulated apiextensions controller serves the kind on the next turn
            answers = []
            for method, query, body in bodies:
                path = PATH if method == "POST" else f"{PATH}/{body.pop('metadata')['name']}"
                answers.append(await send(method, path + query, body))
            return answers
    finally:
        await server.stop()


@pytest.mark.parametrize("version", COMPUTE_DOMAIN_VERSIONS)
def test_every_compute_domain_is_accepted_strictly_by_the_drivers_crd(version: str) -> None:
    bodies = list(compute_domains().values())
    assert len(bodies) > 1
    answers = asyncio.run(_answers(version, [("POST", "?dryRun=All&fieldValidation=Strict", body) for body in bodies]))
    refused = [f"{body['metadata']['name']}: {code} {warning or ''} {text[:300]}"
               for body, (code, text, warning) in zip(bodies, answers, strict=True) if code != 201 or warning]
    assert refused == []


@pytest.mark.parametrize("version", COMPUTE_DOMAIN_VERSIONS)
def test_the_crd_refuses_a_compute_domain_without_its_channel_and_a_change_of_its_spec(version: str) -> None:
    body = next(iter(compute_domains().values()))
    channelless = copy.deepcopy(body)
    del channelless["spec"]["channel"]
    changed = {"metadata": {"name": body["metadata"]["name"]}, "spec": {"numNodes": body["spec"]["numNodes"] + 1}}  # a merge patch
    created, missing, updated = asyncio.run(_answers(version, [("POST", "", body), ("POST", "?dryRun=All", channelless | {"metadata": {"name": "other"}}),
                                                               ("PATCH", "", changed)]))
    assert created[0] == 201
    assert missing[0] == 422 and "spec.channel" in missing[1], missing
    assert updated[0] == 422 and "immutable" in updated[1], updated
