"""The emulator's CustomResourceDefinitions: serving, pruning, defaults, validation, CEL rules, printing."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from nvcre_tui.engine.api.crd import all_crds, crd_for
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.clock import ManualClock

from . import ApiServer
from .clientkit import CERTS, MERGE_PATCH, certification, install_crds, manifest, raw, status_of
from .fixtures import api, apiserver  # noqa: F401  (fixtures)


async def test_crds_are_served_once_established(api: client.ApiClient) -> None:
    await install_crds(api)
    crd = await client.ApiextensionsV1Api(api).read_custom_resource_definition("certifications.nvcre.nvidia.com")
    conditions = {c.type: c.status for c in crd.status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    resources = await client.CustomObjectsApi(api).get_api_resources("nvcre.nvidia.com", "v1alpha1")
    assert {"certifications", "certifications/status", "workflows", "jobs", "workloadruns"} <= {
        r.name for r in resources.resources}
    objects = client.CustomObjectsApi(api)
    created = await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    assert created["metadata"]["generation"] == 1 and "status" not in created
    listed = await objects.list_namespaced_custom_object(*CERTS[:2], "default", CERTS[2])
    assert listed["items"][0]["kind"] == "Certification"  # custom resource items keep their type


async def test_crd_pruning_and_validation(api: client.ApiClient) -> None:
    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    body = certification("c1", unknownField={"x": 1})
    created = await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], body)
    assert "unknownField" not in created["spec"]
    with pytest.raises(ApiException) as invalid:
        await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], {
            "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "c2"},
            "spec": {"categories": "not-a-list"}})
    body = status_of(invalid.value)
    assert invalid.value.status == 422 and body["reason"] == "Invalid"
    causes = {(c["field"], c["reason"]) for c in body["details"]["causes"]}
    assert ("spec.target", "FieldValueRequired") in causes
    assert ("spec.categories", "FieldValueTypeInvalid") in causes


async def test_crd_status_subresource_and_generation(api: client.ApiClient) -> None:
    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    with_status = await objects.patch_namespaced_custom_object_status(
        *CERTS[:2], "default", CERTS[2], "c1", {"status": {"observedGeneration": 1}},
        **MERGE_PATCH)
    assert with_status["metadata"]["generation"] == 1
    ignored = await objects.patch_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], "c1",
                                                           {"metadata": {"labels": {"a": "b"}}, "status": None},
                                                           **MERGE_PATCH)
    assert ignored["status"] == with_status["status"] and ignored["metadata"]["generation"] == 1


async def test_crd_rejects_strategic_merge_patch(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    await install_crds(api)
    await client.CustomObjectsApi(api).create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2],
                                                                       certification("c1"))
    status, body, _ = await raw(apiserver, "PATCH", "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/"
                                "certifications/c1", {"metadata": {"labels": {"a": "b"}}},
                                "application/strategic-merge-patch+json")
    assert status == 415 and body["reason"] == "UnsupportedMediaType"


async def test_deleting_a_crd_removes_its_objects_and_stops_serving(apiserver: ApiServer,  # noqa: F811
                                                                    api: client.ApiClient) -> None:
    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    await client.ApiextensionsV1Api(api).delete_custom_resource_definition("certifications.nvcre.nvidia.com")
    for _ in range(5):
        await asyncio.sleep(0)
    status, _, _ = await raw(apiserver, "GET", "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications")
    assert status == 404
    assert apiserver.objects("nvcre.nvidia.com", "certifications") == []
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(crd_for(Certification)))
    await asyncio.sleep(0)
    listed = await objects.list_namespaced_custom_object(*CERTS[:2], "default", CERTS[2])
    assert listed["items"] == []


async def test_apply_custom_resource_and_dry_run(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    await install_crds(api)
    path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications/c1?fieldManager=nvcre"
    status, body, _ = await raw(apiserver, "PATCH", path + "&dryRun=All", certification("c1"),
                                "application/apply-patch+yaml")
    assert status == 201 and apiserver.objects(*CERTS[::2]) == []
    status, body, _ = await raw(apiserver, "PATCH", path, certification("c1"), "application/apply-patch+yaml")
    assert status == 201 and body["metadata"]["generation"] == 1


async def test_crd_defaults_rules_and_printer_columns(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                                                "jsonPath": ".spec.size"}],
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "x-kubernetes-validations": [
                                          {"rule": "self.size <= 10 || self.color == 'red'",
                                           "message": "big widgets are red"}],
                                          "properties": {
                                              "size": {"type": "integer", "minimum": 1, "default": 3},
                                              "since": {"type": "string", "format": "date-time"},
                                              "color": {"type": "string", "enum": ["red", "blue"]},
                                              "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                          }}}}}}]}}
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(crd))
    await asyncio.sleep(0)
    objects = client.CustomObjectsApi(api)
    made = await objects.create_cluster_custom_object("example.com", "v1", "widgets", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"color": "blue", "extra": {"anything": {"goes": 1}}, "dropped": True}})
    assert made["spec"] == {"color": "blue", "size": 3, "extra": {"anything": {"goes": 1}}}
    with pytest.raises(ApiException) as invalid:
        await objects.create_cluster_custom_object("example.com", "v1", "widgets", {
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "v"},
            "spec": {"color": "green", "size": 0, "since": "yesterday"}})
    causes = {c["field"]: c for c in status_of(invalid.value)["details"]["causes"]}
    assert causes["spec.since"]["message"] == ('Invalid value: "yesterday": spec.since in body must be of type '
                                               'date-time: "yesterday"')
    assert causes["spec.color"]["reason"] == "FieldValueNotSupported"
    assert causes["spec.size"]["message"] == "Invalid value: 0: spec.size in body should be greater than or equal to 1"
    with pytest.raises(ApiException) as rule:
        await objects.create_cluster_custom_object("example.com", "v1", "widgets", {
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "big"},
            "spec": {"color": "blue", "size": 20}})
    assert "big widgets are red" in status_of(rule.value)["message"]
    served = apiserver.resource("example.com", "v1", "widgets")
    assert served is not None and served.printer_columns[0]["jsonPath"] == ".spec.size" and not served.namespaced


async def test_immutable_spec_rule_of_our_crds(api: client.ApiClient) -> None:
    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    with pytest.raises(ApiException) as immutable:
        await objects.patch_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], "c1", {
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}},
            **MERGE_PATCH)
    assert immutable.value.status == 422 and "spec is immutable" in status_of(immutable.value)["message"]


async def test_custom_resource_update_needs_resource_version(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    await install_crds(api)
    await client.CustomObjectsApi(api).create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2],
                                                                       certification("c1"))
    status, body, _ = await raw(apiserver, "PUT", "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/"
                                "certifications/c1", certification("c1"))
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.resourceVersion"


async def test_field_validation_warns_or_refuses_unknown_fields(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    await install_crds(api)
    path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications"
    status, _, headers = await raw(apiserver, "POST", path, certification("c1", bogus=1))
    assert status == 201 and headers["Warning"] == '299 - "unknown field \\"spec.bogus\\""'
    status, body, _ = await raw(apiserver, "POST", path + "?fieldValidation=Strict", certification("c2", bogus=1))
    assert status == 400 and body["message"] == 'strict decoding error: unknown field "spec.bogus"'


async def test_rules_with_unknown_cel_functions_are_skipped(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    from .schema import SKIPPED_RULES

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {
                            "type": "object", "x-kubernetes-validations": [{"rule": "self.name.lowerAscii() == 'x'"}],
                            "properties": {"name": {"type": "string"}}}}}}}]}}
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(crd))
    await asyncio.sleep(0)
    made = await client.CustomObjectsApi(api).create_namespaced_custom_object("example.com", "v1", "default", "gadgets", {
        "apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"name": "Y"}})
    assert made["spec"] == {"name": "Y"} and "self.name.lowerAscii() == 'x'" in SKIPPED_RULES


async def test_table_printing_uses_printer_columns(tmp_path: Any) -> None:
    clock = ManualClock()
    async with ApiServer(clock=clock) as server:
        for crd in all_crds():
            await raw(server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        await asyncio.sleep(0)
        path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications"
        await raw(server, "POST", path, certification("c1"))
        condition = {"reason": "R", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        await raw(server, "PATCH", path + "/c1/status", {"status": {"conditions": [
            dict(condition, type="Failed", status="False"), dict(condition, type="InProgress", status="True")]}},
            "application/merge-patch+json")
        clock.advance(330)
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + path, headers={
                    "Authorization": f"Bearer {server.token}",
                    "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}) as answer:
                table = await answer.json()
    assert table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:2] == ["Name", "Status"] and names[-1] == "Age"
    cells = dict(zip(names, table["rows"][0]["cells"]))
    assert cells["Name"] == "c1" and cells["Status"] == "InProgress" and cells["Age"] == "5m30s"
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_jsonpath_forms_of_printer_columns() -> None:
    from .table import jsonpath

    obj = {"status": {"conditions": [{"type": "A", "status": "False"}, {"type": "B", "status": "True"}]},
           "spec": {"n": 3, "list": [1, 2]}}
    assert jsonpath(obj, '.status.conditions[?(@.status=="True")].type') == ["B"]
    assert jsonpath(obj, ".status.conditions[*].type") == ["A", "B"]
    assert jsonpath(obj, ".spec.list[1]") == [2] and jsonpath(obj, "{.spec.n}") == [3]
    assert jsonpath(obj, ".spec.missing") == []


async def test_several_served_versions_share_objects(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "things.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                                 {"name": "v1beta1", "served": True, "storage": False, "schema": schema}]}}
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(crd))
    await asyncio.sleep(0)
    _, group, _ = await raw(apiserver, "GET", "/apis/example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"] and group["preferredVersion"]["version"] == "v1"
    await raw(apiserver, "POST", "/apis/example.com/v1beta1/namespaces/default/things", {
        "apiVersion": "example.com/v1beta1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"a": 1}})
    _, seen, _ = await raw(apiserver, "GET", "/apis/example.com/v1/namespaces/default/things/t")
    assert seen["apiVersion"] == "example.com/v1" and seen["spec"] == {"a": 1}
    status, body, _ = await raw(apiserver, "POST", "/apis/example.com/v1/namespaces/nowhere/things", {
        "apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})
    assert status == 404 and body["message"] == 'namespaces "nowhere" not found'


async def test_invalid_crd_is_refused(api: client.ApiClient) -> None:
    with pytest.raises(ApiException) as refused:
        await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "wrong.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}))
    fields = {c["field"] for c in status_of(refused.value)["details"]["causes"]}
    assert fields == {"metadata.name", "spec.versions[0].schema.openAPIV3Schema"}


async def test_a_v1_crd_cannot_turn_pruning_off(api: client.ApiClient) -> None:
    """spec.preserveUnknownFields: true is v1beta1's legacy; a v1 CRD keeps unknown fields only through
    x-kubernetes-preserve-unknown-fields in its schema (it was accepted, and its objects pruned anyway)."""
    with pytest.raises(ApiException) as refused:
        await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
                     "preserveUnknownFields": True,
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
    assert refused.value.status == 422
    assert [(c["field"], c["message"]) for c in status_of(refused.value)["details"]["causes"]] == [
        ("spec.preserveUnknownFields", "Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true "
                                       "in spec.versions[*].schema instead")]


async def test_custom_object_watch_through_the_typed_client(api: client.ApiClient) -> None:
    from kubernetes_asyncio import watch

    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    listed = await objects.list_namespaced_custom_object(*CERTS[:2], "default", CERTS[2])
    await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    seen = []
    async with watch.Watch() as stream:
        async for event in stream.stream(objects.list_namespaced_custom_object, *CERTS[:2], "default", CERTS[2],
                                         resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=2):
            seen.append((event["type"], event["object"]["metadata"]["name"], event["object"]["kind"]))
            break
    assert seen == [("ADDED", "c1", "Certification")]


async def test_selectable_fields_and_list_map_apply(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "racks.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "racks", "kind": "Rack"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "selectableFields": [{"jsonPath": ".spec.zone"}],
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                                      "type": "object", "properties": {
                                          "zone": {"type": "string"},
                                          "slots": {"type": "array", "x-kubernetes-list-type": "map",
                                                    "x-kubernetes-list-map-keys": ["id"],
                                                    "items": {"type": "object", "required": ["id"], "properties": {
                                                        "id": {"type": "integer"}, "node": {"type": "string"}}}}}}}}}}]}}
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(crd))
    await asyncio.sleep(0)
    path = "/apis/example.com/v1/racks"
    apply = "application/apply-patch+yaml"
    rack = {"apiVersion": "example.com/v1", "kind": "Rack", "metadata": {"name": "r1"}}
    await raw(apiserver, "PATCH", path + "/r1?fieldManager=a", dict(rack, spec={"zone": "east", "slots": [
        {"id": 1, "node": "n1"}]}), apply)
    status, both, _ = await raw(apiserver, "PATCH", path + "/r1?fieldManager=b", dict(rack, spec={"slots": [
        {"id": 2, "node": "n2"}]}), apply)
    assert status == 200 and both["spec"]["slots"] == [{"id": 1, "node": "n1"}, {"id": 2, "node": "n2"}]
    status, duplicate, _ = await raw(apiserver, "PATCH", path + "/r1", {"spec": {"slots": [
        {"id": 3}, {"id": 3}]}}, "application/merge-patch+json")
    assert status == 422 and duplicate["details"]["causes"][0]["reason"] == "FieldValueDuplicate"
    _, east, _ = await raw(apiserver, "GET", path + "?fieldSelector=spec.zone%3Deast")
    assert [i["metadata"]["name"] for i in east["items"]] == ["r1"]
    status, _, _ = await raw(apiserver, "GET", path + "?fieldSelector=spec.color%3Dred")
    assert status == 400


@pytest.mark.parametrize(("path", "valid"), [(".spec.zone", True), (".metadata.name", False), (".spec.nope", False), ("spec", False)])
async def test_a_rule_field_path_must_name_a_declared_property(api: client.ApiClient, path: str, valid: bool) -> None:
    """As apiextensions' pathValid: a root rule's fieldPath `.metadata.name` is refused (the root's metadata declares
    no properties), which a real server does and nvcre's Certification CRD once tripped over."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "racks.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "racks", "kind": "Rack"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-validations": [{"rule": "true", "fieldPath": path}],
                        "properties": {"metadata": {"type": "object"},
                                       "spec": {"type": "object", "properties": {"zone": {"type": "string"}}}}}}}]}}
    extensions = client.ApiextensionsV1Api(api)
    if valid:
        await extensions.create_custom_resource_definition(manifest(crd))
        return
    with pytest.raises(ApiException) as refused:
        await extensions.create_custom_resource_definition(manifest(crd))
    [cause] = status_of(refused.value)["details"]["causes"]
    assert cause["field"] == "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].fieldPath"
    assert "fieldPath must be a valid path" in cause["message"]


