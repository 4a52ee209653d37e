"""KubeStore: the ResourceStore protocol over any Kubernetes API server (the server is the database).

Generic over ResourceKind: paths come from group/version/plural, objects stay plain JSON dicts. The
server gives uids, resourceVersions, generations, timestamps, finalizer and garbage-collection
semantics; this class adds what the protocol promises on top: sorted, paginated lists; watches that
survive dropped streams; retries of transient errors; errors that name the object.

Time: the store's `clock` stamps Events (record_event); backoff waits use `RetryPolicy.sleep` (real
time by default, see retry.py). Transient failures are retried here, within the policy's attempts and
budget; past that the retryable error (TooManyRequests, ServerError, Timeout, Unavailable, with
`retry_after`) reaches the caller, which requeues. A watch raises Gone only for a 410: list again.
"""

from __future__ import annotations

import builtins
import copy
import re
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...clock import Clock
from ..errors import Conflict, Gone, Invalid, NotFound
from ..events import record_event as _record_event
from ..objects import identify, scoped_namespace
from ..protocol import LabelSelectorInput, ListResult, ResourceKind, WatchEvent
from ..selectors import parse_field_selector, parse_label_selector
from .answers import Subject
from .paths import collection_path, group_version_path, has_status_subresource, object_path
from .retry import RequestStats, RetryPolicy
from .transport import APPLY_PATCH, MERGE_PATCH, Query, Transport
from .watch import follow, with_type

if TYPE_CHECKING:
    from ...kube.config import KubeTarget

__all__ = ["KubeStore", "DEFAULT_PAGE_SIZE", "DEFAULT_WATCH_TIMEOUT"]

Obj = dict[str, Any]
DEFAULT_PAGE_SIZE = 500
# Seconds the server keeps one watch stream open (then we reopen it). A real server takes whole seconds;
# the emulator also takes fractions, so a test can see streams end without waiting long.
DEFAULT_WATCH_TIMEOUT = 300
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_WATCH_PATIENCE = 300.0  # seconds a watch waits out an unreachable server before raising
_DISCOVERY = "discovery"
STRICT = (("fieldValidation", "Strict"),)  # creates: unknown fields are refused, not dropped


