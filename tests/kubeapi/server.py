"""ApiServer: the emulated kube-apiserver over real HTTP on 127.0.0.1 (aiohttp).

Request handling follows the real server's RequestInfo resolution (/api/v1, /apis/<group>/<version>,
namespaces/<ns>/<resource>/<name>/<subresource>, legacy /watch/ prefix), bearer-token authentication,
and answers every failure with a Status object. Object semantics live in registry.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from nvcre_tui.engine.clock import Clock, SystemClock

from . import discovery, errors
from .controllers import Controllers
from .crds import CLEANUP_FINALIZER, CrdController, validate_crd
from .errors import ApiError, REASON_OF_CODE
from .faults import DEFAULT_MESSAGES, Fault, Faults
from .listing import list_body, parse_selection
from .registry import Registry, bucket_of
from .resources import BUILTINS, Resource
from .storage import Storage
from .watch import Watcher, serve_watch

__all__ = ["ApiServer", "RecordedRequest", "PRELOADED_NAMESPACES"]

PRELOADED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
JSON = "application/json"


@dataclass
class RecordedRequest:
    """One request as the server understood it (the audit log of a test)."""

    method: str
    path: str
    verb: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str | None = None
    name: str = ""
    query: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    user_agent: str = ""
    status: int = 0
    body: bytes = b""

    @property
    def field_manager(self) -> str:
        return self.query.get("fieldManager", "")


@dataclass
class _Target:
    """A resolved resource URL."""

    res: Resource | None
    group: str
    version: str
    resource: str
    namespace: str | None
    name: str
    subresource: str
    legacy_watch: bool


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


class ApiServer:
    """A bare kube-apiserver + etcd stand-in. `garbage_collector=True` adds an emulated GC + namespace
    controller; `history_limit` bounds the watch history per resource; `clock` stamps timestamps."""

    def __init__(self, clock: Clock | None = None, history_limit: int = 1000, garbage_collector: bool = False, *,
                 token: str = "nvcre-emulator-token", bookmark_interval: float = 5.0, seed: int = 0) -> None:
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
        self.bookmark_interval = bookmark_interval
        self.faults = Faults()
        self.requests: list[RecordedRequest] = []
        self.pod_logs: dict[tuple[str, str, str | None], str] = {}
        self.url = ""
        self._watchers: set[Watcher] = set()
        self._runner: web.AppRunner | None = None
        ns = self.registry.find("", "v1", "namespaces")
        assert ns is not None
        for name in PRELOADED_NAMESPACES:
            self.registry.create(ns, None, {"metadata": {"name": name}}, manager="kube-apiserver")

    # ----------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        for watcher in list(self._watchers):
            watcher.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ApiServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def write_kubeconfig(self, path: Path | str, namespace: str = "default", context: str = "emulator") -> Path:
        """A kubeconfig with one cluster, user (bearer token) and context pointing here."""
        target = Path(path)
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": {"token": self.token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": namespace}}],
        }
        target.write_text(yaml.safe_dump(config, sort_keys=False))
        return target

    # ----------------------------------------------------------------------------------- test helpers

    def clear_requests(self) -> None:
        self.requests.clear()

    def set_pod_log(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        self.pod_logs[(namespace, name, container)] = text

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
        body = await request.read() if request.can_read_body else b""
        query = {key: request.query.getone(key) for key in request.query.keys()}
        record = RecordedRequest(method=request.method, path=request.path, query=query,
                                 content_type=request.headers.get("Content-Type", "").split(";")[0].strip(),
                                 user_agent=request.headers.get("User-Agent", ""), body=body)
        self.requests.append(record)
        response = await self._answer(request, record, body)
        record.status = response.status
        return response

    async def _answer(self, request: web.Request, record: RecordedRequest, body: bytes) -> web.StreamResponse:
        try:
            target = self._resolve(record)
        except ApiError as error:
            return _status_response(error)
        auth = request.headers.get("Authorization", "")
        if record.path not in ("/healthz", "/readyz", "/livez", "/version") and auth != f"Bearer {self.token}":
            return _status_response(ApiError("Unauthorized", "Unauthorized"))
        fault = self.faults.take(request.method, record.path, request.query_string, record.user_agent)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)  # a slow server: real time, on a real socket
            if fault.reset_connection:
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            if fault.status and not fault.after_commit:
                return _fault_response(fault, record)
        try:
            response = await self._dispatch(request, record, target, body, fault)
        except ApiError as error:
            response = _status_response(error)
        if fault is not None and fault.status and fault.after_commit:
            return _fault_response(fault, record)
        return response

    def _resolve(self, record: RecordedRequest) -> _Target | None:
        """RequestInfo: None for non-resource paths (discovery, health, version)."""
        parts = [p for p in record.path.split("/") if p]
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            record.verb = "get"
            return None
        record.api_group, record.api_version = group, version
        if not rest:
            record.verb = "get"
            return None
        legacy_watch = rest[0] == "watch"
        if legacy_watch:
            rest = rest[1:]
        namespace = None
        if rest and rest[0] == "namespaces" and (len(rest) >= 4 or len(rest) == 3 and rest[2] not in ("status",
                                                                                                       "finalize")):
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise _not_served()
        resource, name = rest[0], rest[1] if len(rest) > 1 else ""
        subresource = rest[2] if len(rest) > 2 else ""
        record.resource, record.name, record.subresource, record.namespace = resource, name, subresource, namespace
        method = record.method
        watching = legacy_watch or _truthy(record.query.get("watch"))
        record.verb = {
            "GET": "get" if name else ("watch" if watching else "list"), "POST": "create", "PUT": "update",
            "PATCH": "patch", "DELETE": "delete" if name else "deletecollection",
        }.get(method, method.lower())
        res = self.registry.find(group, version, resource)
        return _Target(res, group, version, resource, namespace, name, subresource, legacy_watch)

    async def _dispatch(self, request: web.Request, record: RecordedRequest, target: _Target | None, body: bytes,
                        fault: Fault | None) -> web.StreamResponse:
        if target is None:
            return self._non_resource(record)
        res = target.res
        if res is None or (target.namespace is not None and not res.namespaced):
            raise _not_served()
        if target.subresource and target.subresource not in res.subresources:
            raise _not_served()
        if res.namespaced and target.name and target.namespace is None:
            raise _not_served()
        query = record.query
        dry_run = _dry_run(query)
        manager = _manager(query, record.user_agent)
        method, name, sub, ns = request.method, target.name, target.subresource, target.namespace
        if method == "GET":
            if sub == "log":
                return self._pod_log(res, ns, name, query)
            if name:
                return _json(self.registry.get(res, ns, name))
            if record.verb == "watch":
                return await serve_watch(request, self.registry, res, ns, query,
                                         bookmark_interval=self.bookmark_interval,
                                         drop_after=fault.drop_stream_after if fault else None,
                                         watchers=self._watchers)
            return _json(list_body(self.registry, res, ns, query))
        if method == "POST":
            if name:
                raise errors.method_not_allowed(method)
            return _json(self.registry.create(res, ns, _decode(body), manager=manager, dry_run=dry_run), 201)
        if method == "PUT" and name:
            obj, created = self.registry.update(res, ns, name, _decode(body), manager=manager, subresource=sub,
                                                dry_run=dry_run)
            return _json(obj, 201 if created else 200)
        if method == "PATCH" and name:
            content_type = record.content_type
            is_apply = content_type == "application/apply-patch+yaml"
            obj, created = self.registry.patch(res, ns, name, body, content_type,
                                               manager=query.get("fieldManager", "") if is_apply else manager,
                                               subresource=sub, dry_run=dry_run, force=_truthy(query.get("force")))
            return _json(obj, 201 if created else 200)
        if method == "DELETE":
            options = _delete_options(body, query)
            if name:
                obj, removed = self.registry.delete(res, ns, name, options, dry_run=dry_run)
                accepted = not removed and options.get("orphanDependents") is False
                return _json(obj, 202 if accepted else 200)
            return _json(self._delete_collection(res, ns, query, options, dry_run))
        raise errors.method_not_allowed(method)

    def _non_resource(self, record: RecordedRequest) -> web.Response:
        parts = [p for p in record.path.split("/") if p]
        resources = list(self.registry.resources.values())
        if record.path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok", content_type="text/plain")
        if parts == ["version"]:
            return _json(discovery.VERSION_INFO)
        if parts == ["api"]:
            return _json(discovery.api_versions(self.url.removeprefix("http://")))
        if parts == ["apis"]:
            return _json(discovery.group_list(resources))
        found = None
        if len(parts) == 2 and parts[0] == "api":
            found = discovery.resource_list(resources, "", parts[1])
        elif len(parts) == 2 and parts[0] == "apis":
            found = discovery.group(resources, parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            found = discovery.resource_list(resources, parts[1], parts[2])
        if found is None:
            raise _not_served()
        return _json(found)

    def _pod_log(self, res: Resource, namespace: str | None, name: str, query: dict[str, str]) -> web.Response:
        pod = self.registry.get(res, namespace, name)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container")
        if container is None:
            if len(containers) > 1:
                raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                         f"[{' '.join(containers)}]")
            container = containers[0] if containers else None
        elif container not in containers:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        text = self.pod_logs.get((namespace or "", name, container), self.pod_logs.get((namespace or "", name, None),
                                                                                        ""))
        text = _log_since(text, query.get("sinceTime"), _truthy(query.get("timestamps")))
        if query.get("tailLines", "").isdigit():
            lines = text.splitlines(keepends=True)
            tail = int(query["tailLines"])
            text = "".join(lines[-tail:]) if tail else ""
        if query.get("limitBytes", "").isdigit():
            text = text.encode()[: int(query["limitBytes"])].decode(errors="ignore")
        return web.Response(text=text, content_type="text/plain")

    def _delete_collection(self, res: Resource, namespace: str | None, query: dict[str, str],
                           options: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        selection = parse_selection(res, namespace, query)
        bucket = self.storage.bucket(bucket_of(res))
        chosen = [key for key, obj in bucket.items(selection.namespace) if selection.matches(obj)]
        items = []
        for key in chosen:
            obj, _ = self.registry.delete(res, key[0] or None, key[1], options, dry_run=dry_run)
            items.append(obj if res.custom else {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
        return {"kind": res.list_kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.storage.rv)}, "items": items}


# --------------------------------------------------------------------------------------- helpers


def _log_since(text: str, since: str | None, timestamps: bool) -> str:
    """The kubelet's view of a log stored with its timestamps: lines from `since` (RFC 3339) on, and
    the timestamps only when asked for (`timestamps=true`). Lines stored without one always pass."""
    from nvcre_tui.engine.parsers.base import parse_timestamp, split_kubelet_prefix

    start = parse_timestamp(since) if since else None
    kept = []
    for line in text.splitlines(keepends=True):
        moment, rest = split_kubelet_prefix(line)
        if moment is not None and start is not None and moment < start:
            continue
        kept.append(line if timestamps or moment is None else rest)
    return "".join(kept)


def _not_served() -> ApiError:
    return ApiError("NotFound", "the server could not find the requested resource")


def _json(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(value, separators=(",", ":")), status=status, content_type=JSON)


def _status_response(error: ApiError) -> web.Response:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else None
    return web.Response(body=json.dumps(error.status()), status=error.code, content_type=JSON, headers=headers)


def _fault_response(fault: Fault, record: RecordedRequest) -> web.Response:
    code = fault.status or 500
    reason = fault.reason or REASON_OF_CODE.get(code, "InternalError")
    message = fault.message or DEFAULT_MESSAGES.get(code, f"injected fault {code}")
    retry = None if fault.retry_after is None else int(round(fault.retry_after))
    error = ApiError(reason, message, code=code, name=record.name, group=record.api_group, kind=record.resource,
                     retry_after=retry)
    response = _status_response(error)
    if fault.retry_after is not None:
        response.headers["Retry-After"] = _retry_text(fault.retry_after)
    return response


def _retry_text(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body or b"{}")
    except ValueError as error:
        raise errors.bad_request(f"the object provided is unrecognized (must be of type JSON): {error}") from None


def _dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise errors.bad_request(f'Invalid dry run value "{value}": valid values are "All"')
    return True


def _manager(query: dict[str, str], user_agent: str) -> str:
    """fieldManager, else the user agent up to its first '/' (what the real server records)."""
    return query.get("fieldManager") or (user_agent.split("/")[0] or "unknown")[:128]


def _delete_options(body: bytes, query: dict[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if body.strip():
        try:
            options = json.loads(body)
        except ValueError as error:
            raise errors.bad_request(f"invalid DeleteOptions: {error}") from None
        if not isinstance(options, dict):
            raise errors.bad_request("DeleteOptions must be an object")
    if "gracePeriodSeconds" in query:
        options["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if "orphanDependents" in query:
        options["orphanDependents"] = _truthy(query["orphanDependents"])
    return options
