"""NVSentinel's view of a node, read-only, beside our verdicts (reference D.1 and D.2).

From the Node: the lifecycle manager's label `nvsentinel.nvidia.com/validation-state` (validating,
validation-pending, validation-failed) and its `active-validation-request` annotation; the certification
monitor's annotation `nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details` (a JSON array of
"<variant>/<reason>") and Fault Quarantine's taint `nvsentinel.dgxc.nvidia.com/nvcre-cert-failed`.
From the cluster: the ValidationRequests (nvsentinel.nvidia.com/v1alpha1, cluster-scoped) naming the node,
and the Certifications their test groups created (attempts[].objectName). A cluster without the CRD has
no NVSentinel: `open_validation_requests` returns None. Nothing here writes anything.

A ValidationRequest comes from someone else's controller (and a CRD that may not check its schema), so every reader
takes whatever it finds: a request whose name or spec.nodes cannot be read is left out and named by
`unreadable_requests`; a part of a readable one that cannot be read (a test group that is not a mapping, failedNodes
that is not a list of names) is left out and said in its Request's `note`. Nothing here raises on a bad object.
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
    note: str | None = None       # what of its status could not be read (and was left out)


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
                       + (f" · created {', '.join(request.certifications)}" if request.certifications else "")
                       + (f" (unreadable: {request.note})" if request.note else ""))
        return out


def _failures(text: object) -> tuple[list[str], str | None]:
    if text is None:
        return [], None
    if not isinstance(text, str):
        return [], "annotation is not text"
    try:
        value = json.loads(text)
    except ValueError:
        return [], f"annotation is not JSON: {text[:60]!r}"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return [], "annotation is not a JSON array of strings"
    return list(value), None


@dataclass(frozen=True)
class _Attempt:
    object_name: str | None
    failed_nodes: frozenset[str]


@dataclass(frozen=True)
class _Read:
    """What could be read of one ValidationRequest."""

    name: str
    nodes: frozenset[str]
    phase: str
    attempts: tuple[_Attempt, ...]
    problems: tuple[str, ...]


def _unreadable(request: object, index: int, why: str) -> str:
    metadata = request.get("metadata") if isinstance(request, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return f"ValidationRequest {name if isinstance(name, str) and name else f'#{index + 1}'}: {why}"


def _mappings(items: object, where: str, problems: list[str]) -> list[tuple[int, Mapping[str, Any]]]:
    """The entries of a list field that are mappings, by position; what is not (the list, an entry) joins `problems`."""
    if items is None:
        return []
    if not isinstance(items, list):
        problems.append(f"{where} is not a list")
        return []
    found = []
    for position, item in enumerate(items):
        if isinstance(item, Mapping):
            found.append((position, item))
        else:
            problems.append(f"{where}[{position}] is not a mapping")
    return found


def _read(request: object, index: int) -> _Read | str:
    """A ValidationRequest as far as it can be read, or why it cannot be (its name, or spec.nodes, is not there)."""
    if not isinstance(request, Mapping):
        return f"ValidationRequest #{index + 1}: not an object"
    metadata = request.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        return _unreadable(request, index, "metadata.name is missing")
    spec = request.get("spec")
    nodes = spec.get("nodes") if isinstance(spec, Mapping) else None
    if not isinstance(nodes, list):
        return _unreadable(request, index, "spec.nodes is not a list" if isinstance(spec, Mapping) else "spec is not a mapping")
    problems: list[str] = []
    named = set()
    for position, node in enumerate(nodes):
        node_name = node.get("name") if isinstance(node, Mapping) else None
        if isinstance(node_name, str) and node_name:
            named.add(node_name)
        else:
            problems.append(f"spec.nodes[{position}] is not {{name: ...}}")
    status = request.get("status")
    if status is None:
        status = {}
    elif not isinstance(status, Mapping):
        problems.append("status is not a mapping")
        status = {}
    phase = status.get("phase")
    if phase is not None and not isinstance(phase, str):
        problems.append("status.phase is not text")
        phase = None
    attempts = []
    for g, group in _mappings(status.get("testGroups"), "status.testGroups", problems):
        for a, attempt in _mappings(group.get("attempts"), f"status.testGroups[{g}].attempts", problems):
            where = f"status.testGroups[{g}].attempts[{a}]"
            object_name = attempt.get("objectName")
            if object_name is not None and not isinstance(object_name, str):
                problems.append(f"{where}.objectName is not text")
                object_name = None
            failed = attempt.get("failedNodes")
            if failed is not None and not (isinstance(failed, list) and all(isinstance(n, str) for n in failed)):
                problems.append(f"{where}.failedNodes is not a list of node names")
                failed = None
            attempts.append(_Attempt(object_name or None, frozenset(failed or ())))
    return _Read(name, frozenset(named), phase or "Pending", tuple(attempts), tuple(problems))


def _readable(requests: Sequence[object]) -> list[_Read]:
    return [read for index, request in enumerate(requests) if isinstance(read := _read(request, index), _Read)]


def _note(problems: Sequence[str]) -> str | None:
    if not problems:
        return None
    return "; ".join(problems[:2]) + (f" and {len(problems) - 2} more" if len(problems) > 2 else "")


def unreadable_requests(requests: Sequence[object]) -> list[str]:
    """One line per ValidationRequest too malformed to be shown at all (no name, no spec.nodes), in order."""
    return [read for index, request in enumerate(requests) if isinstance(read := _read(request, index), str)]


def requests_for(name: str, requests: Sequence[object]) -> list[Request]:
    """The ValidationRequests whose spec.nodes name the node, by name (unreadable ones left out)."""
    found = []
    for read in sorted(_readable(requests), key=lambda r: r.name):
        if name not in read.nodes:
            continue
        found.append(Request(read.name, read.phase, [a.object_name for a in read.attempts if a.object_name],
                             any(name in a.failed_nodes for a in read.attempts), _note(read.problems)))
    return found


def sentinel_view(node: Mapping[str, Any], requests: Sequence[object] = ()) -> SentinelView:
    """NVSentinel's view of one Node (and of the ValidationRequests naming it)."""
    metadata = meta_of(node)
    labels, annotations = labels_of(node), annotations_of(node)
    taint = next((t for t in node_spec(node).get("taints") or [] if isinstance(t, dict) and t.get("key") == TAINT_NVSENTINEL_FAILED), None)
    failures, note = _failures(annotations.get(ANNOTATION_NVSENTINEL_FAILURES))
    return SentinelView(labels.get(LABEL_NVSENTINEL_STATE), annotations.get(LABEL_NVSENTINEL_REQUEST),
                        f"{taint['key']}={taint.get('value', '')}:{taint.get('effect', '')}" if taint else None,
                        failures, note, requests_for(str(metadata.get("name") or ""), requests))


def certification_requests(requests: Sequence[object]) -> dict[str, str]:
    """Certification name -> the ValidationRequest that created it (unreadable parts left out)."""
    return {a.object_name: read.name for read in _readable(requests) for a in read.attempts if a.object_name}


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