def _rack_crd(pattern: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "racks.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "racks", "kind": "Rack"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {"type": "object", "properties": {
                             "zone": {"type": "string", "pattern": pattern}}}}}}}]}}


@pytest.mark.parametrize("pattern", ["^(?!kube-)[a-z]+$", r"^(a)\1$", r"^[a-z]+\Z", "^a*+$", r"^\C$"])
async def test_a_pattern_go_cannot_compile_refuses_the_crd(api: client.ApiClient, pattern: str) -> None:
    """ValidateStructural compiles every pattern with Go's regexp (RE2): Python's re takes each of these."""
    with pytest.raises(ApiException) as refused:
        await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(_rack_crd(pattern)))
    [cause] = status_of(refused.value)["details"]["causes"]
    assert cause["field"] == "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[zone].pattern"
    assert "must be a valid regular expression, but isn't: error parsing regexp: " in cause["message"]


async def test_patterns_match_as_go_does(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    """`$` is the end of the text (Python's re also takes it before a final newline) and \\d is ASCII only."""
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(manifest(_rack_crd(r"^[a-z]+\d$")))
    await asyncio.sleep(0)
    rack = {"apiVersion": "example.com/v1", "kind": "Rack", "metadata": {"name": "r"}}
    statuses: dict[str, int] = {}
    for zone in ("east1", "east1\n", "east\u0663"):
        statuses[zone], _, _ = await raw(apiserver, "POST", "/apis/example.com/v1/racks",
                                         dict(rack, metadata={"name": f"r{len(statuses)}"}, spec={"zone": zone}))
    assert statuses == {"east1": 201, "east1\n": 422, "east\u0663": 422}


def _workload_run(name: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": name},
            "spec": {"image": "nvcr.io/nccl:1", "numNodes": 2, "framework": {"mpi": {"binary": "all_reduce_perf"}},
                     "config": config}}


async def test_immutable_spec_sees_a_renamed_key_of_a_raw_object(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    """A raw object (config, tolerations, ...) is a map of any values in the CRD: the server's CEL equality compares
    every key of a map, where a bare preserve-unknown object let `self == oldSelf` pass a renamed key."""
    await install_crds(api)
    path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/workloadruns"
    status, _, _ = await raw(apiserver, "POST", path, _workload_run("w", {"learningRate": 1, "steps": None}))
    assert status == 201
    for config in ({"lr": 1, "steps": None}, {"learningRate": 1, "steps": 2}, {"learningRate": 1}):
        status, body, _ = await raw(apiserver, "PATCH", path + "/w", {"spec": {"config": None}},
                                    "application/merge-patch+json")
        assert status == 422 and "spec is immutable" in body["message"], config  # dropping it is a change too
        _, current, _ = await raw(apiserver, "GET", path + "/w")
        assert current["spec"]["config"] == {"learningRate": 1, "steps": None}  # a null value is kept (nullable)
        current["spec"]["config"] = config
        status, body, _ = await raw(apiserver, "PUT", path + "/w", current)
        assert status == 422 and "spec is immutable" in body["message"], config


def test_cel_equality_is_the_servers() -> None:
    """self == oldSelf as apiserver's unstructured values compute it: an undeclared key is compared only if the other
    object has it (a rename with as many keys is equal there), a map's keys are all compared."""
    from .schema import cel_equal

    bare = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    open_map = {"type": "object", "additionalProperties": {"x-kubernetes-preserve-unknown-fields": True, "nullable": True}}
    typed = {"type": "object", "properties": {"a": {"type": "integer"}, "n": {"type": "number"}}}
    assert cel_equal({"a": 1}, {"b": 1}, bare)  # the server's blind spot
    assert not cel_equal({"a": 1}, {"a": 2}, bare) and not cel_equal({"a": 1}, {"a": 1, "b": 1}, bare)
    assert not cel_equal({"a": 1}, {"b": 1}, open_map) and cel_equal({"a": None}, {"a": None}, open_map)
    assert not cel_equal({"a": 1}, {"a": 1.0}, open_map)  # untyped values compare as decoded JSON
    assert not cel_equal({"a": 1}, {"n": 1}, typed) and cel_equal({"n": 1}, {"n": 1.0}, typed)
    with_extra = {**typed, "x-kubernetes-preserve-unknown-fields": True}
    assert cel_equal({"a": 1, "x": 1}, {"a": 1, "y": 1}, with_extra)  # a declared key beside undeclared ones
    listed = {"type": "array", "items": bare}
    assert cel_equal([{"a": 1}], [{"b": 1}], listed) and not cel_equal([{"a": 1}, {}], [{}, {"a": 1}], listed)


async def test_objects_read_back_pruned_by_the_schema_of_an_updated_crd(api: client.ApiClient) -> None:
    """As the real server decodes from etcd: a field the CRD's new schema no longer has is gone from every read of the
    objects written before (an upgrade that dropped a field), not kept until the object is next written."""
    await install_crds(api)
    objects = client.CustomObjectsApi(api)
    await objects.create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], certification("c1"))
    before = await objects.get_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], "c1")
    assert "target" in before["spec"]
    extensions = client.ApiextensionsV1Api(api)
    crd = await extensions.read_custom_resource_definition("certifications.nvcre.nvidia.com")
    body = api.sanitize_for_serialization(crd)
    spec_schema = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec_schema["properties"]["target"]
    spec_schema["required"] = [name for name in spec_schema.get("required") or [] if name != "target"]
    await extensions.replace_custom_resource_definition("certifications.nvcre.nvidia.com", body)
    await asyncio.sleep(0.05)  # the CRD controller serves the new schema
    after = await objects.get_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], "c1")
    assert "target" not in after["spec"] and after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    listed = await objects.list_namespaced_custom_object(*CERTS[:2], "default", CERTS[2])
    assert "target" not in listed["items"][0]["spec"]
