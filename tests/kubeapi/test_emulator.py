"""The emulator against kubernetes_asyncio's typed clients: the conventions a real kube-apiserver follows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.rest import ApiException

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.crd import all_crds, crd_for
from nvcre_tui.engine.api import Certification

from . import ApiServer, Fault
from .fixtures import apiserver  # noqa: F401  (fixture)

GUARD = 5.0  # seconds a watch may take before the test fails instead of hanging
CERTS = ("nvcre.nvidia.com", "v1alpha1", "certifications")


@pytest_asyncio.fixture
async def api(apiserver: ApiServer, tmp_path: Any) -> AsyncIterator[client.ApiClient]:  # noqa: F811
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(apiserver.write_kubeconfig(tmp_path / "kubeconfig")),
                                  client_configuration=configuration)
    async with client.ApiClient(configuration) as api_client:
        api_client.user_agent = "emulator-tests/1.0"
        yield api_client


def status_of(error: ApiException) -> dict[str, Any]:
    body = json.loads(error.body)
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == error.status
    return body


async def raw(server: ApiServer, method: str, path: str, body: Any = None, content_type: str = "application/json",
              token: str | None = None) -> tuple[int, Any, dict[str, str]]:
    headers = {"Authorization": f"Bearer {token or server.token}", "Content-Type": content_type}
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    async with aiohttp.ClientSession() as session:
        async with session.request(method, server.url + path, data=data, headers=headers) as answer:
            text = await answer.text()
            try:
                payload: Any = json.loads(text)
            except ValueError:
                payload = text
            return answer.status, payload, dict(answer.headers)


async def watch_lines(server: ApiServer, path: str, count: int | None = None) -> list[dict[str, Any]]:
    """Events of a raw watch request until `count` events or the stream ends."""
    events: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session:
        async with session.get(server.url + path, headers={"Authorization": f"Bearer {server.token}"}) as answer:
            assert answer.status == 200
            async for line in answer.content:
                if line.strip():
                    events.append(json.loads(line))
                    if count is not None and len(events) >= count:
                        break
    return events


async def install_crds(api_client: client.ApiClient) -> None:
    extensions = client.ApiextensionsV1Api(api_client)
    for crd in all_crds():
        await extensions.create_custom_resource_definition(crd)
    await asyncio.sleep(0)  # the emulated apiextensions controller runs on the next loop turn


def certification(name: str, **spec: Any) -> dict[str, Any]:
    body = {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
            "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}
    body.update(spec)
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name},
            "spec": body}


# ------------------------------------------------------------------------------------------- discovery


async def test_discovery_lists_core_groups_and_subresources(api: client.ApiClient) -> None:
    core = await client.CoreApi(api).get_api_versions()
    assert core.versions == ["v1"]
    resources = await client.CoreV1Api(api).get_api_resources()
    names = {r.name: r for r in resources.resources}
    assert names["pods"].namespaced and names["pods"].kind == "Pod"
    assert not names["nodes"].namespaced and "watch" in names["nodes"].verbs
    assert {"nodes/status", "pods/status", "pods/log", "namespaces/finalize"} <= set(names)
    groups = {g.name for g in (await client.ApisApi(api).get_api_versions()).groups}
    assert {"coordination.k8s.io", "rbac.authorization.k8s.io", "apiextensions.k8s.io", "batch"} <= groups
    assert "nvcre.nvidia.com" not in groups
    version = await client.VersionApi(api).get_code()
    assert version.major == "1"


async def test_unknown_resource_is_404_status(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "GET", "/apis/example.com/v1/widgets")
    assert status == 404 and body["reason"] == "NotFound" and body["kind"] == "Status"


async def test_wrong_token_is_401(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "GET", "/api/v1/namespaces", token="wrong")
    assert status == 401 and body["reason"] == "Unauthorized"
    status, text, _ = await raw(apiserver, "GET", "/readyz", token="wrong")
    assert (status, text) == (200, "ok")


# ------------------------------------------------------------------------------------------- objects


async def test_preloaded_namespaces_and_create_metadata(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    names = [n.metadata.name for n in (await core.list_namespace()).items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    created = await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert int(created.metadata.resource_version) > 0
    assert created.metadata.managed_fields[0].manager == "emulator-tests"
    generated = await core.create_namespaced_config_map("default", {"metadata": {"generateName": "gen-"}})
    assert generated.metadata.name.startswith("gen-") and len(generated.metadata.name) == 9


async def test_create_errors_are_statuses(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    with pytest.raises(ApiException) as clash:
        await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    body = status_of(clash.value)
    assert (clash.value.status, body["reason"]) == (409, "AlreadyExists")
    assert body["details"] == {"name": "a", "kind": "configmaps"}
    with pytest.raises(ApiException) as missing_ns:
        await core.create_namespaced_config_map("nowhere", {"metadata": {"name": "a"}})
    assert status_of(missing_ns.value)["message"] == 'namespaces "nowhere" not found'
    with pytest.raises(ApiException) as mismatch:
        await core.create_namespaced_config_map("default", {"metadata": {"name": "b", "namespace": "kube-system"}})
    assert (mismatch.value.status, status_of(mismatch.value)["reason"]) == (400, "BadRequest")
    with pytest.raises(ApiException) as bad_name:
        await core.create_namespaced_config_map("default", {"metadata": {"name": "Bad_Name"}})
    body = status_of(bad_name.value)
    assert bad_name.value.status == 422 and body["details"]["causes"][0]["field"] == "metadata.name"


async def test_update_conflict_on_stale_resource_version(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    first = await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "1"}})
    first.data = {"k": "2"}
    second = await core.replace_namespaced_config_map("a", "default", first)
    assert int(second.metadata.resource_version) > int(first.metadata.resource_version)
    with pytest.raises(ApiException) as stale:
        await core.replace_namespaced_config_map("a", "default", first)
    body = status_of(stale.value)
    assert (stale.value.status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]
    unchanged = await core.replace_namespaced_config_map("a", "default", second)
    assert unchanged.metadata.resource_version == second.metadata.resource_version  # no-op: no new revision


async def test_get_missing_is_not_found_with_details(api: client.ApiClient) -> None:
    with pytest.raises(ApiException) as missing:
        await client.CoordinationV1Api(api).read_namespaced_lease("nope", "default")
    body = status_of(missing.value)
    assert body["message"] == 'leases.coordination.k8s.io "nope" not found'
    assert body["details"] == {"name": "nope", "group": "coordination.k8s.io", "kind": "leases"}


async def test_status_subresource_separates_spec_and_status(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    node = await core.create_node({"metadata": {"name": "n1"}, "status": {"capacity": {"nvidia.com/gpu": "8"}}})
    assert node.status.capacity == {"nvidia.com/gpu": "8"}  # nodes register with their status
    patched = await core.patch_node("n1", {"spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "1"}}})
    assert patched.spec.unschedulable and patched.status.capacity == {"nvidia.com/gpu": "8"}
    status = await core.patch_node_status("n1", {"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Running"}})
    assert status.status.phase == "Running" and not status.metadata.labels


async def test_finalizers_hold_deletion_until_removed(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", {"metadata": {"name": "a", "finalizers": ["example.com/x"]}})
    status, held, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/default/configmaps/a")
    assert status == 200 and held["kind"] == "ConfigMap"  # the real server answers with the object
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(ApiException) as added:
        await core.patch_namespaced_config_map("a", "default", {"metadata": {"finalizers": ["example.com/x", "y.io/z"]}})
    assert added.value.status == 422
    await core.patch_namespaced_config_map("a", "default", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as gone:
        await core.read_namespaced_config_map("a", "default")
    assert gone.value.status == 404


async def test_delete_preconditions_and_answer(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    with pytest.raises(ApiException) as wrong_uid:
        await core.delete_namespaced_config_map("a", "default", body={"preconditions": {"uid": "other"}})
    assert (wrong_uid.value.status, status_of(wrong_uid.value)["reason"]) == (409, "Conflict")
    await core.delete_namespaced_config_map(
        "a", "default", body={"preconditions": {"uid": created.metadata.uid}, "propagationPolicy": "Background"})
    assert (await core.list_namespaced_config_map("default")).items == []


async def test_dry_run_validates_without_storing(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    answer = await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}}, dry_run="All")
    assert answer.metadata.name == "a"
    assert (await core.list_namespaced_config_map("default")).items == []


# ------------------------------------------------------------------------------------------- lists


async def test_list_selectors_and_items_without_type(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for name, labels in (("a", {"tier": "gpu", "rack": "1"}), ("b", {"tier": "gpu"}), ("c", {"tier": "cpu"})):
        await core.create_namespaced_config_map("default", {"metadata": {"name": name, "labels": labels}})
    gpu = await core.list_namespaced_config_map("default", label_selector="tier in (gpu),!rack")
    assert [i.metadata.name for i in gpu.items] == ["b"]
    assert gpu.items[0].kind is None and gpu.kind == "ConfigMapList"  # the real server omits item types
    by_name = await core.list_config_map_for_all_namespaces(field_selector="metadata.name!=a")
    assert [i.metadata.name for i in by_name.items] == ["b", "c"]
    with pytest.raises(ApiException) as unsupported:
        await core.list_namespaced_config_map("default", field_selector="data.k=v")
    assert unsupported.value.status == 400
    assert status_of(unsupported.value)["message"] == "field label not supported: data.k"


async def test_pod_and_node_field_selectors(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for name, node in (("p1", "n1"), ("p2", "n2")):
        await core.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": {
            "nodeName": node, "containers": [{"name": "main", "image": "busybox"}]}})
    on_n1 = await core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1,status.phase=Pending")
    assert [p.metadata.name for p in on_n1.items] == ["p1"]
    await core.create_node({"metadata": {"name": "n1"}})
    await core.create_node({"metadata": {"name": "n2"}, "spec": {"unschedulable": True}})
    schedulable = await core.list_node(field_selector="spec.unschedulable=false")
    assert [n.metadata.name for n in schedulable.items] == ["n1"]


async def test_pagination_is_a_consistent_snapshot(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for index in range(5):
        await core.create_namespaced_config_map("default", {"metadata": {"name": f"cm-{index}"}})
    first = await core.list_namespaced_config_map("default", limit=2)
    assert [i.metadata.name for i in first.items] == ["cm-0", "cm-1"]
    assert first.metadata.remaining_item_count == 3 and first.metadata._continue
    await core.delete_namespaced_config_map("cm-3", "default")
    await core.create_namespaced_config_map("default", {"metadata": {"name": "cm-9"}})
    names, token = [], first.metadata._continue
    while token:
        page = await core.list_namespaced_config_map("default", limit=2, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version
        names += [i.metadata.name for i in page.items]
        token = page.metadata._continue
    assert names == ["cm-2", "cm-3", "cm-4"]  # as of the first page's revision


async def test_expired_continue_is_410(tmp_path: Any) -> None:
    async with ApiServer(history_limit=2) as server:
        core_path = "/api/v1/namespaces/default/configmaps"
        for index in range(3):
            await raw(server, "POST", core_path, {"metadata": {"name": f"cm-{index}"}})
        _, first, _ = await raw(server, "GET", core_path + "?limit=1")
        for index in range(3):
            await raw(server, "PUT", f"{core_path}/cm-{index}", {"metadata": {"name": f"cm-{index}"}, "data": {"x": "1"}})
        status, body, _ = await raw(server, "GET", core_path + "?limit=1&continue=" + first["metadata"]["continue"])
        assert status == 410 and body["reason"] == "Expired"
        assert "continue parameter is too old" in body["message"]


# ------------------------------------------------------------------------------------------- watches


async def test_watch_from_resource_version_and_selector_transitions(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    _, listed, _ = await raw(apiserver, "GET", path)
    rv = listed["metadata"]["resourceVersion"]
    await raw(apiserver, "POST", path, {"metadata": {"name": "a", "labels": {"pick": "yes"}}})
    await raw(apiserver, "PATCH", path + "/a", {"metadata": {"labels": {"pick": "no"}}},
              "application/merge-patch+json")
    await raw(apiserver, "PATCH", path + "/a", {"metadata": {"labels": {"pick": "yes"}}},
              "application/merge-patch+json")
    events = await asyncio.wait_for(watch_lines(
        apiserver, f"{path}?watch=1&resourceVersion={rv}&labelSelector=pick%3Dyes", count=3), GUARD)
    assert [e["type"] for e in events] == ["ADDED", "DELETED", "ADDED"]
    assert all(e["object"]["kind"] == "ConfigMap" and e["object"]["apiVersion"] == "v1" for e in events)
    assert int(events[1]["object"]["metadata"]["resourceVersion"]) > int(events[0]["object"]["metadata"][
        "resourceVersion"])


async def test_watch_without_version_sends_initial_state_then_live(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces"
    task = asyncio.create_task(watch_lines(apiserver, f"{path}?watch=true", count=5))
    await asyncio.sleep(0.05)
    await raw(apiserver, "POST", path, {"metadata": {"name": "team-a"}})
    events = await asyncio.wait_for(task, GUARD)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "default"), ("ADDED", "kube-node-lease"), ("ADDED", "kube-public"), ("ADDED", "kube-system"),
        ("ADDED", "team-a")]


async def test_watch_too_old_is_410_error_event(tmp_path: Any) -> None:
    async with ApiServer(history_limit=2) as server:
        path = "/api/v1/namespaces/default/configmaps"
        for index in range(4):
            await raw(server, "POST", path, {"metadata": {"name": f"cm-{index}"}})
        events = await asyncio.wait_for(watch_lines(server, f"{path}?watch=1&resourceVersion=1"), GUARD)
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
        assert status["message"].startswith("too old resource version: 1")


async def test_watch_bookmarks_and_timeout(tmp_path: Any) -> None:
    async with ApiServer(bookmark_interval=0.05) as server:
        path = "/api/v1/namespaces/default/configmaps"
        events = await asyncio.wait_for(watch_lines(
            server, f"{path}?watch=1&resourceVersion={server.resource_version}&allowWatchBookmarks=true"
                    "&timeoutSeconds=1"), GUARD)
        assert events and {e["type"] for e in events} == {"BOOKMARK"}
        assert events[-1]["object"] == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
            "resourceVersion": str(server.resource_version), "creationTimestamp": None}}


async def test_typed_client_watch_stream(api: client.ApiClient) -> None:
    from kubernetes_asyncio import watch

    core = client.CoreV1Api(api)
    listed = await core.list_namespaced_config_map("default")
    await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    await core.delete_namespaced_config_map("a", "default")
    seen = []
    async with watch.Watch() as stream:
        async for event in stream.stream(core.list_namespaced_config_map, "default", timeout_seconds=2,
                                         resource_version=listed.metadata.resource_version):
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 2:
                break
    assert seen == [("ADDED", "a"), ("DELETED", "a")]


# ------------------------------------------------------------------------------------------- CRDs


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
        _content_type="application/merge-patch+json")
    assert with_status["metadata"]["generation"] == 1
    ignored = await objects.patch_namespaced_custom_object(*CERTS[:2], "default", CERTS[2], "c1",
                                                           {"metadata": {"labels": {"a": "b"}}, "status": None},
                                                           _content_type="application/merge-patch+json")
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
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(crd_for(Certification))
    await asyncio.sleep(0)
    listed = await objects.list_namespaced_custom_object(*CERTS[:2], "default", CERTS[2])
    assert listed["items"] == []


# ------------------------------------------------------------------------------------------- faults


async def test_fault_status_retry_after_and_times(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.faults.add(Fault(method="GET", path=r"/namespaces$", status=429, retry_after=2, times=1))
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as throttled:
        await core.list_namespace()
    assert throttled.value.status == 429 and throttled.value.headers["Retry-After"] == "2"
    assert status_of(throttled.value)["reason"] == "TooManyRequests"
    assert len((await core.list_namespace()).items) == 4  # times=1: the next one passes


async def test_recorded_requests(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.clear_requests()
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    await core.patch_namespaced_config_map("a", "default", {"data": {"k": "v"}})
    await core.list_config_map_for_all_namespaces(label_selector="x=y")
    seen = [(r.verb, r.resource, r.namespace, r.name, r.status) for r in apiserver.requests]
    assert seen == [("create", "configmaps", "default", "", 201), ("patch", "configmaps", "default", "a", 200),
                    ("list", "configmaps", None, "", 200)]
    assert apiserver.requests[1].content_type == "application/strategic-merge-patch+json"
    assert apiserver.requests[2].query["labelSelector"] == "x=y"
    assert apiserver.requests[0].user_agent == "emulator-tests/1.0"


async def test_timestamps_come_from_the_clock(tmp_path: Any) -> None:
    clock = ManualClock()
    async with ApiServer(clock=clock) as server:
        clock.advance(90)
        _, created, _ = await raw(server, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
        assert created["metadata"]["creationTimestamp"] == "2026-01-01T00:01:30Z"


# ------------------------------------------------------------------------------------------- patch types


async def test_json_patch_and_strategic_merge(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]}})
    merged = await core.patch_namespaced_pod("p", "default", {"spec": {"containers": [{"name": "b", "image": "x:2"}]}})
    assert [(c.name, c.image) for c in merged.spec.containers] == [("a", "busybox:1"), ("b", "x:2")]
    deleted = await core.patch_namespaced_pod("p", "default", {"spec": {"containers": [
        {"name": "a", "$patch": "delete"}]}})
    assert [c.name for c in deleted.spec.containers] == ["b"]
    patched = await core.patch_namespaced_pod("p", "default", [
        {"op": "add", "path": "/metadata/labels", "value": {"x": "1"}}])
    assert patched.metadata.labels == {"x": "1"}
    status, body, _ = await raw(apiserver, "PATCH", "/api/v1/namespaces/default/pods/p",
                                [{"op": "test", "path": "/metadata/labels/x", "value": "2"}],
                                "application/json-patch+json")
    assert status == 422 and body["kind"] == "Status"
    status, body, _ = await raw(apiserver, "PATCH", "/api/v1/namespaces/default/pods/p",
                                {"metadata": {"resourceVersion": "1", "labels": {"y": "1"}}},
                                "application/merge-patch+json")
    assert status == 409 and body["reason"] == "Conflict"


async def test_server_side_apply_conflicts_force_and_removal(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps/cfg"
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "labels": {"app": "x"}},
               "data": {"a": "1", "b": "2"}}
    status, body, _ = await raw(apiserver, "PATCH", path, applied, "application/apply-patch+yaml")
    assert status == 400 and "fieldManager is required" in body["message"]
    status, created, _ = await raw(apiserver, "PATCH", path + "?fieldManager=tool", applied,
                                   "application/apply-patch+yaml")
    assert status == 201 and created["data"] == {"a": "1", "b": "2"}
    assert [(m["manager"], m["operation"]) for m in created["metadata"]["managedFields"]] == [("tool", "Apply")]
    await raw(apiserver, "PATCH", path + "?fieldManager=editor", {"data": {"a": "changed"}},
              "application/merge-patch+json")
    status, conflict, _ = await raw(apiserver, "PATCH", path + "?fieldManager=tool", applied,
                                    "application/apply-patch+yaml")
    assert status == 409 and conflict["reason"] == "Conflict"
    assert conflict["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "editor" '
                                              'using v1', "field": ".data.a"}]
    status, forced, _ = await raw(apiserver, "PATCH", path + "?fieldManager=tool&force=true",
                                  dict(applied, data={"a": "1"}), "application/apply-patch+yaml")
    assert status == 200 and forced["data"] == {"a": "1"}  # b was only ours: no longer applied, removed
    assert {m["manager"] for m in forced["metadata"]["managedFields"]} == {"tool"}
    status, same, _ = await raw(apiserver, "PATCH", path + "?fieldManager=tool", dict(applied, data={"a": "1"}),
                                "application/apply-patch+yaml")
    assert same["metadata"]["resourceVersion"] == forced["metadata"]["resourceVersion"]  # no-op apply


async def test_apply_custom_resource_and_dry_run(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    await install_crds(api)
    path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications/c1?fieldManager=nvcre"
    status, body, _ = await raw(apiserver, "PATCH", path + "&dryRun=All", certification("c1"),
                                "application/apply-patch+yaml")
    assert status == 201 and apiserver.objects(*CERTS[::2]) == []
    status, body, _ = await raw(apiserver, "PATCH", path, certification("c1"), "application/apply-patch+yaml")
    assert status == 201 and body["metadata"]["generation"] == 1


# ------------------------------------------------------------------------------------------- CRD schema details


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
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
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
            _content_type="application/merge-patch+json")
    assert immutable.value.status == 422 and "spec is immutable" in status_of(immutable.value)["message"]


async def test_custom_resource_update_needs_resource_version(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    await install_crds(api)
    await client.CustomObjectsApi(api).create_namespaced_custom_object(*CERTS[:2], "default", CERTS[2],
                                                                       certification("c1"))
    status, body, _ = await raw(apiserver, "PUT", "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/"
                                "certifications/c1", certification("c1"))
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.resourceVersion"


# ------------------------------------------------------------------------------------------- namespaces, GC, pods


async def test_namespace_lifecycle(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespace({"metadata": {"name": "team"}})
    await core.create_namespaced_config_map("team", {"metadata": {"name": "a"}})
    status, terminating, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/team")
    assert status == 200 and terminating["status"]["phase"] == "Terminating"
    assert terminating["spec"]["finalizers"] == ["kubernetes"]
    with pytest.raises(ApiException) as refused:
        await core.create_namespaced_config_map("team", {"metadata": {"name": "b"}})
    body = status_of(refused.value)
    assert refused.value.status == 403 and body["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    await core.delete_namespaced_config_map("a", "team")
    await asyncio.sleep(0)
    assert "team" not in [n.metadata.name for n in (await core.list_namespace()).items]
    with pytest.raises(ApiException) as immortal:
        await core.delete_namespace("default")
    assert immortal.value.status == 403


async def test_garbage_collector_background_and_orphan(tmp_path: Any) -> None:
    async with ApiServer(garbage_collector=True) as server:
        path = "/api/v1/namespaces/default/configmaps"
        _, owner, _ = await raw(server, "POST", path, {"metadata": {"name": "owner"}})
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
               "controller": True, "blockOwnerDeletion": True}
        await raw(server, "POST", path, {"metadata": {"name": "child", "ownerReferences": [ref]}})
        await raw(server, "DELETE", path + "/owner")
        for _ in range(3):
            await asyncio.sleep(0)
        assert [o["metadata"]["name"] for o in server.objects("", "configmaps", "default")] == []
        _, owner, _ = await raw(server, "POST", path, {"metadata": {"name": "owner"}})
        ref["uid"] = owner["metadata"]["uid"]
        await raw(server, "POST", path, {"metadata": {"name": "child", "ownerReferences": [ref]}})
        await raw(server, "DELETE", path + "/owner", {"propagationPolicy": "Orphan"})
        for _ in range(3):
            await asyncio.sleep(0)
        left = server.objects("", "configmaps", "default")
        assert [o["metadata"]["name"] for o in left] == ["child"] and "ownerReferences" not in left[0]["metadata"]


async def test_without_garbage_collector_dependents_stay(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    _, owner, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await raw(apiserver, "POST", path, {"metadata": {"name": "child", "ownerReferences": [ref]}})
    await raw(apiserver, "DELETE", path + "/owner")
    await asyncio.sleep(0)
    assert [o["metadata"]["name"] for o in apiserver.objects("", "configmaps", "default")] == ["child"]


async def test_bound_pod_deletes_gracefully_and_log_endpoint(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "busybox"}]}})
    apiserver.set_pod_log("default", "p", "one\ntwo\nthree\n", container="main")
    assert await core.read_namespaced_pod_log("p", "default", container="main", tail_lines=2) == "two\nthree\n"
    with pytest.raises(ApiException) as ambiguous:
        await core.read_namespaced_pod_log("p", "default")
    assert ambiguous.value.status == 400 and "choose one of: [main side]" in status_of(ambiguous.value)["message"]
    _, terminating, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/default/pods/p")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30  # no kubelet here to finish it
    await raw(apiserver, "DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0")
    assert apiserver.objects("", "pods", "default") == []


# ------------------------------------------------------------------------------------------- more faults


async def test_fault_after_commit_stores_the_object(apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.faults.add(Fault(method="POST", path="configmaps", status=503, retry_after=1, after_commit=True,
                               times=1))
    status, body, headers = await raw(apiserver, "POST", "/api/v1/namespaces/default/configmaps",
                                      {"metadata": {"name": "a"}})
    assert status == 503 and body["reason"] == "ServiceUnavailable" and headers["Retry-After"] == "1"
    assert [o["metadata"]["name"] for o in apiserver.objects("", "configmaps", "default")] == ["a"]
    status, body, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    assert status == 409 and body["reason"] == "AlreadyExists"


async def test_fault_reset_connection_and_dropped_watch(apiserver: ApiServer) -> None:  # noqa: F811
    # POST: aiohttp itself retries an idempotent request once on a reset connection
    apiserver.faults.add(Fault(method="POST", reset_connection=True, times=1))
    with pytest.raises(aiohttp.ClientError):
        await raw(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    assert apiserver.objects("", "configmaps") == []
    apiserver.faults.add(Fault(query="watch=", drop_stream_after=2, times=1))
    events: list[Any] = []
    with pytest.raises(aiohttp.ClientError):
        await asyncio.wait_for(_collect(apiserver, "/api/v1/namespaces?watch=1", events), GUARD)
    assert len(events) == 2 and events[0]["type"] == "ADDED"


async def _collect(server: ApiServer, path: str, into: list[Any]) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(server.url + path, headers={"Authorization": f"Bearer {server.token}"}) as answer:
            async for line in answer.content:
                if line.strip():
                    into.append(json.loads(line))


async def test_send_initial_events_ends_with_marked_bookmark(apiserver: ApiServer) -> None:  # noqa: F811
    events = await asyncio.wait_for(watch_lines(
        apiserver, "/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                   "&allowWatchBookmarks=true", count=5), GUARD)
    assert [e["type"] for e in events] == ["ADDED"] * 4 + ["BOOKMARK"]
    assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_lease_round_trip_with_micro_time(api: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(api)
    made = await leases.create_namespaced_lease("kube-node-lease", {"metadata": {"name": "l"}, "spec": {
        "holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2026-01-01T00:00:00.000000Z"}})
    assert made.spec.holder_identity == "me" and made.spec.renew_time.year == 2026


async def test_field_validation_warns_or_refuses_unknown_fields(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    await install_crds(api)
    path = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications"
    status, _, headers = await raw(apiserver, "POST", path, certification("c1", bogus=1))
    assert status == 201 and headers["Warning"] == '299 - "unknown field \\"spec.bogus\\""'
    status, body, _ = await raw(apiserver, "POST", path + "?fieldValidation=Strict", certification("c2", bogus=1))
    assert status == 400 and body["message"] == 'strict decoding error: unknown field "spec.bogus"'


async def test_watch_from_a_future_version_is_too_large(apiserver: ApiServer) -> None:  # noqa: F811
    events = await asyncio.wait_for(watch_lines(
        apiserver, f"/api/v1/namespaces?watch=1&resourceVersion={apiserver.resource_version + 100}"), GUARD)
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in events] == [("ERROR", 504, "Timeout")]


async def test_garbage_collector_cascades_through_levels_before_the_answer_is_read(tmp_path: Any) -> None:
    async with ApiServer(garbage_collector=True) as server:
        path = "/api/v1/namespaces/default/configmaps"
        _, parent, _ = await raw(server, "POST", path, {"metadata": {"name": "level-0"}})
        for level in range(1, 4):
            ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": parent["metadata"]["name"],
                   "uid": parent["metadata"]["uid"]}
            _, parent, _ = await raw(server, "POST", path, {"metadata": {"name": f"level-{level}",
                                                                         "ownerReferences": [ref]}})
        await raw(server, "DELETE", path + "/level-0")
        _, listed, _ = await raw(server, "GET", path)
        assert listed["items"] == []


async def test_foreground_deletion_waits_for_dependents(tmp_path: Any) -> None:
    async with ApiServer(garbage_collector=True) as server:
        path = "/api/v1/namespaces/default/configmaps"
        _, owner, _ = await raw(server, "POST", path, {"metadata": {"name": "owner"}})
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
               "blockOwnerDeletion": True}
        await raw(server, "POST", path, {"metadata": {"name": "child", "ownerReferences": [ref],
                                                      "finalizers": ["example.com/hold"]}})
        _, deleting, _ = await raw(server, "DELETE", path + "/owner", {"propagationPolicy": "Foreground"})
        assert deleting["metadata"]["finalizers"] == ["foregroundDeletion"]
        _, listed, _ = await raw(server, "GET", path)
        assert [i["metadata"]["name"] for i in listed["items"]] == ["child", "owner"]
        await raw(server, "PATCH", path + "/child", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        _, listed, _ = await raw(server, "GET", path)
        assert listed["items"] == []


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
    await client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    await asyncio.sleep(0)
    made = await client.CustomObjectsApi(api).create_namespaced_custom_object("example.com", "v1", "default", "gadgets", {
        "apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"name": "Y"}})
    assert made["spec"] == {"name": "Y"} and "self.name.lowerAscii() == 'x'" in SKIPPED_RULES


# ------------------------------------------------------------------------------------------- RBAC


async def test_rbac_judges_other_users_by_stored_roles(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    rbac = client.RbacAuthorizationV1Api(api)
    await rbac.create_cluster_role({"metadata": {"name": "system:node-reader"}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]})
    await rbac.create_cluster_role_binding({"metadata": {"name": "engine-reads-nodes"},
                                            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                        "name": "system:node-reader"},
                                            "subjects": [{"kind": "ServiceAccount", "name": "engine",
                                                          "namespace": "nvcre-system"}]})
    await rbac.create_namespaced_role("default", {"metadata": {"name": "cm-writer"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]})
    await rbac.create_namespaced_role_binding("default", {
        "metadata": {"name": "engine-writes-cms"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "engine", "namespace": "nvcre-system"}]})
    token = apiserver.service_account_token("nvcre-system", "engine")
    assert (await raw(apiserver, "GET", "/api/v1/nodes", token=token))[0] == 200
    assert (await raw(apiserver, "GET", "/apis", token=token))[0] == 200  # discovery is public
    assert (await raw(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}},
                      token=token))[0] == 201
    status, body, _ = await raw(apiserver, "PATCH", "/api/v1/nodes/n1", {"spec": {}}, "application/merge-patch+json",
                                token=token)
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == ('nodes "n1" is forbidden: User "system:serviceaccount:nvcre-system:engine" cannot '
                               'patch resource "nodes" in API group "" at the cluster scope')
    status, body, _ = await raw(apiserver, "POST", "/api/v1/namespaces/kube-system/configmaps",
                                {"metadata": {"name": "a"}}, token=token)
    assert status == 403 and body["message"].endswith('cannot create resource "configmaps" in API group "" in the '
                                                      'namespace "kube-system"')
    assert apiserver.requests[-1].user == "system:serviceaccount:nvcre-system:engine"
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
        "user": "system:serviceaccount:nvcre-system:engine", "resourceAttributes": {
            "verb": "get", "resource": "pods", "subresource": "log", "namespace": "default", "name": "p"}}}
    answer = await client.AuthorizationV1Api(api).create_subject_access_review(review)
    assert answer.status.allowed is True
    status, body, _ = await raw(apiserver, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}, token=token)
    assert status == 201 and body["status"]["allowed"] is False


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


async def test_bootstrap_objects_and_immutable_configmaps(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    service = await core.read_namespaced_service("kubernetes", "default")
    assert service.spec.cluster_ip == "10.0.0.1" and service.spec.ports[0].port == 443
    binding = await client.RbacAuthorizationV1Api(api).read_cluster_role_binding("cluster-admin")
    assert binding.subjects[0].name == "system:masters"
    await core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"},
                                                        "immutable": True})
    with pytest.raises(ApiException) as frozen:
        await core.patch_namespaced_config_map("a", "default", {"data": {"k": "w"}})
    assert frozen.value.status == 422 and status_of(frozen.value)["details"]["causes"][0]["field"] == "data"
    labelled = await core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.labels == {"x": "y"}
    deployments = await client.AppsV1Api(api).list_namespaced_deployment("default")
    assert deployments.items == []


async def test_a_client_leaving_ends_its_watch(apiserver: ApiServer) -> None:  # noqa: F811
    await asyncio.wait_for(watch_lines(apiserver, "/api/v1/namespaces?watch=1", count=1), GUARD)
    bucket = apiserver.storage.bucket("/namespaces")
    for _ in range(100):  # the server notices the closed socket within a few loop turns
        if not bucket.watchers:
            break
        await asyncio.sleep(0.01)
    assert not bucket.watchers


async def test_https_with_client_certificates_and_tokens(tmp_path: Any) -> None:
    async with ApiServer(tls=True) as server:
        assert server.url.startswith("https://127.0.0.1:")
        viewer = server.client_certificate("jane", ("viewers",))
        admin = server.client_certificate("root", ("system:masters",))
        for name, identity in (("admin", admin), ("jane", viewer), ("token", None)):
            configuration = client.Configuration()
            path = server.write_kubeconfig(tmp_path / name, client_certificate=identity)
            await config.load_kube_config(config_file=str(path), client_configuration=configuration)
            async with client.ApiClient(configuration) as api_client:
                core = client.CoreV1Api(api_client)
                if name == "jane":
                    with pytest.raises(ApiException) as denied:
                        await core.list_namespace()
                    message = status_of(denied.value)["message"]
                    assert denied.value.status == 403 and 'User "jane" cannot list resource "namespaces"' in message
                else:
                    assert len((await core.list_namespace()).items) == 4
        assert [r.user for r in server.requests] == ["root", "jane", "admin"]


async def test_watch_list_options_and_legacy_single_object_watch(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "GET", "/api/v1/namespaces?watch=1&sendInitialEvents=true")
    assert status == 422 and {c["field"] for c in body["details"]["causes"]} == {"sendInitialEvents",
                                                                                  "allowWatchBookmarks"}
    task = asyncio.create_task(watch_lines(apiserver, "/api/v1/namespaces?watch=1&sendInitialEvents=false", count=1))
    await asyncio.sleep(0.05)
    await raw(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "fresh"}})
    assert [e["object"]["metadata"]["name"] for e in await asyncio.wait_for(task, GUARD)] == ["fresh"]
    events = await asyncio.wait_for(watch_lines(apiserver, "/api/v1/watch/namespaces/kube-system", count=1), GUARD)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "kube-system")]
    assert apiserver.requests[-1].verb == "watch" and apiserver.requests[-1].name == "kube-system"


async def test_size_limits_of_apiserver_and_etcd(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "big"}, "data": {"k": "x" * 1_100_000}})
    assert status == 422 and body["details"]["causes"][0]["message"] == "Too long: must have at most 1048576 bytes"
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "huge"}, "data": {"k": "x" * 3_200_000}})
    assert status == 413 and body["reason"] == "RequestEntityTooLarge"
    await install_crds(api)
    certs = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications"
    await raw(apiserver, "POST", certs, certification("c1"))
    status, body, _ = await raw(apiserver, "PATCH", certs + "/c1/status", {"status": {"startTime": "x" * 1_600_000}},
                                "application/merge-patch+json")
    assert (status, body["message"]) == (500, "etcdserver: request is too large") and "reason" not in body
