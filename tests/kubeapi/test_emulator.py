"""The emulator against kubernetes_asyncio's typed clients: discovery, objects, lists, watches."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from nvcre_tui.engine.clock import ManualClock

from . import ApiServer
from .clientkit import GUARD, manifest, raw, status_of, watch_lines
from .fixtures import api, apiserver  # noqa: F401  (fixtures)


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


async def test_preloaded_namespaces_and_create_metadata(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    names = [n.metadata.name for n in (await core.list_namespace()).items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    created = await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"},
                                                                           "data": {"k": "v"}}))
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert int(created.metadata.resource_version) > 0
    assert created.metadata.managed_fields[0].manager == "emulator-tests"
    generated = await core.create_namespaced_config_map("default", manifest({"metadata": {"generateName": "gen-"}}))
    assert generated.metadata.name.startswith("gen-") and len(generated.metadata.name) == 9


async def test_create_errors_are_statuses(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}))
    with pytest.raises(ApiException) as clash:
        await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}))
    body = status_of(clash.value)
    assert (clash.value.status, body["reason"]) == (409, "AlreadyExists")
    assert body["details"] == {"name": "a", "kind": "configmaps"}
    with pytest.raises(ApiException) as missing_ns:
        await core.create_namespaced_config_map("nowhere", manifest({"metadata": {"name": "a"}}))
    assert status_of(missing_ns.value)["message"] == 'namespaces "nowhere" not found'
    with pytest.raises(ApiException) as mismatch:
        await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "b",
                                                                                  "namespace": "kube-system"}}))
    assert (mismatch.value.status, status_of(mismatch.value)["reason"]) == (400, "BadRequest")
    with pytest.raises(ApiException) as bad_name:
        await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "Bad_Name"}}))
    body = status_of(bad_name.value)
    assert bad_name.value.status == 422 and body["details"]["causes"][0]["field"] == "metadata.name"


async def test_update_conflict_on_stale_resource_version(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    first = await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"},
                                                                         "data": {"k": "1"}}))
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
    node = await core.create_node(manifest({"metadata": {"name": "n1"},
                                            "status": {"capacity": {"nvidia.com/gpu": "8"}}}))
    assert node.status.capacity == {"nvidia.com/gpu": "8"}  # nodes register with their status
    patched = await core.patch_node("n1", {"spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "1"}}})
    assert patched.spec.unschedulable and patched.status.capacity == {"nvidia.com/gpu": "8"}
    status = await core.patch_node_status("n1", {"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Running"}})
    assert status.status.phase == "Running" and not status.metadata.labels


async def test_dry_run_validates_without_storing(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    answer = await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}), dry_run="All")
    assert answer.metadata.name == "a"
    assert (await core.list_namespaced_config_map("default")).items == []


async def test_list_selectors_and_items_without_type(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for name, labels in (("a", {"tier": "gpu", "rack": "1"}), ("b", {"tier": "gpu"}), ("c", {"tier": "cpu"})):
        await core.create_namespaced_config_map("default", manifest({"metadata": {"name": name, "labels": labels}}))
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
        await core.create_namespaced_pod("default", manifest({"metadata": {"name": name}, "spec": {
            "nodeName": node, "containers": [{"name": "main", "image": "busybox"}]}}))
    on_n1 = await core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1,status.phase=Pending")
    assert [p.metadata.name for p in on_n1.items] == ["p1"]
    await core.create_node(manifest({"metadata": {"name": "n1"}}))
    await core.create_node(manifest({"metadata": {"name": "n2"}, "spec": {"unschedulable": True}}))
    schedulable = await core.list_node(field_selector="spec.unschedulable=false")
    assert [n.metadata.name for n in schedulable.items] == ["n1"]


async def test_pagination_is_a_consistent_snapshot(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for index in range(5):
        await core.create_namespaced_config_map("default", manifest({"metadata": {"name": f"cm-{index}"}}))
    first = await core.list_namespaced_config_map("default", limit=2)
    assert [i.metadata.name for i in first.items] == ["cm-0", "cm-1"]
    assert first.metadata.remaining_item_count == 3 and first.metadata._continue
    await core.delete_namespaced_config_map("cm-3", "default")
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "cm-9"}}))
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
        # As the real server (etcd3 store's handleCompactedErrorForPaging): a token in the Status to go on, at the latest
        # revision, an inconsistent list
        assert "use the continue token in this response" in body["message"] and body["metadata"]["continue"]
        await raw(server, "POST", core_path, {"metadata": {"name": "cm-3"}})
        status, rest, _ = await raw(server, "GET", core_path + "?continue=" + body["metadata"]["continue"])
        assert status == 200 and [item["metadata"]["name"] for item in rest["items"]] == ["cm-1", "cm-2", "cm-3"]
        assert rest["metadata"]["resourceVersion"] == str(server.resource_version)
        assert [item["data"] for item in rest["items"][:2]] == [{"x": "1"}, {"x": "1"}]  # as they are now


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
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}))
    await core.delete_namespaced_config_map("a", "default")
    seen = []
    async with watch.Watch() as stream:
        async for event in stream.stream(core.list_namespaced_config_map, "default", timeout_seconds=2,
                                         resource_version=listed.metadata.resource_version):
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 2:
                break
    assert seen == [("ADDED", "a"), ("DELETED", "a")]


async def test_timestamps_come_from_the_clock(tmp_path: Any) -> None:
    clock = ManualClock()
    async with ApiServer(clock=clock) as server:
        clock.advance(90)
        _, created, _ = await raw(server, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
        assert created["metadata"]["creationTimestamp"] == "2026-01-01T00:01:30Z"


async def test_send_initial_events_ends_with_marked_bookmark(apiserver: ApiServer) -> None:  # noqa: F811
    events = await asyncio.wait_for(watch_lines(
        apiserver, "/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                   "&allowWatchBookmarks=true", count=5), GUARD)
    assert [e["type"] for e in events] == ["ADDED"] * 4 + ["BOOKMARK"]
    assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_lease_round_trip_with_micro_time(api: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(api)
    made = await leases.create_namespaced_lease("kube-node-lease", manifest({"metadata": {"name": "l"}, "spec": {
        "holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2026-01-01T00:00:00.000000Z"}}))
    assert made.spec.holder_identity == "me" and made.spec.renew_time.year == 2026


async def test_watch_from_a_future_version_is_too_large(apiserver: ApiServer) -> None:  # noqa: F811
    events = await asyncio.wait_for(watch_lines(
        apiserver, f"/api/v1/namespaces?watch=1&resourceVersion={apiserver.resource_version + 100}"), GUARD)
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in events] == [("ERROR", 504, "Timeout")]


async def test_a_client_leaving_ends_its_watch(apiserver: ApiServer) -> None:  # noqa: F811
    await asyncio.wait_for(watch_lines(apiserver, "/api/v1/namespaces?watch=1", count=1), GUARD)
    bucket = apiserver.storage.bucket("/namespaces")
    for _ in range(100):  # the server notices the closed socket within a few loop turns
        if not bucket.watchers:
            break
        await asyncio.sleep(0.01)
    assert not bucket.watchers


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


async def test_exact_resource_version_lists_a_past_state(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    await raw(apiserver, "POST", path, {"metadata": {"name": "a"}, "data": {"v": "1"}})
    then = str(apiserver.resource_version)
    await raw(apiserver, "PUT", path + "/a", {"metadata": {"name": "a"}, "data": {"v": "2"}})
    await raw(apiserver, "POST", path, {"metadata": {"name": "b"}})
    _, past, _ = await raw(apiserver, "GET", f"{path}?resourceVersion={then}&resourceVersionMatch=Exact")
    assert past["metadata"]["resourceVersion"] == then
    assert [(i["metadata"]["name"], i["data"]) for i in past["items"]] == [("a", {"v": "1"})]
    _, now, _ = await raw(apiserver, "GET", f"{path}?resourceVersion={then}")  # not older than: the latest
    assert [i["metadata"]["name"] for i in now["items"]] == ["a", "b"]
    status, body, _ = await raw(apiserver, "GET", f"{path}?resourceVersion=999999")
    assert status == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_delete_collection_and_event_field_selectors(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    for name, reason in (("e1", "Started"), ("e2", "Failed"), ("e3", "Failed")):
        await core.create_namespaced_event("default", manifest({"metadata": {"name": name}, "reason": reason,
                                                                "type": "Warning",
                                                                "involvedObject": {"kind": "Node", "name": "n1"}}))
    failed = await core.list_namespaced_event("default", field_selector="reason=Failed,involvedObject.kind=Node")
    assert [e.metadata.name for e in failed.items] == ["e2", "e3"]
    status, deleted, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/default/events?fieldSelector=reason%3DFailed")
    assert status == 200 and deleted["kind"] == "EventList" and [i["metadata"]["name"] for i in deleted["items"]] == [
        "e2", "e3"]
    assert [e.metadata.name for e in (await core.list_namespaced_event("default")).items] == ["e1"]


async def test_method_not_allowed_and_cluster_scope_paths(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "PUT", "/api/v1/namespaces/default/configmaps", {})
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    status, _, _ = await raw(apiserver, "GET", "/api/v1/namespaces/default/nodes")  # nodes are cluster-scoped
    assert status == 404
    status, _, _ = await raw(apiserver, "GET", "/api/v1/namespaces/default/configmaps/a/status")  # no such subresource
    assert status == 404


async def test_name_pinned_watch_sees_only_its_object(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    start = apiserver.resource_version
    pinned = asyncio.create_task(watch_lines(
        apiserver, f"{path}?watch=1&resourceVersion={start}&fieldSelector=metadata.name%3Db", count=2))
    general = asyncio.create_task(watch_lines(apiserver, f"{path}?watch=1&resourceVersion={start}", count=3))
    await asyncio.sleep(0.05)
    for name in ("a", "b"):
        await raw(apiserver, "POST", path, {"metadata": {"name": name}})
    await raw(apiserver, "DELETE", path + "/b")
    pinned_events = await asyncio.wait_for(pinned, GUARD)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in pinned_events] == [("ADDED", "b"), ("DELETED", "b")]
    assert [e["object"]["metadata"]["name"] for e in await asyncio.wait_for(general, GUARD)] == ["a", "b", "b"]


async def test_aggregated_discovery_when_asked(apiserver: ApiServer) -> None:  # noqa: F811
    accept = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
    async with aiohttp.ClientSession() as session:
        async with session.get(apiserver.url + "/apis", headers={"Authorization": f"Bearer {apiserver.token}",
                                                                  "Accept": accept}) as answer:
            assert answer.headers["Content-Type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
            groups = json.loads(await answer.text())
        async with session.get(apiserver.url + "/api", headers={"Authorization": f"Bearer {apiserver.token}",
                                                                 "Accept": accept}) as answer:
            core = json.loads(await answer.text())
    assert groups["kind"] == "APIGroupDiscoveryList"
    batch = next(g for g in groups["items"] if g["metadata"]["name"] == "batch")
    jobs = batch["versions"][0]["resources"][0]
    assert (jobs["resource"], jobs["scope"], jobs["subresources"][0]["subresource"]) == ("jobs", "Namespaced", "status")
    nodes = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster" and nodes["responseKind"] == {"group": "", "version": "v1", "kind": "Node"}
