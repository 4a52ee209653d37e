"""Discovery documents (legacy, unaggregated form): /api, /apis, /apis/<group>, resource lists, /version."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from typing import Any

from .resources import Resource

__all__ = ["api_versions", "group_list", "group", "resource_list", "VERSION_INFO"]

VERSION_INFO = {
    "major": "1", "minor": "34", "emulationMajor": "1", "emulationMinor": "34", "gitVersion": "v1.34.0-nvcre-emulator",
    "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0", "compiler": "gc", "platform": "linux/amd64",
}
SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "log": ["get"], "finalize": ["update"],
                     "binding": ["create"], "token": ["create"]}


def api_versions(address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def _versions(resources: Iterable[Resource], name: str) -> list[str]:
    found = sorted({r.version for r in resources if r.group == name}, key=_version_priority)
    return found


def _version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version order: GA before beta before alpha, higher numbers first."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0)
    stability = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    return (stability, -int(match.group(1)), -int(match.group(3) or 0))


def group(resources: Iterable[Resource], name: str) -> dict[str, Any] | None:
    versions = _versions(resources, name)
    if not versions:
        return None
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(resources: list[Resource]) -> dict[str, Any]:
    names = sorted({r.group for r in resources if r.group})
    groups = [group(resources, n) for n in names]
    body = [{k: v for k, v in g.items() if k not in ("kind", "apiVersion")} for g in groups if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": body}


def _hash(res: Resource) -> str:
    digest = hashlib.sha256(f"{res.group}/{res.version}/{res.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def resource_list(resources: Iterable[Resource], group_name: str, version: str) -> dict[str, Any] | None:
    chosen = [r for r in resources if r.group == group_name and r.version == version]
    if not chosen:
        return None
    entries: list[dict[str, Any]] = []
    for res in sorted(chosen, key=lambda r: r.plural):
        entry: dict[str, Any] = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced,
                                 "kind": res.kind, "verbs": list(res.verbs)}
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        entry["storageVersionHash"] = _hash(res)
        entries.append(entry)
        for sub in res.subresources:
            entries.append({"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced,
                            "kind": res.kind, "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])})
    group_version = f"{group_name}/{version}" if group_name else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": entries}


# ------------------------------------------------------------------------ aggregated discovery (v2)

AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """client-go and kubectl ask for the aggregated form first (and fall back to the legacy one)."""
    return "as=APIGroupDiscoveryList" in accept and "v=v2" in accept and "v=v2beta1" not in accept.split(",")[0]


def aggregated(resources: Iterable[Resource], core: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of /api (core: true) or /apis."""
    resources = list(resources)
    names = [""] if core else sorted({r.group for r in resources if r.group})
    items = []
    for name in names:
        versions = []
        for version in _versions(resources, name):
            entries = []
            for res in sorted((r for r in resources if r.group == name and r.version == version),
                              key=lambda r: r.plural):
                kind = {"group": res.group, "version": res.version, "kind": res.kind}
                entry: dict[str, Any] = {"resource": res.plural, "responseKind": kind,
                                         "scope": "Namespaced" if res.namespaced else "Cluster",
                                         "singularResource": res.singular, "verbs": list(res.verbs)}
                if res.short_names:
                    entry["shortNames"] = list(res.short_names)
                if res.categories:
                    entry["categories"] = list(res.categories)
                if res.subresources:
                    entry["subresources"] = [{"subresource": sub, "responseKind": kind,
                                              "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])} for sub in res.subresources]
                entries.append(entry)
            versions.append({"version": version, "resources": entries, "freshness": "Current"})
        items.append({"metadata": {"name": name, "creationTimestamp": None}, "versions": versions})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}
