"""ApiServer: the emulated kube-apiserver over real HTTP on 127.0.0.1 (aiohttp).

Request handling follows the real server's RequestInfo resolution (/api/v1, /apis/<group>/<version>,
namespaces/<ns>/<resource>/<name>/<subresource>, legacy /watch/ prefix), bearer-token authentication,
and answers every failure with a Status object. Object semantics live in registry.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import yaml
from aiohttp import web

from nvcre_tui.engine.clock import Clock, SystemClock, format_time

from . import discovery, errors
from .answers import certificate_user, cut_answer, decode, delete_options, fault_response, field_manager, is_dry_run, json_response, status_response, warning_value
from .authz import RBAC, Attributes, RbacAuthorizer, User, escalation_refusal, forbidden_message
from .builtins import BOOTSTRAP
from .controllers import Controllers
from .crds import CLEANUP_FINALIZER, CrdController, validate_crd
from .errors import ApiError
from .faults import Fault, Faults
from .listing import list_body, parse_selection
from .podlogs import PodLogs
from .registry import Registry, bucket_of
from .requestinfo import RecordedRequest, Target, not_served, resolve, truthy
from .resources import BUILTINS, Resource
from .storage import Backup, Storage
from .table import to_table, wants_table
from .tls import authority, renewed
from .watch import Watcher, serve_watch

__all__ = ["ApiServer", "RecordedRequest", "PRELOADED_NAMESPACES"]

PRELOADED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
JSON = "application/json"
MAX_REQUEST_BODY_BYTES = 3145728  # the apiserver's write body limit (2x etcd's, for JSON vs protobuf)


class ApiServer:
    """A bare kube-apiserver + etcd stand-in. `garbage_collector=True` adds an emulated GC + namespace
    controller; `history_limit` bounds the watch history per resource; `clock` stamps timestamps."""

    def __init__(self, clock: Clock | None = None, history_limit: int = 1000, garbage_collector: bool = False, *,
                 token: str = "nvcre-emulator-token", bookmark_interval: float = 5.0, seed: int = 0,
                 tls: bool = False, record_requests: bool = True) -> None:
        self.clock = clock or SystemClock()
        self.storage = Storage(history_limit)
        self.registry = Registry(self.storage, self.clock, seed)
        for res in BUILTINS:
            self.registry.serve(res)
        self.registry.validators[("apiextensions.k8s.io", "customresourcedefinitions")] = validate_crd
        self.registry.delete_finalizers[("apiextensions.k8s.io", "customresourcedefinitions")] = CLEANUP_FINALIZER
        self.controllers = Controllers(self.registry, garbage_collector)
        self.crds = CrdController(self.registry)
        self.token = token
        self.version_info = dict(discovery.VERSION_INFO)  # /version; a test may play an older server
        self.tokens: dict[str, User] = {token: User("admin", ("system:masters", "system:authenticated"))}
        # token -> (namespace, name, uid) of the ServiceAccount it was made for, when one existed: bound to it, as a
        # TokenRequest's token is, and refused (401) once that account is deleted or replaced (another uid)
        self._bound: dict[str, tuple[str, str, str]] = {}
        self.authorizer = RbacAuthorizer(lambda group, plural, ns: [
            obj for _, obj in self.storage.bucket(f"{group}/{plural}").items(ns)])
        self.bookmark_interval = bookmark_interval
        self.faults = Faults()
        self.requests: list[RecordedRequest] = []
        self.record_requests = record_requests  # off for long benches: the log grows with every request
        self.pod_logs = PodLogs()
        self.url = ""
        self.tls = authority() if tls else None  # HTTPS with a throwaway CA and x509 client authentication
        self._watchers: set[Watcher] = set()
        self._runner: web.AppRunner | None = None
        self._port = 0  # kept after the first start: a restart comes back on the same address
        ns = self.registry.find("", "v1", "namespaces")
        assert ns is not None
        for name in PRELOADED_NAMESPACES:
            self.registry.create(ns, None, {"metadata": {"name": name}}, manager="kube-apiserver")
        for group, plural, namespace, body in BOOTSTRAP:
            res = next(r for r in BUILTINS if r.group == group and r.plural == plural)
            self.registry.create(res, namespace, body, manager="kube-apiserver")

    # ----------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        self.pod_logs.closed = False
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5,
                                   handler_cancellation=True)  # a client leaving ends its watch at once
        await self._runner.setup()
        context = self.tls.server_context() if self.tls else None
        site = web.TCPSite(self._runner, "127.0.0.1", self._port, ssl_context=context)
        await site.start()
        server = cast("asyncio.Server | None", site._server)  # what loop.create_server made
        assert server is not None and server.sockets
        self._port = server.sockets[0].getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self._port}"

    async def stop(self) -> None:
        for watcher in list(self._watchers):
            watcher.close()
        self.pod_logs.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def restart(self, down_for: float = 0.0, *, new_certificate: bool = False) -> None:
        """Stop and start again on the same port, keeping every object (etcd survives) but not the watch
        history: the new watch cache starts at the current revision, so older watches get 410 Expired.
        `down_for` real seconds in between (connections are refused meanwhile). `new_certificate`: HTTPS comes back
        with a new serving certificate from the same CA (a rotation)."""
        await self.stop()
        if new_certificate:
            if self.tls is None:
                raise RuntimeError("a new certificate needs ApiServer(tls=True)")
            self.tls = renewed(self.tls)
        for bucket in self.storage.buckets.values():
            bucket.history.clear()
            bucket.evicted_rv = self.storage.rv
        if down_for:
            await asyncio.sleep(down_for)
        await self.start()

    def backup(self) -> Backup:
        """etcd's snapshot of every object and the revision now, for `restore`."""
        return self.storage.backup()

    async def restore(self, backup: Backup, down_for: float = 0.0) -> None:
        """etcd restored from `backup` and the server restarted: objects and resourceVersion go back to the backup's (a
        later resourceVersion is handed out again, to another change: restored without --bump-revision), the watch
        history is lost. Served resources (CRDs) stay as they are."""
        await self.stop()
        self.storage.restore(backup)
        if down_for:
            await asyncio.sleep(down_for)
        await self.start()

    async def __aenter__(self) -> ApiServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def write_kubeconfig(self, path: Path | str, namespace: str = "default", context: str = "emulator",
                         token: str | None = None, client_certificate: tuple[bytes, bytes] | None = None) -> Path:
        """A kubeconfig with one cluster (with its CA when serving HTTPS), one user and one context.
        The user is a bearer token (the admin's unless given) or an x509 client certificate (cert, key PEM)."""
        target = Path(path)
        cluster: dict[str, Any] = {"server": self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(self.tls.ca_pem).decode()
        user: dict[str, Any] = {"token": token or self.token}
        if client_certificate is not None:
            user = {"client-certificate-data": base64.b64encode(client_certificate[0]).decode(),
                    "client-key-data": base64.b64encode(client_certificate[1]).decode()}
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": namespace}}],
        }
        target.write_text(yaml.safe_dump(config, sort_keys=False))
        return target

    def write_service_account(self, folder: Path | str, namespace: str, name: str) -> dict[str, str]:
        """What a pod of ServiceAccount namespace/name sees: `token`, `ca.crt` and `namespace` in `folder`
        (the /var/run/secrets/kubernetes.io/serviceaccount layout) and the environment pointing at this
        server (KUBERNETES_SERVICE_HOST/PORT). In-cluster clients need HTTPS: tls=True."""
        if self.tls is None:
            raise RuntimeError("in-cluster configuration needs ApiServer(tls=True): clients connect with https")
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        (target / "token").write_text(self.service_account_token(namespace, name))
        (target / "ca.crt").write_bytes(self.tls.ca_pem)
        (target / "namespace").write_text(namespace)
        return {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(self._port)}

    # ----------------------------------------------------------------------------------- identities

    def add_token(self, token: str, user: str, groups: tuple[str, ...] | list[str] = ()) -> str:
        """Authenticate `token` as `user` (plus system:authenticated); RBAC then decides what it may do."""
        self.tokens[token] = User(user, (*groups, "system:authenticated"))
        return token

    def client_certificate(self, user: str, groups: tuple[str, ...] = (), days: int = 2) -> tuple[bytes, bytes]:
        """An x509 client certificate (cert PEM, key PEM) for `user` in `groups`, valid for `days` (-1: expired, which
        requests are refused 401 with); needs tls=True."""
        if self.tls is None:
            raise RuntimeError("client certificates need ApiServer(tls=True)")
        return self.tls.client_certificate(user, tuple(groups), days)

    def service_account_token(self, namespace: str, name: str) -> str:
        """A token for ServiceAccount namespace/name (as a TokenRequest would give). Made while the account exists, it is
        bound to it as the real server's are: refused (401 Unauthorized) once the account is deleted or replaced by
        another of its name. The account need not exist (a test's shortcut): such a token stays valid."""
        account = self._service_account(namespace, name)
        uid = None if account is None else str(account["metadata"].get("uid"))
        token = f"sa.{namespace}.{name}" + (f".{uid}" if uid else "")  # one account's: never another's of its name
        self.tokens[token] = User.service_account(namespace, name)
        if uid:
            self._bound[token] = (namespace, name, uid)
        return token

    def _service_account(self, namespace: str, name: str) -> dict[str, Any] | None:
        res = self.registry.find("", "v1", "serviceaccounts")
        return None if res is None else self.registry.current(res, namespace, name)

    def _authenticated(self, token: str) -> User | None:
        """Who `token` authenticates as; None for an unknown one, or one whose ServiceAccount is gone (or another now)."""
        user = self.tokens.get(token)
        bound = self._bound.get(token)
        if user is not None and bound is not None:
            account = self._service_account(bound[0], bound[1])
            if account is None or str(account["metadata"].get("uid")) != bound[2]:
                return None
        return user

    def _token_request(self, res: Resource, namespace: str | None, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """TokenRequest (authentication.k8s.io/v1, `kubectl create token`): a token of an existing ServiceAccount."""
        account = self.registry.get(res, namespace, name)  # NotFound for an account that does not exist, as the real server
        namespace = str(account["metadata"]["namespace"])
        spec = body.get("spec") or {}
        seconds = int(spec.get("expirationSeconds") or 3600)
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
                "spec": {"audiences": spec.get("audiences") or [self.url], "expirationSeconds": seconds},
                "status": {"token": self.service_account_token(namespace, name),
                           "expirationTimestamp": format_time(self.clock.now() + timedelta(seconds=seconds))}}

    # ----------------------------------------------------------------------------------- test helpers

    def clear_requests(self) -> None:
        self.requests.clear()

    def requests_where(self, **fields: Any) -> list[RecordedRequest]:
        """Recorded requests whose fields equal the given values, e.g. verb="patch", resource="nodes"."""
        return [r for r in self.requests if all(getattr(r, name) == value for name, value in fields.items())]

    def set_pod_log(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        """What GET pods/<name>/log answers (container None: for every container without its own text)."""
        self.pod_logs.set(namespace, name, text, container)

    def append_pod_log(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        """More log text; followers (follow=true) receive it as it comes."""
        self.pod_logs.append(namespace, name, text, container)

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        """A served resource (built-in or from a CRD), e.g. to read a CRD's printer columns."""
        return self.registry.find(group, version, plural)

    def objects(self, group: str, plural: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Stored objects of a resource (read-only views), without going through HTTP."""
        return [obj for _, obj in self.storage.bucket(f"{group}/{plural}").items(namespace)]

    @property
    def resource_version(self) -> int:
        return self.storage.rv

    # ----------------------------------------------------------------------------------- HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if (request.content_length or 0) > MAX_REQUEST_BODY_BYTES:
            return status_response(ApiError("RequestEntityTooLarge",
                                             f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"))
        body = await request.read() if request.can_read_body else b""
        query = {key: request.query.getone(key) for key in request.query.keys()}
        record = RecordedRequest(method=request.method, path=request.path, query=query,
                                 content_type=request.headers.get("Content-Type", "").split(";")[0].strip(),
                                 user_agent=request.headers.get("User-Agent", ""), body=body,
                                 accept_encoding=request.headers.get("Accept-Encoding", ""))
        if self.record_requests:
            self.requests.append(record)
        response = await self._answer(request, record, body)
        record.status = response.status
        record.warnings = response.headers.getall("Warning", [])
        return response

    async def _answer(self, request: web.Request, record: RecordedRequest, body: bytes) -> web.StreamResponse:
        try:
            target = resolve(record, self.registry.find)
        except ApiError as error:
            return status_response(error)
        auth = request.headers.get("Authorization", "")
        record.auth_scheme = auth.split(" ", 1)[0]
        user = self._authenticated(auth.removeprefix("Bearer ")) if auth.startswith("Bearer ") else None
        if user is None and self.tls is not None:
            user = certificate_user(request)
        if user is None:
            if record.path not in ("/healthz", "/readyz", "/livez", "/version"):
                return status_response(ApiError("Unauthorized", "Unauthorized"))
            user = User("system:anonymous", ("system:unauthenticated",))
        record.user = user.name
        # RequestInfo names a Namespace object's own namespace too, so namespaced Roles can grant on it
        scope = record.name if (record.resource, record.api_group) == ("namespaces", "") and record.name else (
            record.namespace)
        attributes = Attributes(record.verb if target else request.method.lower(), record.path, record.resource,
                                record.api_group, record.subresource, scope, record.name,
                                resource_request=target is not None)
        if not self.authorizer.allows(user, attributes):
            return status_response(ApiError("Forbidden", forbidden_message(user, attributes), name=record.name,
                                             group=record.api_group, kind=record.resource))
        if (record.api_group == RBAC and record.verb in ("create", "update", "patch") and not record.subresource
                and (refusal := self._escalation(user, record, scope, body)) is not None):
            return status_response(refusal)
        fault = self.faults.take(request.method, record.path, request.query_string, record.user_agent)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)  # a slow server: real time, on a real socket
            if fault.reset_connection:
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            if fault.status and not fault.after_commit:
                return fault_response(fault, record)
        validation = record.query.get("fieldValidation") or "Warn"
        if validation not in ("Ignore", "Warn", "Strict"):
            return status_response(errors.bad_request(
                f'fieldValidation must be one of "Ignore", "Warn", or "Strict", got "{validation}"'))
        self.registry.field_validation, self.registry.warnings = validation, []
        try:
            response = await self._dispatch(request, record, target, body, fault)
        except ApiError as error:
            response = status_response(error)
        except (ValueError, TypeError, KeyError, AttributeError) as error:  # malformed input the checks missed
            response = status_response(ApiError("InternalError", f"Internal error occurred: {error!r}"))
        for warning in self.registry.warnings:  # set before any await: no other request interleaves
            if not response.prepared:
                response.headers.add("Warning", warning_value(warning))
        if fault is not None and fault.status and fault.after_commit:
            return fault_response(fault, record)
        if fault is not None and fault.cut_body_after is not None and isinstance(response, web.Response):
            return await cut_answer(request, response, fault.cut_body_after, fault.stall)
        return response

    def _escalation(self, user: User, record: RecordedRequest, namespace: str | None, body: bytes) -> ApiError | None:
        """The RBAC registry's escalation check of a role or binding written whole (create, update, server-side apply;
        a JSON or merge patch's result is not known here, and is not checked)."""
        if record.verb == "patch" and record.content_type != "application/apply-patch+yaml":
            return None
        try:
            obj = yaml.safe_load(body.decode() or "{}")
        except (ValueError, yaml.YAMLError):
            return None  # the write itself answers the malformed body
        return escalation_refusal(self.authorizer, user, record.resource, namespace, obj) if isinstance(obj, dict) else None

    async def _dispatch(self, request: web.Request, record: RecordedRequest, target: Target | None, body: bytes,
                        fault: Fault | None) -> web.StreamResponse:
        if target is None:
            return self._non_resource(record, request.headers.get("Accept", ""))
        res = target.res
        if res is None or (target.namespace is not None and not res.namespaced):
            raise not_served()
        if target.subresource and target.subresource not in res.subresources:
            raise not_served()
        if res.namespaced and target.name and target.namespace is None:
            raise not_served()
        if res.namespaced and target.namespace is None and request.method not in ("GET",) and not res.virtual:
            raise errors.method_not_allowed(request.method)  # all-namespaces collections only list and watch
        query = record.query
        dry_run = is_dry_run(query)
        manager = field_manager(query, record.user_agent)
        method, name, sub, ns = request.method, target.name, target.subresource, target.namespace
        if method == "GET":
            if sub == "log":
                pod = self.registry.get(res, ns, name)
                return await self.pod_logs.serve(request, pod, lambda: self.registry.current(res, ns, name) is not None,
                                                 query)
            table = wants_table(request.headers.get("Accept", ""))
            if name and target.legacy_watch:  # /watch/.../<name>: a watch of that one object
                one = dict(query, fieldSelector=",".join(filter(None, [query.get("fieldSelector"),
                                                                         f"metadata.name={name}"])))
                return await serve_watch(request, self.registry, res, ns, one, bookmark_interval=self.bookmark_interval,
                                         drop_after=fault.drop_stream_after if fault else None,
                                         expire_after=fault.expire_stream_after if fault else None,
                                         send_first=fault.send_first if fault else (),
                                         end_after=fault.end_stream_after if fault else None, watchers=self._watchers)
            if name:
                found = self.registry.get(res, ns, name)
                if table:
                    return json_response(to_table(res, [found], {"resourceVersion": found["metadata"]["resourceVersion"]},
                                          self.clock.now(), query.get("includeObject", "Metadata")))
                return json_response(res.view(found))
            if record.verb == "watch":
                return await serve_watch(request, self.registry, res, ns, query,
                                         bookmark_interval=self.bookmark_interval,
                                         drop_after=fault.drop_stream_after if fault else None,
                                         expire_after=fault.expire_stream_after if fault else None,
                                         send_first=fault.send_first if fault else (),
                                         end_after=fault.end_stream_after if fault else None, watchers=self._watchers)
            listed = list_body(self.registry, res, ns, query)
            if table:
                return json_response(to_table(res, listed["items"], listed["metadata"], self.clock.now(),
                                      query.get("includeObject", "Metadata")))
            return json_response(listed)
        if res.virtual:
            if method != "POST" or name:
                raise errors.method_not_allowed(method)
            return json_response(self._access_review(res, decode(body), record), 201)
        if method == "POST" and sub == "token":
            return json_response(self._token_request(res, ns, name, decode(body)), 201)
        if method == "POST" and sub == "binding":
            return json_response(self.registry.bind(res, ns, name, decode(body), manager=manager, dry_run=dry_run),
                                 201)
        if method == "POST":
            if name:
                raise errors.method_not_allowed(method)
            return json_response(res.view(self.registry.create(res, ns, decode(body), manager=manager,
                                                               dry_run=dry_run)), 201)
        if method == "PUT" and name:
            obj, created = self.registry.update(res, ns, name, decode(body), manager=manager, subresource=sub,
                                                dry_run=dry_run)
            return json_response(res.view(obj), 201 if created else 200)
        if method == "PATCH" and name:
            content_type = record.content_type
            is_apply = content_type == "application/apply-patch+yaml"
            obj, created = self.registry.patch(res, ns, name, body, content_type,
                                               manager=query.get("fieldManager", "") if is_apply else manager,
                                               subresource=sub, dry_run=dry_run, force=truthy(query.get("force")))
            return json_response(res.view(obj), 201 if created else 200)
        if method == "DELETE":
            options = delete_options(body, query)
            if name:
                obj, removed = self.registry.delete(res, ns, name, options, dry_run=dry_run)
                accepted = not removed and options.get("orphanDependents") is False
                return json_response(res.view(obj), 202 if accepted else 200)
            return json_response(self._delete_collection(res, ns, query, options, dry_run))
        raise errors.method_not_allowed(method)

    def _non_resource(self, record: RecordedRequest, accept: str = "") -> web.Response:
        parts = [p for p in record.path.split("/") if p]
        resources = list(self.registry.resources.values())
        if record.path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok", content_type="text/plain")
        if parts == ["version"]:
            return json_response(self.version_info)
        if parts in (["api"], ["apis"]) and discovery.wants_aggregated(accept):
            return web.Response(body=json.dumps(discovery.aggregated(resources, core=parts == ["api"])),
                                headers={"Content-Type": discovery.AGGREGATED_TYPE})
        if parts == ["api"]:
            return json_response(discovery.api_versions(self.url.split("://")[-1]))
        if parts == ["apis"]:
            return json_response(discovery.group_list(resources))
        found = None
        if len(parts) == 2 and parts[0] == "api":
            found = discovery.resource_list(resources, "", parts[1])
        elif len(parts) == 2 and parts[0] == "apis":
            found = discovery.group(resources, parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            found = discovery.resource_list(resources, parts[1], parts[2])
        if found is None:
            raise not_served()
        return json_response(found)

    def _access_review(self, res: Resource, body: Any, record: RecordedRequest) -> dict[str, Any]:
        """Self/SubjectAccessReview: the authorizer's answer for the attributes in spec."""
        spec = (body or {}).get("spec") or {}
        if res.plural == "selfsubjectaccessreviews":
            user = next((u for u in self.tokens.values() if u.name == record.user), User(record.user))
        else:
            user = User(spec.get("user", ""), tuple(spec.get("groups") or ()))
        resource = spec.get("resourceAttributes")
        if resource is not None:
            attributes = Attributes(resource.get("verb", ""), "", resource.get("resource", ""),
                                    resource.get("group", ""), resource.get("subresource", ""),
                                    resource.get("namespace") or None, resource.get("name", ""))
        else:
            path = (spec.get("nonResourceAttributes") or {})
            attributes = Attributes(path.get("verb", ""), path.get("path", ""), resource_request=False)
        allowed = self.authorizer.allows(user, attributes)
        status: dict[str, Any] = {"allowed": allowed}
        if allowed and "system:masters" not in user.groups:
            status["reason"] = "RBAC: allowed"
        return {"kind": res.kind, "apiVersion": res.api_version, "metadata": {"creationTimestamp": None},
                "spec": spec, "status": status}

    def _delete_collection(self, res: Resource, namespace: str | None, query: dict[str, str],
                           options: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        selection = parse_selection(res, namespace, query)
        bucket = self.storage.bucket(bucket_of(res))
        chosen = [key for key, obj in bucket.items(selection.namespace) if selection.matches(obj)]
        items = []
        for key in chosen:
            obj, _ = self.registry.delete(res, key[0] or None, key[1], options, dry_run=dry_run)
            items.append(res.view(obj) if res.custom else {k: v for k, v in obj.items() if k not in ("apiVersion",
                                                                                                  "kind")})
        return {"kind": res.list_kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.storage.rv)}, "items": items}