class KubeStore:
    """A ResourceStore on a Kubernetes API server; one connection pool for the store's whole life."""

    def __init__(self, target: KubeTarget, clock: Clock, *, user_agent: str = "nvcre", retry: RetryPolicy | None = None,
                 page_size: int = DEFAULT_PAGE_SIZE, watch_timeout: float = DEFAULT_WATCH_TIMEOUT,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT, watch_patience: float = DEFAULT_WATCH_PATIENCE) -> None:
        if page_size < 1:
            raise ValueError(f"page size must be at least 1, got {page_size}")
        self.target = target
        self._clock = clock
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.watch_patience = watch_patience
        self.stats = RequestStats()
        self._transport = Transport(target.configuration, user_agent, retry or RetryPolicy(), self.stats,
                                    request_timeout, without_credentials=target.without_credentials, compression=target.compression,
                                    renew_credentials=target.renew_credentials, refresh_certificate=target.refresh_certificate,
                                    certificate_files=target.certificate_files)

    # ----- reads -------------------------------------------------------------------------------------

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        namespace = scoped_namespace(kind, namespace, name)
        subject = Subject(kind, name, namespace)
        found = await self._transport.request("get", "GET", object_path(kind, name, namespace), subject)
        return with_type(kind, found or {})

    async def list(self, kind: ResourceKind, namespace: str | None = None, label_selector: LabelSelectorInput = None,
                   field_selector: str | None = None, *, keep: Callable[[Obj], Obj | None] | None = None) -> ListResult:
        """`keep`: what of each item to keep (None: drop it), applied page by page: a list of a large cluster's pods
        is never held whole, only what the caller weighs."""
        namespace = namespace if kind.namespaced else None
        selectors = _selector_query(label_selector, field_selector)
        path = collection_path(kind, namespace)
        subject = Subject(kind, None, namespace)
        try:
            items, version = await self._pages(kind, path, subject, selectors, keep)
        except Gone:
            # The continue token expired mid-list (history compacted past the first page's revision): the rest in one
            # answer, which cannot expire, as client-go's pager does (FullListIfExpired). Paged again, a kind written to
            # faster than the server keeps history (thousands of Jobs of a running certification) expired every time.
            self.stats.relists += 1
            items, version = await self._pages(kind, path, subject, selectors, keep, paged=False)
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return ListResult(items, version)

    async def _pages(self, kind: ResourceKind, path: str, subject: Subject, selectors: Query,
                     keep: Callable[[Obj], Obj | None] | None = None, *, paged: bool = True) -> tuple[builtins.list[Obj], str]:
        items: builtins.list[Obj] = []
        token = ""
        version = "0"
        first = True
        while first or token:
            query = [*selectors, *((("limit", str(self.page_size)),) if paged else ())] + ([("continue", token)] if token else [])
            page = await self._transport.request("list", "GET", path, subject, query=query) or {}
            metadata = page.get("metadata") or {}
            if first:  # every page is served at the first page's resourceVersion
                version = str(metadata.get("resourceVersion") or "0")
                first = False
            token = metadata.get("continue") or ""
            typed = (with_type(kind, item) for item in page.get("items") or [])
            items.extend(typed if keep is None else (kept for item in typed if (kept := keep(item)) is not None))
        return items, version

    def watch(self, kind: ResourceKind, namespace: str | None = None, label_selector: LabelSelectorInput = None,
              resource_version: str | None = None) -> AsyncGenerator[WatchEvent, None]:
        return self._watch(kind, namespace if kind.namespaced else None, label_selector, resource_version)

    async def _watch(self, kind: ResourceKind, namespace: str | None, label_selector: LabelSelectorInput,
                     resource_version: str | None) -> AsyncGenerator[WatchEvent, None]:
        selectors = _selector_query(label_selector, None)
        if resource_version is None:
            listed = await self.list(kind, namespace, label_selector)
            for item in listed.items:
                yield WatchEvent("ADDED", item)
            resource_version = listed.resource_version
        async for event in follow(self._transport, kind, namespace, collection_path(kind, namespace), selectors,
                                  resource_version, self.watch_timeout, self.watch_patience):
            yield event

    # ----- writes ------------------------------------------------------------------------------------

    async def create(self, kind: ResourceKind, obj: Obj, *, dry_run: bool = False) -> Obj:
        """`dry_run` (beyond the protocol): the server admits and validates it, and stores nothing."""
        name, namespace = identify(kind, obj, allow_generate_name=True)
        body = _typed_copy(kind, obj)
        body.pop("status", None)  # the protocol drops status on create, for every kind alike
        subject = Subject(kind, name or body["metadata"].get("generateName"), namespace)
        # A generated name is not known before the answer: a retry after an ambiguous failure could
        # create a second object, so only surely-unapplied failures are retried. A named create that
        # is retried after its first try was committed meets AlreadyExists, as any clash does.
        # Strict: a field the server's schema does not know is refused (400, Invalid) instead of dropped with a
        # warning nobody reads: a TrainJob field a newer Trainer removed fails its run, named, and a CRD older than
        # this nvcre fails the create that needs the new field.
        created = await self._transport.request("create", "POST", collection_path(kind, namespace), subject,
                                                query=[*STRICT, *((("dryRun", "All"),) if dry_run else ())], body=body,
                                                idempotent=bool(name))
        return with_type(kind, created or {})

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        return await self._put(kind, obj, None)

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        return await self._put(kind, obj, "status" if has_status_subresource(kind) else None)

    async def finalize(self, kind: ResourceKind, obj: Obj) -> Obj:
        """PUT the finalize subresource: a Namespace's spec.finalizers, as kube-controller-manager's namespace
        controller empties them (`setup reset` on an API server without one)."""
        return await self._put(kind, obj, "finalize")

    async def _put(self, kind: ResourceKind, obj: Obj, subresource: str | None) -> Obj:
        name, namespace = identify(kind, obj)
        if not obj["metadata"].get("resourceVersion"):
            # Some kinds would take an unconditional PUT; the protocol never does (lost updates).
            raise Conflict.about(kind, name, namespace, "metadata.resourceVersion is required; get the object "
                                                        "and retry")
        subject = Subject(kind, name, namespace)
        updated = await self._transport.request("update", "PUT", object_path(kind, name, namespace, subresource),
                                                subject, body=_typed_copy(kind, obj))
        return with_type(kind, updated or {})

    async def patch_status(self, kind: ResourceKind, name: str, namespace: str | None,
                           status_patch: Mapping[str, Any], resource_version: str | None = None) -> Obj:
        namespace = scoped_namespace(kind, namespace, name)
        if not isinstance(status_patch, Mapping):
            raise Invalid.about(kind, name, namespace, f"status patch must be a mapping, got {status_patch!r}")
        body: Obj = {"status": copy.deepcopy(dict(status_patch))}
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": str(resource_version)}  # the server checks it: 409 if stale
        path = object_path(kind, name, namespace, "status" if has_status_subresource(kind) else None)
        patched = await self._transport.request("patch", "PATCH", path, Subject(kind, name, namespace), body=body,
                                                content_type=MERGE_PATCH)
        return with_type(kind, patched or {})

    async def delete(self, kind: ResourceKind, name: str, namespace: str | None = None,
                     uid: str | None = None) -> None:
        namespace = scoped_namespace(kind, namespace, name)
        # Background: the server's garbage collector removes dependents; nothing cascades client-side.
        options: Obj = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if uid:
            options["preconditions"] = {"uid": uid}
        subject = Subject(kind, name, namespace)
        try:
            await self._transport.request("delete", "DELETE", object_path(kind, name, namespace), subject,
                                          body=options, absent_after_retry_ok=True)
        except Conflict as error:
            if uid:  # the server's words are about "UID in precondition"; say which precondition failed
                raise Conflict.about(kind, name, namespace, f"uid precondition {uid} failed: "
                                     f"{error.message.split(': ', 1)[-1]}") from None
            raise

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        return await _record_event(self, self._clock, involved, type, reason, message)

    # ----- beyond the protocol -----------------------------------------------------------------------

    async def apply(self, kind: ResourceKind, obj: Obj, *, field_manager: str = "nvcre", force: bool = True,
                    dry_run: bool = False) -> Obj:
        """Server-side apply of `obj` (created when absent); the answer is the object as stored (or as it
        would be, with dry_run)."""
        name, namespace = identify(kind, obj)
        query = [("fieldManager", field_manager)] + ([("force", "true")] if force else [])
        query += [("dryRun", "All")] if dry_run else []
        applied = await self._transport.request("patch", "PATCH", object_path(kind, name, namespace),
                                                Subject(kind, name, namespace), query=query,
                                                body=_typed_copy(kind, obj), content_type=APPLY_PATCH)
        return with_type(kind, applied or {})

    async def server_version(self) -> tuple[int, int] | None:
        """The server's (major, minor) from /version; None when it does not say (a "31+" minor counts as 31)."""
        info = await self._transport.request("get", "GET", "/version", Subject(_DISCOVERY)) or {}
        major, minor = (re.match(r"\d+", str(info.get(key) or "")) for key in ("major", "minor"))
        return (int(major[0]), int(minor[0])) if major and minor else None

    async def served_groups(self) -> dict[str, builtins.list[str]]:
        """API group -> served versions (preferred first); the core group is ""."""
        core = await self._transport.request("get", "GET", "/api", Subject(_DISCOVERY)) or {}
        groups: dict[str, list[str]] = {"": list(core.get("versions") or [])}
        listed = await self._transport.request("get", "GET", "/apis", Subject(_DISCOVERY)) or {}
        for group in listed.get("groups") or []:
            versions = [v["version"] for v in group.get("versions") or [] if isinstance(v, dict)]
            preferred = (group.get("preferredVersion") or {}).get("version")
            if preferred in versions:
                versions.remove(preferred)
                versions.insert(0, preferred)
            groups[group.get("name", "")] = versions
        return groups

    async def served_resources(self, group_version: str) -> builtins.list[dict[str, Any]] | None:
        """The APIResourceList resources of `group/version` (or `v1`); None when it is not served."""
        group, _, version = group_version.rpartition("/")
        try:
            found = await self._transport.request("get", "GET", group_version_path(group, version),
                                                  Subject(f"{_DISCOVERY} {group_version}"))
        except NotFound:
            return None
        return list((found or {}).get("resources") or [])

    async def close(self) -> None:
        """End every watch and close the connection pool (the store cannot be used afterwards)."""
        await self._transport.close()


def _typed_copy(kind: ResourceKind, obj: Mapping[str, Any]) -> Obj:
    body = copy.deepcopy(dict(obj))
    body["apiVersion"], body["kind"] = kind.api_version, kind.kind
    return body


def _selector_query(label_selector: LabelSelectorInput, field_selector: str | None) -> builtins.list[tuple[str, str]]:
    """Selectors checked here (clear messages, as the embedded store) and sent in canonical form."""
    query = []
    labels = str(parse_label_selector(label_selector))
    if labels:
        query.append(("labelSelector", labels))
    fields = str(parse_field_selector(field_selector))
    if fields:
        query.append(("fieldSelector", fields))
    return query
