"""Node health CEL: an expression over the whole Node object (`node`); true means the node is unhealthy.

Missing fields. Kubernetes omits `spec.unschedulable` when it is false, so the default expression
`node.spec.unschedulable == true` meets a missing key on most healthy nodes. CEL has no "missing is
false", and cel-python raises an evaluation error there. We treat any evaluation error (a missing key
is the usual one) as "not flagged" and keep the error on the verdict, so a caller can show it: this
check only narrows which nodes are reported, it never passes a workload.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import celpy

from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.judging.cel import CelExpressionError, build_program, cel_type_name, one_line, require_bool, run_program

NODE_VARIABLE = "node"
DEFAULT_NODE_HEALTH = "node.spec.unschedulable == true"

# Trial inputs for the compile-time bool check: a cordoned node and a bare one. Errors on these
# (missing fields) are allowed; a non-bool result such as `node.metadata.name` is refused.
_NODE_PROBES: tuple[dict[str, Any], ...] = (
    {"metadata": {"name": "probe", "labels": {}}, "spec": {"unschedulable": True}, "status": {}},
    {"metadata": {"name": "probe"}},
)


class NodeHealthError(ValueError):
    """A node health expression that cannot be used; the message is one line."""


@dataclass(frozen=True)
class NodeVerdict:
    """One node's health result. `error` says why the expression could not be evaluated (node not flagged)."""

    node: str
    unhealthy: bool
    error: str | None = None


@dataclass(frozen=True)
class NodeHealthCheck:
    """A compiled node health expression."""

    expression: str
    program: celpy.Runner = field(repr=False, compare=False)

    def assess(self, node: Mapping[str, Any]) -> NodeVerdict:
        """Evaluate on one Node (Kubernetes JSON shape); never raises."""
        if not isinstance(node, Mapping):
            return NodeVerdict("<unnamed>", False, f"node is not a mapping: {type(node).__name__}")
        name = node_name(node) or "<unnamed>"
        try:
            document = celpy.json_to_cel(dict(node))
        except (TypeError, ValueError) as err:
            return NodeVerdict(name, False, f"node is not JSON data: {one_line(str(err))}")
        result, error = run_program(self.program, {NODE_VARIABLE: document})
        if error is not None:
            return NodeVerdict(name, False, error)
        if not isinstance(result, celpy.celtypes.BoolType):
            return NodeVerdict(name, False, f"expression gave {cel_type_name(result)}, not bool")
        return NodeVerdict(name, bool(result))

    def unhealthy(self, node: Mapping[str, Any]) -> bool:
        """True when the expression holds for the node; an evaluation error counts as healthy."""
        return self.assess(node).unhealthy


@lru_cache(maxsize=256)
def _compile_cached(expression: str) -> NodeHealthCheck:
    try:
        program = build_program(expression, NODE_VARIABLE)
        probes = [{NODE_VARIABLE: celpy.json_to_cel(probe)} for probe in _NODE_PROBES]
        require_bool(program, expression, probes, must_evaluate=False)
    except CelExpressionError as err:
        raise NodeHealthError(f"node health: {err}") from None
    return NodeHealthCheck(expression, program)


def compile_node_health(expression: str = DEFAULT_NODE_HEALTH) -> NodeHealthCheck:
    """Compile (cached) a node health expression (1..2048 characters, reads only `node`)."""
    if not isinstance(expression, str):
        raise NodeHealthError(f"node health: CEL expression must be a string, got {type(expression).__name__}")
    return _compile_cached(expression)


# Verdicts by (expression, node uid, node resourceVersion), with the Node they judged: a Node that did not change is
# not evaluated again (every Job of a node looks at it several times; CEL over a whole Node is the costly part). The
# key alone does not name one Node: simulated sessions in one process repeat uids and resourceVersions, and a fleet's
# gpu-node-02 read healthy was judged by another session's verdict on its cordoned namesake (HardwareFailureDetected
# in a run that never cordoned it). A verdict is reused only for the same body or an equal one (a dict comparison,
# far cheaper than CEL).
_VERDICTS: dict[tuple[str, str, str], tuple[Mapping[str, Any], bool]] = {}
_VERDICTS_LIMIT = 65_536


def is_flagged(check: NodeHealthCheck, node: Mapping[str, Any]) -> bool:
    """Whether the expression flags the node (an evaluation error counts as healthy), remembered per Node version."""
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    uid, rv = (meta.get("uid"), meta.get("resourceVersion")) if isinstance(meta, Mapping) else (None, None)
    if not isinstance(uid, str) or not isinstance(rv, str):
        return check.unhealthy(node)
    key = (check.expression, uid, rv)
    found = _VERDICTS.get(key)
    if found is not None and (found[0] is node or found[0] == node):
        return found[1]
    if len(_VERDICTS) >= _VERDICTS_LIMIT:
        _VERDICTS.clear()
    verdict = check.unhealthy(node)
    _VERDICTS[key] = (node, verdict)
    return verdict


def flagged_nodes(check: NodeHealthCheck, nodes: Iterable[Mapping[str, Any]]) -> list[str]:
    """Names of the nodes the expression flags as unhealthy, sorted."""
    return sorted(node_name(node) or "<unnamed>" for node in nodes if is_flagged(check, node))
