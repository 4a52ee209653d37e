"""The emulator's writes: patch types, server-side apply, finalizers, deletion, namespaces, GC."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from . import ApiServer
from .clientkit import GUARD, manifest, raw, status_of
from .fixtures import api, apiserver  # noqa: F401  (fixtures)


async def test_json_patch_and_strategic_merge(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    apps = client.AppsV1Api(api)
    template = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
        {"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]}}
    await apps.create_namespaced_deployment("default", manifest({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}}, "template": template}}))
    merged = await apps.patch_namespaced_deployment("d", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "b", "image": "x:2"}]}}}})
    assert [(c.name, c.image) for c in merged.spec.template.spec.containers] == [("a", "busybox:1"), ("b", "x:2")]
    deleted = await apps.patch_namespaced_deployment("d", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "$patch": "delete"}]}}}})
    assert [c.name for c in deleted.spec.template.spec.containers] == ["b"]
    assert deleted.metadata.generation == 3  # spec changes count
    patched = await apps.patch_namespaced_deployment("d", "default", [
        {"op": "add", "path": "/metadata/labels", "value": {"x": "1"}}])
    assert patched.metadata.labels == {"x": "1"} and patched.metadata.generation == 3
    path = "/apis/apps/v1/namespaces/default/deployments/d"
    status, body, _ = await raw(apiserver, "PATCH", path, [{"op": "test", "path": "/metadata/labels/x", "value": "2"}],
                                "application/json-patch+json")
    assert status == 422 and body["kind"] == "Status"
    status, body, _ = await raw(apiserver, "PATCH", path, {"metadata": {"resourceVersion": "1", "labels": {"y": "1"}}},
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


async def test_apply_bodies_in_yaml_or_json_read_alike_and_junk_is_a_400(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps/{}?fieldManager=tool"
    as_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata:\n  a: '1'\n  b: two  # block style\n"
    status, from_yaml, _ = await raw(apiserver, "PATCH", path.format("y"), as_yaml, "application/apply-patch+yaml")
    assert status == 201 and from_yaml["data"] == {"a": "1", "b": "two"}, from_yaml
    as_json = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}, "data": {"a": "1", "b": "two"}}
    status, from_json, _ = await raw(apiserver, "PATCH", path.format("j"), as_json, "application/apply-patch+yaml")
    assert status == 201 and from_json["data"] == from_yaml["data"]
    for junk in ("{data: [unclosed", b"\xff\xfe{"):
        status, body, _ = await raw(apiserver, "PATCH", path.format("z"), junk, "application/apply-patch+yaml")
        assert status == 400 and body["message"].startswith("error decoding YAML: "), body


async def test_namespace_lifecycle(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespace(manifest({"metadata": {"name": "team"}}))
    await core.create_namespaced_config_map("team", manifest({"metadata": {"name": "a"}}))
    status, terminating, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/team")
    assert status == 200 and terminating["status"]["phase"] == "Terminating"
    assert terminating["spec"]["finalizers"] == ["kubernetes"]
    with pytest.raises(ApiException) as refused:
        await core.create_namespaced_config_map("team", manifest({"metadata": {"name": "b"}}))
    body = status_of(refused.value)
    assert refused.value.status == 403 and body["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    await core.delete_namespaced_config_map("a", "team")
    await asyncio.sleep(0)
    # No namespace controller on a bare API server: empty, it stays Terminating, its finalizer in place.
    [team] = [n for n in (await core.list_namespace()).items if n.metadata.name == "team"]
    assert team.status.phase == "Terminating" and team.spec.finalizers == ["kubernetes"]
    with pytest.raises(ApiException) as immortal:
        await core.delete_namespace("default")
    assert immortal.value.status == 403


async def test_the_namespace_controller_empties_and_removes_a_terminating_namespace() -> None:
    async with ApiServer(garbage_collector=True) as server:
        await raw(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
        await raw(server, "POST", "/api/v1/namespaces/team/configmaps", {"metadata": {"name": "a"}})
        await raw(server, "DELETE", "/api/v1/namespaces/team")
        for _ in range(3):
            await asyncio.sleep(0)
        assert server.objects("", "configmaps", "team") == []
        assert "team" not in [o["metadata"]["name"] for o in server.objects("", "namespaces", None)]


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
    await core.create_namespaced_pod("default", manifest({"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "busybox"}]}}))
    apiserver.set_pod_log("default", "p", "one\ntwo\nthree\n", container="main")
    assert await core.read_namespaced_pod_log("p", "default", container="main", tail_lines=2) == "two\nthree\n"
    with pytest.raises(ApiException) as ambiguous:
        await core.read_namespaced_pod_log("p", "default")
    assert ambiguous.value.status == 400 and "choose one of: [main side]" in status_of(ambiguous.value)["message"]
    _, terminating, _ = await raw(apiserver, "DELETE", "/api/v1/namespaces/default/pods/p")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30  # no kubelet here to finish it
    await raw(apiserver, "DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0")
    assert apiserver.objects("", "pods", "default") == []


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


async def test_finalizers_hold_deletion_until_removed(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a",
                                                                              "finalizers": ["example.com/x"]}}))
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


async def test_a_delete_with_a_policy_sets_the_collectors_finalizers_of_an_object_already_being_deleted(
        apiserver: ApiServer) -> None:  # noqa: F811
    """As the real registry (deletionFinalizersForGarbageCollection, on every DELETE that is not of a pod in its grace
    period): on an API server without kube-controller-manager a foreground deletion's `foregroundDeletion` stays, and a
    DELETE again with propagationPolicy Background takes it away and completes the deletion; it had changed nothing."""
    path = "/api/v1/namespaces/default/configmaps"
    for name in ("fore", "held"):
        await raw(apiserver, "POST", path, {"metadata": {"name": name, "finalizers": ["example.com/x"] if name == "held" else []}})
        _, deleting, _ = await raw(apiserver, "DELETE", f"{path}/{name}", {"propagationPolicy": "Foreground"})
        assert deleting["metadata"]["finalizers"] == [*(["example.com/x"] if name == "held" else []), "foregroundDeletion"]
    stamp = deleting["metadata"]["deletionTimestamp"]
    _, again, _ = await raw(apiserver, "DELETE", f"{path}/fore")  # no policy: the finalizers it has decide
    assert again["metadata"]["finalizers"] == ["foregroundDeletion"]
    _, orphaning, _ = await raw(apiserver, "DELETE", f"{path}/fore", {"propagationPolicy": "Orphan"})
    assert orphaning["metadata"]["finalizers"] == ["orphan"]
    status, _, _ = await raw(apiserver, "DELETE", f"{path}/fore", {"propagationPolicy": "Background"})
    assert status == 200 and [o["metadata"]["name"] for o in apiserver.objects("", "configmaps", "default")] == ["held"]
    _, held, _ = await raw(apiserver, "DELETE", f"{path}/held", {"propagationPolicy": "Background"})
    assert held["metadata"]["finalizers"] == ["example.com/x"] and held["metadata"]["deletionTimestamp"] == stamp


async def test_delete_preconditions_and_answer(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}))
    with pytest.raises(ApiException) as wrong_uid:
        await core.delete_namespaced_config_map("a", "default", body=manifest({"preconditions": {"uid": "other"}}))
    assert (wrong_uid.value.status, status_of(wrong_uid.value)["reason"]) == (409, "Conflict")
    await core.delete_namespaced_config_map(
        "a", "default",
        body=manifest({"preconditions": {"uid": created.metadata.uid}, "propagationPolicy": "Background"}))
    assert (await core.list_namespaced_config_map("default")).items == []


async def test_bootstrap_objects_and_immutable_configmaps(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    service = await core.read_namespaced_service("kubernetes", "default")
    assert service.spec.cluster_ip == "10.0.0.1" and service.spec.ports[0].port == 443
    binding = await client.RbacAuthorizationV1Api(api).read_cluster_role_binding("cluster-admin")
    assert binding.subjects[0].name == "system:masters"
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}, "data": {"k": "v"},
                                                                 "immutable": True}))
    with pytest.raises(ApiException) as frozen:
        await core.patch_namespaced_config_map("a", "default", {"data": {"k": "w"}})
    assert frozen.value.status == 422 and status_of(frozen.value)["details"]["causes"][0]["field"] == "data"
    labelled = await core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.labels == {"x": "y"}
    deployments = await client.AppsV1Api(api).list_namespaced_deployment("default")
    assert deployments.items == []


async def test_events_live_in_the_namespace_of_what_they_are_about(apiserver: ApiServer) -> None:  # noqa: F811
    about_node = {"kind": "Node", "name": "n1"}
    status, body, _ = await raw(apiserver, "POST", "/api/v1/namespaces/kube-system/events",
                                {"metadata": {"name": "e"}, "involvedObject": about_node, "reason": "R"})
    assert status == 422 and body["details"]["causes"][0]["field"] == "involvedObject.namespace"
    status, _, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/events",
                             {"metadata": {"name": "e"}, "involvedObject": about_node, "reason": "R"})
    assert status == 201
    status, _, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/events", {
        "metadata": {"name": "f"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "kube-system"}})
    assert status == 422


async def test_built_in_objects_lose_unknown_fields_as_a_typed_decode_does(apiserver: ApiServer) -> None:  # noqa: F811
    status, made, headers = await raw(apiserver, "POST", "/api/v1/nodes", {
        "metadata": {"name": "n1", "bogus": 1}, "spec": {"unschedulable": True, "typo": "x"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "nodeInfo": {"kubeletVersion": "v1.34.0", "extra": 1}}})
    assert status == 201 and made["spec"] == {"unschedulable": True} and "bogus" not in made["metadata"]
    assert made["status"] == {"capacity": {"nvidia.com/gpu": "8"}, "nodeInfo": {"kubeletVersion": "v1.34.0"}}
    assert headers["Warning"].startswith('299 - "unknown field \\"spec.typo\\""')
    status, body, _ = await raw(apiserver, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases"
                                "?fieldValidation=Strict", {"metadata": {"name": "l"}, "spec": {"holder": "me"}})
    assert status == 400 and body["message"] == 'strict decoding error: unknown field "spec.holder"'


async def test_built_in_values_of_the_wrong_type_fail_the_decode(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                                {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": "15"}})
    assert status == 400 and body["reason"] == "BadRequest"
    assert body["message"] == ('Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into '
                               'Go struct field .spec.leaseDurationSeconds of type int')
    status, _, _ = await raw(apiserver, "POST", "/api/v1/services", {"metadata": {"name": "s"}})  # all namespaces
    assert status == 405
    status, _, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/services", {
        "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": "http"}]}})
    assert status == 201  # int-or-string fields take either


async def test_following_a_pod_log_streams_appended_text(apiserver: ApiServer) -> None:  # noqa: F811
    await raw(apiserver, "POST", "/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "main", "image": "busybox"}]}})
    apiserver.set_pod_log("default", "p", "step 1\n")
    received: list[bytes] = []

    async def follow() -> None:
        async with aiohttp.ClientSession() as session:
            async with session.get(apiserver.url + "/api/v1/namespaces/default/pods/p/log?follow=true",
                                   headers={"Authorization": f"Bearer {apiserver.token}"}) as answer:
                async for chunk in answer.content.iter_any():
                    received.append(chunk)

    task = asyncio.create_task(follow())
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.01)
    apiserver.append_pod_log("default", "p", "step 2\n", container="main")
    for _ in range(100):
        if b"".join(received).count(b"\n") == 2:
            break
        await asyncio.sleep(0.01)
    await raw(apiserver, "DELETE", "/api/v1/namespaces/default/pods/p")  # unbound: deleted at once
    await asyncio.wait_for(task, GUARD)
    assert b"".join(received) == b"step 1\nstep 2\n"


async def test_garbage_collector_ignores_owners_in_other_namespaces(tmp_path: Any) -> None:
    async with ApiServer(garbage_collector=True) as server:
        _, owner, _ = await raw(server, "POST", "/api/v1/namespaces/kube-system/configmaps",
                                {"metadata": {"name": "owner"}})
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
        await raw(server, "POST", "/api/v1/namespaces/default/configmaps",
                  {"metadata": {"name": "stray", "ownerReferences": [ref]}})
        await raw(server, "POST", "/api/v1/namespaces/kube-system/configmaps",
                  {"metadata": {"name": "child", "ownerReferences": [ref]}})
        assert server.objects("", "configmaps", "default") == []  # its owner is absent for the GC
        assert [o["metadata"]["name"] for o in server.objects("", "configmaps", "kube-system")] == ["child", "owner"]


async def test_pod_specs_are_frozen_and_binding_assigns_the_node(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod("default", manifest({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "main", "image": "busybox:1"}]}}))
    with pytest.raises(ApiException) as frozen:
        await core.patch_namespaced_pod("p", "default", {"spec": {"nodeName": "n1"}})
    assert frozen.value.status == 422 and "pod updates may not change fields" in status_of(frozen.value)["message"]
    retagged = await core.patch_namespaced_pod("p", "default", {"spec": {"containers": [
        {"name": "main", "image": "busybox:2"}]}})
    assert retagged.spec.containers[0].image == "busybox:2"
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    status, answer, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/pods/p/binding", binding)
    assert (status, answer["status"]) == (201, "Success")
    bound = await core.read_namespaced_pod("p", "default")
    assert bound.spec.node_name == "n1" and bound.status.conditions[0].type == "PodScheduled"
    status, again, _ = await raw(apiserver, "POST", "/api/v1/namespaces/default/pods/p/binding", binding)
    assert status == 409 and again["message"].endswith('pod p is already assigned to node "n1"')


async def test_config_map_keys_must_be_file_names_of_one_directory(apiserver: ApiServer) -> None:  # noqa: F811
    # ValidateConfigMap runs IsConfigMapKey on every data/binaryData key: a key becomes a file of the mounted volume
    path = "/api/v1/namespaces/default/configmaps"
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "nested"}, "data": {"conf/train.sh": "x"}})
    assert status == 422 and body["reason"] == "Invalid"
    cause = body["details"]["causes"][0]
    assert cause["field"] == "data[conf/train.sh]" and cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith('Invalid value: "conf/train.sh": a valid config key must consist of alphanumeric characters')
    for key, problem in (("..x", "must not start with '..'"), ("..", "must not be '..'"), ("k" * 254, "no more than 253")):
        status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "bad"}, "data": {key: "x"}})
        assert status == 422 and problem in body["details"]["causes"][0]["message"], key
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "twice"}, "data": {"k": "x"}, "binaryData": {"k": "eA=="}})
    assert status == 422 and "duplicate of key present in binaryData" in body["details"]["causes"][0]["message"]
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "fine"}, "data": {"train.sh": "x", "a_b-C.9": "y"}})
    assert status == 201
    # only the values count towards the 1 MiB: a long key beside a value just under it is fine
    status, body, _ = await raw(apiserver, "POST", path, {"metadata": {"name": "full"}, "data": {"k" * 200: "x" * 1048576}})
    assert status == 201


async def test_a_namespaces_managed_fields_name_who_wrote_it(apiserver: ApiServer) -> None:  # noqa: F811
    """As a real server records them (what `setup reset` reads to tell a namespace `setup init` created from one made
    before it): a create records its client's field manager (owning the defaulted kubernetes.io/metadata.name label); a
    namespace created by an apply names only that applier, owning only what it applied; another client's apply adds its
    own entry beside the creator's."""
    def managers(obj: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]]

    status, made, _ = await raw(apiserver, "POST", "/api/v1/namespaces?fieldManager=gitops",
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made-before"}})
    assert status == 201 and managers(made) == [("gitops", "Update")]
    assert "f:kubernetes.io/metadata.name" in made["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]
    status, labelled, _ = await raw(apiserver, "PATCH", "/api/v1/namespaces/made-before?fieldManager=nvcre&force=true",
                                    {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": "made-before", "labels": {"app.kubernetes.io/part-of": "nvcre"}}},
                                    "application/apply-patch+yaml")
    assert status == 200 and sorted(managers(labelled)) == [("gitops", "Update"), ("nvcre", "Apply")]
    status, applied, _ = await raw(apiserver, "PATCH", "/api/v1/namespaces/applied?fieldManager=nvcre",
                                   {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": "applied", "labels": {"app.kubernetes.io/part-of": "nvcre"}}},
                                   "application/apply-patch+yaml")
    assert status == 201 and managers(applied) == [("nvcre", "Apply")]
    owned = applied["metadata"]["managedFields"][0]["fieldsV1"]
    assert set(owned) == {"f:metadata"} and "f:kubernetes.io/metadata.name" not in owned["f:metadata"]["f:labels"]
