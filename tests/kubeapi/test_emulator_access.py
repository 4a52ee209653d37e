"""The emulator's edges: faults, recorded requests, authentication, RBAC, TLS, size limits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.rest import ApiException

from . import ApiServer, Fault
from .clientkit import GUARD, certification, install_crds, manifest, raw, status_of, watch_lines
from .fixtures import api, apiserver  # noqa: F401  (fixtures)


async def test_fault_status_retry_after_and_times(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.faults.add(Fault(method="GET", path=r"/namespaces$", status=429, retry_after=2, times=1))
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as throttled:
        await core.list_namespace()
    assert throttled.value.status == 429 and throttled.value.headers is not None
    assert throttled.value.headers["Retry-After"] == "2"
    assert status_of(throttled.value)["reason"] == "TooManyRequests"
    assert len((await core.list_namespace()).items) == 4  # times=1: the next one passes


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


async def test_rbac_judges_other_users_by_stored_roles(apiserver: ApiServer, api: client.ApiClient) -> None:  # noqa: F811
    rbac = client.RbacAuthorizationV1Api(api)
    await rbac.create_cluster_role(manifest({"metadata": {"name": "system:node-reader"}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]}))
    await rbac.create_cluster_role_binding(manifest({"metadata": {"name": "engine-reads-nodes"},
                                                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                                 "kind": "ClusterRole", "name": "system:node-reader"},
                                                     "subjects": [{"kind": "ServiceAccount", "name": "engine",
                                                                   "namespace": "nvcre-system"}]}))
    await rbac.create_namespaced_role("default", manifest({"metadata": {"name": "cm-writer"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]}))
    await rbac.create_namespaced_role_binding("default", manifest({
        "metadata": {"name": "engine-writes-cms"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "engine", "namespace": "nvcre-system"}]}))
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
    answer = await client.AuthorizationV1Api(api).create_subject_access_review(manifest(review))
    assert answer.status.allowed is True
    status, body, _ = await raw(apiserver, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}, token=token)
    assert status == 201 and body["status"]["allowed"] is False


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


async def test_an_expired_client_certificate_is_refused_401_not_at_the_handshake(tmp_path: Any) -> None:
    """The real server's TLS takes any client certificate; its x509 authenticator refuses an expired one at each request
    (401 Unauthorized). The emulator refused it at the handshake, which a client renewing its certificate on a 401
    (client-go's exec plugins) never sees from a real server."""
    async with ApiServer(tls=True) as server:
        path = server.write_kubeconfig(tmp_path / "expired", client_certificate=server.client_certificate("old", ("system:masters",), days=-1))
        configuration = client.Configuration()
        await config.load_kube_config(config_file=str(path), client_configuration=configuration)
        async with client.ApiClient(configuration) as api_client:
            with pytest.raises(ApiException) as refused:
                await client.CoreV1Api(api_client).list_namespace()
        assert (refused.value.status, status_of(refused.value)["reason"]) == (401, "Unauthorized")
        assert [(r.path, r.status) for r in server.requests] == [("/api/v1/namespaces", 401)]


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


async def test_wrong_token_is_401(apiserver: ApiServer) -> None:  # noqa: F811
    status, body, _ = await raw(apiserver, "GET", "/api/v1/namespaces", token="wrong")
    assert status == 401 and body["reason"] == "Unauthorized"
    status, text, _ = await raw(apiserver, "GET", "/readyz", token="wrong")
    assert (status, text) == (200, "ok")


async def test_recorded_requests(api: client.ApiClient, apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.clear_requests()
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", manifest({"metadata": {"name": "a"}}))
    await core.patch_namespaced_config_map("a", "default", {"data": {"k": "v"}})
    await core.list_config_map_for_all_namespaces(label_selector="x=y")
    seen = [(r.verb, r.resource, r.namespace, r.name, r.status) for r in apiserver.requests]
    assert seen == [("create", "configmaps", "default", "", 201), ("patch", "configmaps", "default", "a", 200),
                    ("list", "configmaps", None, "", 200)]
    assert apiserver.requests[1].content_type == "application/strategic-merge-patch+json"
    assert apiserver.requests[2].query["labelSelector"] == "x=y"
    assert apiserver.requests[0].user_agent == "emulator-tests/1.0"
    assert [r.name for r in apiserver.requests_where(verb="patch", resource="configmaps")] == ["a"]


@pytest.mark.parametrize(("method", "path", "body", "content_type"), [
    ("GET", "/api/v1/namespaces?limit=abc", None, "application/json"),
    ("GET", "/api/v1/namespaces?watch=1&timeoutSeconds=soon", None, "application/json"),
    ("DELETE", "/api/v1/namespaces/default/configmaps/a?gracePeriodSeconds=x", None, "application/json"),
    ("POST", "/api/v1/namespaces/default/configmaps", "not json", "application/json"),
    ("POST", "/api/v1/namespaces/default/configmaps", "[1, 2]", "application/json"),
    ("PATCH", "/api/v1/namespaces/default/configmaps/a", '{"op": "add"}', "application/json-patch+json"),
    ("PATCH", "/api/v1/namespaces/default/configmaps/a", "{}", "text/plain"),
    ("GET", "/api/v1/namespaces?labelSelector=a%20in%20(", None, "application/json"),
    ("GET", "/api/v1/namespaces?continue=garbage", None, "application/json"),
    ("GET", "/api/v1/namespaces?fieldValidation=Loose", None, "application/json"),
])
async def test_malformed_requests_get_a_status_not_a_crash(apiserver: ApiServer, method: str, path: str,  # noqa: F811
                                                           body: str | None, content_type: str) -> None:
    await raw(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    status, answer, _ = await raw(apiserver, method, path, body, content_type)
    assert 400 <= status < 500 and answer["kind"] == "Status" and answer["code"] == status


async def test_restart_keeps_objects_and_address_but_not_watch_history(apiserver: ApiServer) -> None:  # noqa: F811
    path = "/api/v1/namespaces/default/configmaps"
    await raw(apiserver, "POST", path, {"metadata": {"name": "a"}})
    before, url = apiserver.resource_version, apiserver.url
    await apiserver.restart()
    assert apiserver.url == url
    _, listed, _ = await raw(apiserver, "GET", path)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    events = await asyncio.wait_for(watch_lines(apiserver, f"{path}?watch=1&resourceVersion={before - 1}"), GUARD)
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


async def test_fault_expires_a_running_watch(apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.faults.add(Fault(query="watch=", expire_stream_after=2, times=1))
    events = await asyncio.wait_for(watch_lines(apiserver, "/api/v1/namespaces?watch=1"), GUARD)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ERROR"]
    assert (events[-1]["object"]["code"], events[-1]["object"]["reason"]) == (410, "Expired")


async def test_in_cluster_service_account_over_https(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async with ApiServer(tls=True) as server:
        environment = server.write_service_account(tmp_path / "sa", "nvcre-system", "engine")
        for key, value in environment.items():
            monkeypatch.setenv(key, value)
        configuration = client.Configuration()
        config.load_incluster_config(client_configuration=configuration,
                                     token_filename=str(tmp_path / "sa" / "token"),
                                     cert_filename=str(tmp_path / "sa" / "ca.crt"))
        async with client.ApiClient(configuration) as api_client:
            with pytest.raises(ApiException) as denied:  # no RBAC granted to the account yet
                await client.CoreV1Api(api_client).list_node()
            assert denied.value.status == 403
            assert (await client.VersionApi(api_client).get_code()).major == "1"
        assert server.requests[0].user == "system:serviceaccount:nvcre-system:engine"


async def test_token_request_gives_a_token_that_authenticates_as_the_service_account(apiserver: ApiServer) -> None:  # noqa: F811
    """`kubectl create token` (TokenRequest): 404 for an account that does not exist; the token is then that account,
    which RBAC judges (no role yet: a list is refused naming it)."""
    path = "/api/v1/namespaces/default/serviceaccounts/robot/token"
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": [], "expirationSeconds": 600}}
    status, body, _ = await raw(apiserver, "POST", path, request)
    assert status == 404 and body["reason"] == "NotFound"
    await raw(apiserver, "POST", "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "robot"}})
    status, body, _ = await raw(apiserver, "POST", path, request)
    assert status == 201 and body["kind"] == "TokenRequest" and body["spec"]["expirationSeconds"] == 600
    status, refused, _ = await raw(apiserver, "GET", "/api/v1/namespaces/default/configmaps", token=body["status"]["token"])
    assert status == 403 and "system:serviceaccount:default:robot" in refused["message"]


async def test_a_deleted_service_accounts_token_is_refused_401_as_the_real_server_does(apiserver: ApiServer) -> None:  # noqa: F811
    """A TokenRequest's token is bound to its ServiceAccount (by uid): once the account is deleted, every request with it,
    discovery too, is answered 401 Unauthorized with a Status, and an account made again under its name does not revive
    it; a new TokenRequest of the new account authenticates."""
    accounts = "/api/v1/namespaces/default/serviceaccounts"
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    await raw(apiserver, "POST", accounts, {"metadata": {"name": "robot"}})
    token = (await raw(apiserver, "POST", f"{accounts}/robot/token", request))[1]["status"]["token"]
    assert (await raw(apiserver, "GET", "/api", token=token))[0] == 200
    assert (await raw(apiserver, "DELETE", f"{accounts}/robot"))[0] == 200
    for path in ("/api", "/api/v1/namespaces/default/configmaps"):
        status, body, _ = await raw(apiserver, "GET", path, token=token)
        assert status == 401, f"{path}: {status} for a deleted account's token"
        assert (status, body["kind"], body["status"], body["reason"], body["message"], body["code"]) == (
            401, "Status", "Failure", "Unauthorized", "Unauthorized", 401), body
    await raw(apiserver, "POST", accounts, {"metadata": {"name": "robot"}})  # another account of its name: another uid
    assert (await raw(apiserver, "GET", "/api", token=token))[0] == 401
    renewed = (await raw(apiserver, "POST", f"{accounts}/robot/token", request))[1]["status"]["token"]
    assert (await raw(apiserver, "GET", "/api", token=renewed))[0] == 200
    assert (await raw(apiserver, "GET", "/api", token=token))[0] == 401  # the new account's token revives no old one


async def test_rbac_writes_pass_the_escalation_check(apiserver: ApiServer) -> None:  # noqa: F811
    """As the real server's RBAC storage: a role only by one who may `escalate` or holds what it grants; a binding only by
    one who may `bind` its role, else the role is read (NotFound when missing, dry runs included) and every right it
    grants must be held. system:masters skips the check."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    writer = {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "clusterrolebindings"],
              "verbs": ["create", "patch"]}
    status, _, _ = await raw(apiserver, "POST", f"{rbac}/clusterroles", {"metadata": {"name": "writer"}, "rules": [writer]})
    assert status == 201
    await raw(apiserver, "POST", f"{rbac}/clusterrolebindings", {
        "metadata": {"name": "writer"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "writer"},
        "subjects": [{"kind": "User", "name": "w", "apiGroup": "rbac.authorization.k8s.io"}]})
    token = apiserver.add_token("w-token", "w")
    pods = {"metadata": {"name": "pods"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    status, body, _ = await raw(apiserver, "POST", f"{rbac}/clusterroles?dryRun=All", pods, token=token)
    assert status == 403 and "attempting to grant RBAC permissions not currently held" in body["message"], body
    binding = {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pods"},
               "subjects": [{"kind": "User", "name": "x", "apiGroup": "rbac.authorization.k8s.io"}]}
    status, body, _ = await raw(apiserver, "POST", f"{rbac}/clusterrolebindings?dryRun=All", binding, token=token)
    assert (status, body["reason"], body["message"]) == (404, "NotFound", 'clusterroles.rbac.authorization.k8s.io "pods" not found')
    assert (await raw(apiserver, "POST", f"{rbac}/clusterroles", pods))[0] == 201  # the admin makes it
    status, body, _ = await raw(apiserver, "POST", f"{rbac}/clusterrolebindings?dryRun=All", binding, token=token)
    assert status == 403 and "not currently held: get pods" in body["message"], body
    # holding what the role grants is enough, for the role and its binding alike
    writer_role = {"metadata": {"name": "writer"}, "rules": [writer, {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    assert (await raw(apiserver, "PUT", f"{rbac}/clusterroles/writer", writer_role))[0] == 200
    assert (await raw(apiserver, "POST", f"{rbac}/clusterrolebindings?dryRun=All", binding, token=token))[0] == 201
    assert (await raw(apiserver, "PATCH", f"{rbac}/clusterroles/mine?fieldManager=w", dict(pods, metadata={"name": "mine"}),
                      "application/apply-patch+yaml", token=token))[0] == 201


async def test_fault_cuts_an_answer_mid_body(apiserver: ApiServer) -> None:  # noqa: F811
    apiserver.faults.add(Fault(method="GET", path=r"/namespaces$", cut_body_after=20, times=1))
    async with aiohttp.ClientSession() as session:
        async with session.get(apiserver.url + "/api/v1/namespaces", headers={"Authorization": f"Bearer {apiserver.token}"}) as answer:
            assert answer.status == 200 and answer.headers["Content-Type"].startswith("application/json")
            with pytest.raises(aiohttp.ClientPayloadError):
                await answer.read()
    status, body, _ = await raw(apiserver, "GET", "/api/v1/namespaces")  # times=1: whole again
    assert status == 200 and len(body["items"]) == 4
