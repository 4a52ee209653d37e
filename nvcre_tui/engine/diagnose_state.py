"""Diagnose state: what a fault-isolation run carries between rounds, its JSON form, and the questions asked of it.

The state is plain immutable data. It is stored in Workflow status.orchestration.diagnose (camelCase keys; the
fields DiagnoseStatus declares, stage, round and healthy/suspect/faulty/inconclusiveNodes, plus extra keys the open
model keeps), so an engine restarted at any moment continues the same run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

Verdict = Literal["faulty", "healthy", "inconclusive"]
NodeStatus = Literal["untested", "suspect", "healthy", "faulty", "inconclusive"]

# Test stages in the order a node meets them; a round's `stage` is the furthest one it holds.
STAGES = ("intra-screening", "inter-screening", "split", "retest", "confirmation", "reconfirmation")
VERDICTS: frozenset[str] = frozenset({"faulty", "healthy", "inconclusive"})
STATUS_KEYS: dict[NodeStatus, str] = {
    "untested": "untestedNodes",
    "suspect": "suspectNodes",
    "healthy": "healthyNodes",
    "faulty": "faultyNodes",
    "inconclusive": "inconclusiveNodes",
}


class DiagnoseError(ValueError):
    """Bad input to a diagnose run (domains, outcomes, stored state); the message says what and where."""


@dataclass(frozen=True)
class Probe:
    """One group test: planned (passed is None) or recorded. Subjects are the nodes it is about; the rest is padding."""

    round: int
    stage: str
    group: str
    nodes: tuple[str, ...]
    subjects: tuple[str, ...]
    pool: int = 0
    passed: bool | None = None

    @property
    def padding(self) -> tuple[str, ...]:
        """Healthy partners added so the group reaches minGroupSize (inter-domain representatives count here too)."""
        return tuple(n for n in self.nodes if n not in self.subjects)

    def evidence(self) -> dict[str, Any]:
        """The report's view of this test."""
        return {"round": self.round, "stage": self.stage, "group": self.group, "nodes": list(self.nodes), "passed": self.passed}

    def to_dict(self) -> dict[str, Any]:
        """JSON form; a planned test has no `passed` key."""
        data = {**self.evidence(), "subjects": list(self.subjects), "pool": self.pool}
        if self.passed is None:
            del data["passed"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Probe:
        """Inverse of to_dict."""
        passed = data.get("passed")
        if passed is not None and not isinstance(passed, bool):
            raise DiagnoseError(f"diagnose state: test {data.get('group')!r} has a non-boolean 'passed'")
        if data["stage"] not in STAGES:
            raise DiagnoseError(f"diagnose state: test {data.get('group')!r} has unknown stage {data['stage']!r}")
        nodes, subjects = _names(data["nodes"]), _names(data["subjects"])
        return cls(int(data["round"]), str(data["stage"]), str(data["group"]), nodes, subjects, int(data["pool"]), passed)


@dataclass(frozen=True)
class Note:
    """Something the report should say about a run: a transient, a fabric fault, why nodes stayed inconclusive."""

    round: int
    kind: str
    group: str
    nodes: tuple[str, ...]
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"round": self.round, "kind": self.kind, "group": self.group, "nodes": list(self.nodes), "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Note:
        """Inverse of to_dict."""
        return cls(int(data["round"]), str(data["kind"]), str(data["group"]), _names(data["nodes"]), str(data["message"]))


@dataclass(frozen=True)
class DiagnoseState:
    """A diagnose run between two rounds: the current plan, the full test history and every node's status."""

    min_group_size: int
    domains: tuple[tuple[str, tuple[str, ...]], ...]
    round: int
    status: tuple[tuple[str, NodeStatus], ...]
    plan: tuple[Probe, ...]
    tests: tuple[Probe, ...] = ()
    waiting: tuple[tuple[str, str], ...] = ()  # (stage, node): solo tests held back until a healthy partner exists
    infrastructure_faults: tuple[Note, ...] = ()
    notes: tuple[Note, ...] = ()

    @cached_property
    def node_status(self) -> dict[str, NodeStatus]:
        """Status by node name."""
        return dict(self.status)

    @cached_property
    def domain_of(self) -> dict[str, str]:
        """Topology domain by node name ("" = unlabelled)."""
        return {node: domain for domain, nodes in self.domains for node in nodes}

    @property
    def complete(self) -> bool:
        """No test is left to run; every node has its verdict."""
        return not self.plan

    @property
    def stage(self) -> str:
        """The furthest stage the current round reaches, or "complete"."""
        if self.complete:
            return "complete"
        return max((p.stage for p in self.plan), key=STAGES.index)

    @property
    def node_minutes(self) -> int:
        """Cost so far: the sum of group sizes over every recorded test (each Job runs about the same time)."""
        return sum(len(p.nodes) for p in self.tests)

    def verdicts(self) -> dict[str, Verdict]:
        """Every node's verdict once complete; before that, only the nodes already decided (decisions are final)."""
        return {node: status for node, status in self.status if status in VERDICTS}  # type: ignore[misc]

    def evidence(self, node: str) -> list[dict[str, Any]]:
        """The recorded tests this node was the subject of, in order: the tests that decided its verdict."""
        if node not in self.node_status:
            raise DiagnoseError(f"diagnose: unknown node {node!r}")
        return [p.evidence() for p in self.tests if node in p.subjects]

    def to_dict(self) -> dict[str, Any]:
        """JSON form with camelCase keys (a superset of DiagnoseStatus)."""
        by_status: dict[str, list[str]] = {key: [] for key in STATUS_KEYS.values()}
        for node, status in self.status:
            by_status[STATUS_KEYS[status]].append(node)
        return {
            "stage": self.stage,
            "round": self.round,
            "complete": self.complete,
            "minGroupSize": self.min_group_size,
            "domains": {domain: list(nodes) for domain, nodes in self.domains},
            **by_status,
            "plan": [p.to_dict() for p in self.plan],
            "tests": [p.to_dict() for p in self.tests],
            "waiting": [{"stage": stage, "node": node} for stage, node in self.waiting],
            "infrastructureFaults": [n.to_dict() for n in self.infrastructure_faults],
            "notes": [n.to_dict() for n in self.notes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DiagnoseState:
        """Inverse of to_dict; DiagnoseError names what is missing or malformed."""
        try:
            state = cls._read(data)
        except DiagnoseError:
            raise
        except KeyError as err:
            raise DiagnoseError(f"diagnose state: missing field {err.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as err:
            raise DiagnoseError(f"diagnose state: malformed ({err})") from None
        listed = sorted(state.node_status)
        if len(listed) != len(state.status) or listed != sorted(state.domain_of):
            raise DiagnoseError("diagnose state: the node status lists do not cover each node of 'domains' exactly once")
        return state

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> DiagnoseState:
        status = [(node, status) for status, key in STATUS_KEYS.items() for node in _names(data.get(key) or [])]
        return cls(
            min_group_size=int(data["minGroupSize"]),
            domains=tuple((str(domain), _names(nodes)) for domain, nodes in data["domains"].items()),
            round=int(data["round"]),
            status=tuple(sorted(status)),
            plan=tuple(Probe.from_dict(p) for p in data["plan"]),
            tests=tuple(Probe.from_dict(p) for p in data["tests"]),
            waiting=tuple((str(w["stage"]), str(w["node"])) for w in data.get("waiting") or []),
            infrastructure_faults=tuple(Note.from_dict(n) for n in data.get("infrastructureFaults") or []),
            notes=tuple(Note.from_dict(n) for n in data.get("notes") or []),
        )


def _names(value: Any) -> tuple[str, ...]:
    """A list of node names, checked (a string here is a mistake, not a list of letters)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise DiagnoseError(f"diagnose state: expected a list of node names, got {value!r:.80}")
    return tuple(value)
