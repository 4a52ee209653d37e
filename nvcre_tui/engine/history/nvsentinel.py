"""NVSentinel's view of a node, read-only, beside our verdicts (reference D.1 and D.2).

From the Node: the lifecycle manager's label `nvsentinel.nvidia.com/validation-state` (validating,
validation-pending, validation-failed) and its `active-validation-request` annotation; the certification
monitor's annotation `nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details` (a JSON array of
"<variant>/<reason>") and Fault Quarantine's taint `nvsentinel.dgxc.nvidia.com/nvcre-cert-failed`.
From the cluster: the ValidationRequests (nvsentinel.nvidia.com/v1alpha1, cluster-scoped) naming the node,
and the Certifications their test groups created (attempts[].objectName). A cluster without the CRD has
no NVSentinel: `open_validation_requests` returns None. Nothing here writes anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcre_tui.engine.api.bodies import annotations_of, labels_of, meta_of, node_spec
from nvcre_tui.engine.api.vocabulary import ANNOTATION_NVSENTINEL_FAILURES, LABEL_NVSENTINEL_REQUEST, LABEL_NVSENTINEL_STATE, TAINT_NVSENTINEL_FAILED
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.protocol import VALIDATION_REQUEST, ResourceStore

Obj = dict[str, Any]

# Overlay marks, most telling first: (state, glyph, what it means). One narrow cell each, never colour alone.
MARKS: tuple[tuple[str, str, str], ...] = (
    ("quarantined", "⚑", "tainted nvcre-cert-failed"),
    ("validation-failed", "✖", "validation failed"),
    ("validating", "⧗", "validating"),
    ("validation-pending", "◔", "validation pending"),
    ("reported", "⚐", "certification failures reported"),
)
MARK_OF = {state: glyph for state, glyph, _ in MARKS}


@dataclass(frozen=True)
class Request:
    """One ValidationRequest as it concerns a node."""

    name: str
    phase: str
    certifications: list[str]     # what its test groups created (our Certifications)
    failed_here: bool             # an attempt names this node among its failed nodes


@dataclass(frozen=True)
class SentinelView:
    """What NVSentinel says of one node."""

    validation_state: str | None = None
    active_request: str | None = None
    taint: str | None = None                      # `key=value:effect` of the cert-failed taint
    failures: list[str] = field(default_factory=list)
    failures_note: str | None = None              # the annotation was not the JSON array it should be
    requests: list[Request] = field(default_factory=list)

    @property
    def state(self) -> str | None:
        """The overlay's state: quarantined > validation-* > reported; None when NVSentinel says nothing."""
        if self.taint:
            return "quarantined"
        if self.validation_state in MARK_OF:
            return self.validation_state
        return "reported" if self.failures or self.failures_note else None

    @property
    def mark(self) -> str | None:
        return MARK_OF.get(self.state or "")

    def lines(self) -> list[str]:
        """Plain lines for the node screen."""
        out = [f"validation state: {self.validation_state or 'none'}" + (f" (active request {self.active_request})" if self.active_request else "")]
        out.append(f"quarantine taint: {self.taint or 'none'}")
        out.append("reported failures: " + (", ".join(self.failures) or "none") + (f" ({self.failures_note})" if self.failures_note else ""))
        for request in self.requests:
            out.append(f"ValidationRequest {request.name}: {request.phase}" + (" · failed this node" if request.failed_here else "")
                       + (f" · created {', '.join(request.certifications)}" if request.certifications else ""))
        return out


def _failures(text: str | None) -> tuple[list[str], str | None]:
    if text is None:
        return [], None
    try:
        value = json.loads(text)
    except ValueError:
        return [], f"annotation is not JSON: {text[:60]!r}"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return [], "annotation is not a JSON array of strings"
    return list(value), None


def requests_for(name: str, requests: Sequence[Obj]) -> list[Request]:
    """The ValidationRequests whose spec.nodes name the node, by name."""
    found = []
    for request in sorted(requests, key=lambda r: r["metadata"]["name"]):
        nodes = {n.get("name") for n in (request.get("spec") or {}).get("nodes") or [] if isinstance(n, dict)}
        if name not in nodes:
            continue
        status = request.get("status") or {}
        attempts = [a for g in status.get("testGroups") or [] for a in g.get("attempts") or [] if isinstance(a, dict)]
        found.append(Request(request["metadata"]["name"], str(status.get("phase") or "Pending"),
                             [str(a["objectName"]) for a in attempts if a.get("objectName")],
                             any(name in (a.get("failedNodes") or []) for a in attempts)))
    return found


def sentinel_view(node: Mapping[str, Any], requests: Sequence[Obj] = ()) -> SentinelView:
    """NVSentinel's view of one Node (and of the ValidationRequests naming it)."""
    metadata = meta_of(node)
    labels, annotations = labels_of(node), annotations_of(node)
    taint = next((t for t in node_spec(node).get("taints") or [] if isinstance(t, dict) and t.get("key") == TAINT_NVSENTINEL_FAILED), None)
    failures, note = _failures(annotations.get(ANNOTATION_NVSENTINEL_FAILURES))
    return SentinelView(labels.get(LABEL_NVSENTINEL_STATE), annotations.get(LABEL_NVSENTINEL_REQUEST),
                        f"{taint['key']}={taint.get('value', '')}:{taint.get('effect', '')}" if taint else None,
                        failures, note, requests_for(str(metadata.get("name") or ""), requests))


def certification_requests(requests: Sequence[Obj]) -> dict[str, str]:
    """Certification name -> the ValidationRequest that created it."""
    return {a["objectName"]: r["metadata"]["name"] for r in requests for g in (r.get("status") or {}).get("testGroups") or []
            for a in g.get("attempts") or [] if isinstance(a, dict) and a.get("objectName")}


async def open_validation_requests(store: ResourceStore) -> WatchCache | None:
    """A watch cache of the cluster's ValidationRequests, or None when the cluster serves none (no NVSentinel)."""
    try:
        await store.list(VALIDATION_REQUEST)
    except StoreError:
        return None
    cache = WatchCache(store, (VALIDATION_REQUEST,))
    try:
        await cache.start()
    except StoreError:
        return None
    return cache
