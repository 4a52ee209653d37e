"""LIST: selectors, resourceVersion semantics, limit/continue pagination over consistent snapshots."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from typing import Any

from nvcre_tui.engine.store.selectors import LabelSelector, parse_field_selector, parse_label_selector

from . import errors
from .answers import query_int
from .errors import ApiError, Cause
from .registry import Registry, bucket_of
from .resources import Resource
from .storage import Key, SnapshotTooOld

__all__ = ["Selection", "parse_selection", "list_body", "item_view"]

Obj = dict[str, Any]
# Field values the real field-label converters print when the field is unset.
UNSET_FIELD_VALUES = {"spec.unschedulable": "false", "spec.hostNetwork": "false", "status.successful": "0"}


class Selection:
    """Namespace + label selector + field selector, parsed once."""

    def __init__(self, namespace: str | None, labels: LabelSelector, fields: tuple[tuple[str, bool, str], ...]) -> None:
        self.namespace = namespace
        self.labels = labels
        self.fields = fields

    def single_name(self) -> str | None:
        """The one name a `metadata.name=x` field selector pins, if any (watch fan-out goes by name)."""
        return next((value for path, equal, value in self.fields if path == "metadata.name" and equal), None)

    @property
    def everything(self) -> bool:
        return not self.labels and not self.fields

    def matches(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata", {})
        if self.namespace is not None and meta.get("namespace", "") != self.namespace:
            return False
        if self.labels and not self.labels.matches(meta.get("labels")):
            return False
        return all((field_value(obj, path) == value) == equal for path, equal, value in self.fields)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        current = current.get(part) if isinstance(current, Mapping) else None
    if current is None:
        return UNSET_FIELD_VALUES.get(path, "")
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def parse_selection(res: Resource, namespace: str | None, query: Mapping[str, str]) -> Selection:
    try:
        labels = parse_label_selector(query.get("labelSelector") or None)
    except ValueError as error:
        raise errors.bad_request(f"unable to parse requirement: {error}") from None
    try:
        fields = parse_field_selector(query.get("fieldSelector") or None).terms
    except ValueError as error:
        raise errors.bad_request(f"invalid field selector: {error}") from None
    for path, _, _ in fields:
        if path not in res.field_labels:
            raise errors.bad_request(f'field label not supported: {path}')
    return Selection(namespace if res.namespaced else None, labels, fields)


LATEST = -1  # a continue token's revision meaning "the latest" (the real server's, from an expired token's 410)


def _encode_continue(rv: int, key: Key) -> str:
    start = f"{key[0]}/{key[1]}\x00" if key[0] else f"{key[1]}\x00"
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start, "ns": key[0], "name": key[1]})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, Key]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown version")
        return int(data["rv"]), (str(data["ns"]), str(data["name"]))
    except (ValueError, KeyError, TypeError, binascii.Error) as error:
        raise errors.bad_request(f"continue key is not valid: {error}") from None


def item_view(res: Resource, obj: Obj) -> Obj:
    """A list item: built-in items carry no apiVersion/kind on the real server; custom resources do."""
    if res.custom:
        return res.view(obj)
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def _too_large(rv: int, current: int) -> ApiError:
    return ApiError("Timeout", f"Too large resource version: {rv}, current: {current}",
                    causes=[Cause("ResourceVersionTooLarge", "Too large resource version")], retry_after=1)


def list_body(registry: Registry, res: Resource, namespace: str | None, query: Mapping[str, str]) -> Obj:
    selection = parse_selection(res, namespace, query)
    storage = registry.storage
    bucket = storage.bucket(bucket_of(res))
    token = query.get("continue") or ""
    rv_text = query.get("resourceVersion")
    match = query.get("resourceVersionMatch") or ""
    limit = max(0, query_int(query, "limit", 0) or 0)
    after: Key | None = None
    if token:
        if rv_text:
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        snapshot, after = _decode_continue(token)
        if snapshot == LATEST:  # a token an expired one's 410 gave: the rest as it is now
            snapshot = storage.rv
    elif match and not rv_text:
        raise errors.bad_request("resourceVersionMatch is forbidden unless resourceVersion is provided")
    elif rv_text in (None, ""):
        snapshot = storage.rv
    else:
        try:
            wanted = int(rv_text)
        except ValueError:
            raise errors.bad_request(f"invalid resource version: {rv_text!r}") from None
        if match == "Exact":
            if wanted > storage.rv:
                raise _too_large(wanted, storage.rv)
            snapshot = wanted
        elif wanted > storage.rv:
            raise _too_large(wanted, storage.rv)
        else:
            snapshot = storage.rv
            if wanted == 0 and match != "NotOlderThan":
                limit = 0  # served from the watch cache, which ignores limit for resourceVersion=0
    try:
        source: Iterator[tuple[Key, Obj]] = bucket.snapshot(snapshot, selection.namespace, after)
        items: list[Obj] = []
        last: Key | None = None
        more = False
        for key, obj in source:
            if limit and len(items) >= limit:
                more = True
                break
            last = key
            if selection.matches(obj):
                items.append(item_view(res, obj))
    except SnapshotTooOld:
        if token:
            raise errors.gone_continue(_encode_continue(LATEST, after) if after is not None else "") from None
        raise errors.expired(snapshot, bucket.evicted_rv) from None
    meta: Obj = {"resourceVersion": str(snapshot)}
    if more and last is not None:
        meta["continue"] = _encode_continue(snapshot, last)
        if selection.everything and snapshot == storage.rv:
            start, end = bucket.namespace_range(selection.namespace)
            import bisect

            meta["remainingItemCount"] = end - bisect.bisect_right(bucket.keys, last, start, end)
    return {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta, "items": items}
