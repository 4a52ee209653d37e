"""The DCGM hostengine the catalog's diagnostics talk to: `dcgmi diag --host <service>.<namespace>.svc:5555`.

DCGM level 4 does not run the diagnostics in its own pod: the pod (pinned to its node, holding the node's
GPUs so nothing else lands there) asks the GPU Operator's standalone nv-hostengine (`dcgm.enabled=true`:
DaemonSet and Service `nvidia-dcgm`, port 5555, `internalTrafficPolicy: Local`, so each node's pod reaches
its own node's hostengine). `setup status` says whether each target the catalog names is served; without
it every dcgmi run fails to connect (the exporter's embedded hostengine is not reachable as a Service).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.bodies import meta_of

__all__ = ["HostEngine", "hostengine_targets", "hostengine_found"]

DEFAULT_PORT = 5555


@dataclass(frozen=True)
class HostEngine:
    """One `--host` target: the Service, its namespace and port, and the catalog entries using it."""

    service: str
    namespace: str
    port: int
    entries: tuple[str, ...]

    @property
    def address(self) -> str:
        return f"{self.service}.{self.namespace}.svc:{self.port}"


def _host_argument(words: list[str]) -> str | None:
    if not words or words[0] != "dcgmi":
        return None
    for index, word in enumerate(words):
        if word == "--host" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--host="):
            return word.split("=", 1)[1]
    return None


def _parse(address: str) -> tuple[str, str, int] | None:
    """`svc.ns.svc[.cluster.local]:port` -> (svc, ns, port); None for a host that is not a Service name."""
    host, _, port = address.partition(":")
    parts = host.split(".")
    if len(parts) < 3 or parts[2] != "svc" or (port and not port.isdigit()):
        return None
    return parts[0], parts[1], int(port) if port else DEFAULT_PORT


def hostengine_targets(entries: Mapping[str, Any]) -> list[HostEngine]:
    """Every Service a catalog entry's `dcgmi --host` names (entries: key -> CatalogEntry)."""
    found: dict[tuple[str, str, int], list[str]] = {}
    for key, entry in sorted(entries.items()):
        run = ((entry.template.get("framework") or {}).get("exec")) or {}
        words = [str(w) for w in [*(run.get("command") or []), *(run.get("args") or [])]]
        address = _host_argument(words)
        target = _parse(address) if address else None
        if target is not None:
            found.setdefault(target, []).append(key)
    return [HostEngine(svc, ns, port, tuple(keys)) for (svc, ns, port), keys in sorted(found.items())]


def hostengine_found(target: HostEngine, services: Iterable[Mapping[str, Any]]) -> bool:
    """Whether `services` (listed Service objects) serve the target: that name, namespace and port."""
    for service in services:
        meta = meta_of(service)
        if meta.get("name") == target.service and meta.get("namespace") == target.namespace:
            ports = ((service.get("spec") or {}).get("ports")) or []
            return any(int(p.get("port") or 0) == target.port for p in ports if isinstance(p, Mapping))
    return False
