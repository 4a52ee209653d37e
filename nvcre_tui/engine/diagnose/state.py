"""Diagnose state: what a fault-isolation run carries between rounds, and its compact JSON form.

The state is plain immutable data, stored in Workflow status.orchestration.diagnose, so an engine restarted at any
moment continues the same run. Each node is named once, in the status list of where it stands (healthyNodes,
suspectNodes, ...); the domains and the tests name nodes by index into those names sorted, so the stored state
holds one copy of the fleet's names at 10,000 nodes; `readable()` expands them for the report and the console.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeGuard

Verdict = Literal["faulty", "intermittent", "healthy", "inconclusive"]
NodeStatus = Literal["untested", "suspect", "healthy", "faulty", "intermittent", "inconclusive"]

# A test's stage, in the order a run meets them; a round's `stage` is the furthest one it holds.
STAGES = ("screening", "inter", "split", "confirmation", "repeat", "recheck", "link")
TOKENS = {"screening": "screen", "inter": "inter", "split": "part", "confirmation": "confirm", "repeat": "repeat", "recheck": "recheck", "link": "link"}
VERDICTS: frozenset[str] = frozenset({"faulty", "intermittent", "healthy", "inconclusive"})
STATUS_KEYS: dict[NodeStatus, str] = {
    "untested": "untestedNodes",
    "suspect": "suspectNodes",
    "healthy": "healthyNodes",
    "faulty": "faultyNodes",
    "intermittent": "intermittentNodes",
    "inconclusive": "inconclusiveNodes",
}


def is_verdict(status: NodeStatus) -> TypeGuard[Verdict]:
    """Whether a node's status is a verdict (faulty, intermittent, healthy, inconclusive)."""
    return status in VERDICTS


class DiagnoseError(ValueError):
    """Bad input to a diagnose run (domains, outcomes, stored state); the message says what and where."""


@dataclass(frozen=True)
class Probe:
    """One group test: planned (passed is None) or recorded, with the measured value when the Job reported one. A
    recorded test whose passed is None ran nothing (record_round's `untested`): no evidence, kept for its name and nodes.

    Subjects are the nodes the test is about (a confirmation's suspect); the other nodes are reference partners."""

    round: int
    stage: str
    group: str
    nodes: tuple[str, ...]
    subjects: tuple[str, ...]
    passed: bool | None = None
    value: float | None = None
    reason: str | None = None  # why a failed test failed, when not its value (a crash, a timeout): then it, not the value, is said
    # The members a failed test's own log named (its Job blamed them, not the whole group): the failure is theirs,
    # no evidence about the links between cliques it crossed.
    culprits: tuple[str, ...] = ()
    # The members a hardware check flagged while the test ran (the Job's HardwareFailureDetected: the node health
    # check over the Node, e.g. a GPU fallen off the bus): direct evidence of their fault, whatever they passed before.
    hardware: tuple[str, ...] = ()

    @property
    def padding(self) -> tuple[str, ...]:
        """The reference partners: nodes that are not subjects."""
        return tuple(n for n in self.nodes if n not in self.subjects)

    def evidence(self) -> dict[str, Any]:
        """The report's view of this test."""
        data: dict[str, Any] = {"round": self.round, "stage": self.stage, "group": self.group, "nodes": list(self.nodes), "passed": self.passed}
        if self.value is not None:
            data["value"] = self.value
        if self.reason is not None:
            data["reason"] = self.reason
        if self.culprits:
            data["culprits"] = list(self.culprits)
        if self.hardware:
            data["hardware"] = list(self.hardware)
        return data


@dataclass(frozen=True)
class Note:
    """Something the report should say: a fabric fault, why nodes stayed inconclusive, a threshold out of reach."""

    round: int
    kind: str
    message: str
    nodes: tuple[str, ...] = ()
    cliques: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()  # the groups that are its evidence

    def to_dict(self) -> dict[str, Any]:
        """JSON form (empty lists left out)."""
        data: dict[str, Any] = {"round": self.round, "kind": self.kind, "message": self.message}
        for key in ("nodes", "cliques", "tests"):
            if getattr(self, key):
                data[key] = list(getattr(self, key))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Note:
        """Inverse of to_dict."""
        return cls(int(data["round"]), str(data["kind"]), str(data["message"]), *(_names(data.get(k) or []) for k in ("nodes", "cliques", "tests")))


@dataclass(frozen=True)
class DiagnoseState:
    """A diagnose run between two rounds: the current wave (plan), the full test history and every node's status."""

    min_group_size: int
    max_concurrent: int  # 0 = unlimited
    domains: tuple[tuple[str, tuple[str, ...]], ...]
    round: int
    status: tuple[tuple[str, NodeStatus], ...]
    plan: tuple[Probe, ...]
    tests: tuple[Probe, ...] = ()
    infrastructure_faults: tuple[Note, ...] = ()
    notes: tuple[Note, ...] = ()
    # No test spans two domains: onFailure of intra-rack runs on NVL domains with MNNVL on, where a test inside a
    # clique takes NVLink and one across cliques the network, which the category's threshold cannot judge alike.
    within_domains: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)  # unknown stored keys, kept

    @cached_property
    def node_status(self) -> dict[str, NodeStatus]:
        """Status by node name."""
        return dict(self.status)

    @cached_property
    def domain_of(self) -> dict[str, str]:
        """Topology domain by node name ("" = unlabelled)."""
        return {node: domain for domain, nodes in self.domains for node in nodes}

    @cached_property
    def all_nodes(self) -> tuple[str, ...]:
        """Every node, sorted: the index space of the stored tests."""
        return tuple(sorted(self.domain_of))

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
        """Every node's verdict once complete; before that, the nodes decided so far (they may still change)."""
        return {node: status for node, status in self.status if is_verdict(status)}

    def evidence(self, node: str) -> list[dict[str, Any]]:
        """The recorded tests this node took part in, in order: the tests that decided its verdict."""
        if node not in self.node_status:
            raise DiagnoseError(f"diagnose: unknown node {node!r}")
        return [p.evidence() for p in self.tests if node in p.nodes and p.passed is not None]

    # -- JSON ------------------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON with camelCase keys (a superset of DiagnoseStatus): tests name nodes by index into `nodes`."""
        index = {n: i for i, n in enumerate(self.all_nodes)}
        by_status: dict[str, list[str]] = {key: [] for key in STATUS_KEYS.values()}
        for node, status in self.status:
            by_status[STATUS_KEYS[status]].append(node)
        return {
            **self.extra,
            "stage": self.stage,
            "round": self.round,
            "complete": self.complete,
            "minGroupSize": self.min_group_size,
            "maxConcurrent": self.max_concurrent,
            "domains": {domain: _ranges(sorted(index[n] for n in nodes)) for domain, nodes in self.domains},
            **by_status,  # every list, empty too: the Workflow status is merge-patched
            "plan": [_encode(p, index) for p in self.plan],
            "tests": [_encode(p, index) for p in self.tests],
            "infrastructureFaults": [n.to_dict() for n in self.infrastructure_faults],
            "notes": [n.to_dict() for n in self.notes],
            **({"withinDomains": True} if self.within_domains else {}),
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
        except (TypeError, ValueError, AttributeError, IndexError) as err:
            raise DiagnoseError(f"diagnose state: malformed ({err})") from None
        listed = sorted(state.node_status)
        if len(listed) != len(state.status) or listed != sorted(state.domain_of):
            raise DiagnoseError("diagnose state: the node status lists do not cover each node of 'domains' exactly once")
        return state

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> DiagnoseState:
        status = [(node, status) for status, key in STATUS_KEYS.items() for node in _names(data.get(key) or [])]
        names = tuple(sorted(node for node, _ in status))
        domains = tuple((str(domain), _domain_nodes(nodes, names)) for domain, nodes in data["domains"].items())
        known = {"stage", "round", "complete", "minGroupSize", "maxConcurrent", "domains", "plan", "tests", "infrastructureFaults", "notes", "withinDomains", *STATUS_KEYS.values()}
        within = data.get("withinDomains", False)
        if not isinstance(within, bool):
            raise DiagnoseError(f"diagnose state: 'withinDomains' must be true or false, got {within!r:.40}")
        return cls(
            min_group_size=int(data["minGroupSize"]),
            max_concurrent=int(data.get("maxConcurrent") or 0),
            domains=domains,
            round=int(data["round"]),
            status=tuple(sorted(status)),
            plan=tuple(_decode(p, names) for p in data["plan"]),
            tests=tuple(_decode(p, names) for p in data["tests"]),
            infrastructure_faults=tuple(Note.from_dict(n) for n in data.get("infrastructureFaults") or []),
            notes=tuple(Note.from_dict(n) for n in data.get("notes") or []),
            within_domains=within,
            extra={k: v for k, v in data.items() if k not in known},
        )


def _encode(probe: Probe, index: Mapping[str, int]) -> dict[str, Any]:
    """A test as {r, s, g, n, u, p, v, x, c, h}: round, stage, group, node indices, subject indices, passed, value, reason,
    culprit indices, indices of the members a hardware check flagged."""
    data: dict[str, Any] = {"r": probe.round, "s": probe.stage, "g": probe.group, "n": _ranges([index[n] for n in probe.nodes])}
    if probe.subjects != probe.nodes:
        data["u"] = _ranges([index[n] for n in probe.subjects])
    if probe.passed is not None:
        data["p"] = probe.passed
    if probe.value is not None:
        data["v"] = probe.value
    if probe.reason is not None:
        data["x"] = probe.reason
    if probe.culprits:
        data["c"] = _ranges([index[n] for n in probe.culprits])
    if probe.hardware:
        data["h"] = _ranges([index[n] for n in probe.hardware])
    return data


def _decode(data: Mapping[str, Any], names: tuple[str, ...]) -> Probe:
    passed = data.get("p")
    if passed is not None and not isinstance(passed, bool):
        raise DiagnoseError(f"diagnose state: test {data.get('g')!r} has a non-boolean 'p' (passed)")
    if data["s"] not in STAGES:
        raise DiagnoseError(f"diagnose state: test {data.get('g')!r} has unknown stage {data['s']!r}")
    nodes = _indexed(data["n"], names)
    subjects = _indexed(data["u"], names) if "u" in data else nodes
    value, reason = data.get("v"), data.get("x")
    if reason is not None and not isinstance(reason, str):
        raise DiagnoseError(f"diagnose state: test {data.get('g')!r} has a non-string 'x' (reason)")
    culprits = _indexed(data["c"], names) if "c" in data else ()
    if not set(culprits) <= set(nodes):
        raise DiagnoseError(f"diagnose state: test {data.get('g')!r} names culprits ('c') that are not its members")
    hardware = _indexed(data["h"], names) if "h" in data else ()
    if not set(hardware) <= set(nodes):
        raise DiagnoseError(f"diagnose state: test {data.get('g')!r} names hardware-flagged nodes ('h') that are not its members")
    return Probe(int(data["r"]), str(data["s"]), str(data["g"]), nodes, subjects, passed, None if value is None else float(value), reason, culprits,
                 hardware)


def _ranges(indices: list[int]) -> list[Any]:
    """Indices with runs of consecutive ones as [first, last] pairs: a screening group of 5,000 nodes is one pair."""
    out: list[Any] = []
    for i in indices:
        last = out[-1] if out else None
        if isinstance(last, list) and last[1] + 1 == i:
            last[1] = i
        elif isinstance(last, int) and last + 1 == i:
            out[-1] = [last, i]
        else:
            out.append(i)
    return out


def _unranges(items: Any) -> list[int]:
    if not isinstance(items, list):
        raise DiagnoseError(f"diagnose state: expected a list of node indices, got {items!r:.80}")
    out: list[int] = []
    for item in items:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(v, int) for v in item):
            out += range(item[0], item[1] + 1)
        elif isinstance(item, int) and not isinstance(item, bool):
            out.append(item)
        else:
            raise DiagnoseError(f"diagnose state: bad node index {item!r:.40}")
    return out


def _domain_nodes(value: Any, names: tuple[str, ...]) -> tuple[str, ...]:
    """A domain's nodes: indices into the sorted status lists (or names, as earlier engines stored them)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    return _indexed(value, names)


def _indexed(value: Any, names: tuple[str, ...]) -> tuple[str, ...]:
    """Nodes named by index ranges into `names`."""
    indices = _unranges(value)
    if any(not 0 <= i < len(names) for i in indices):
        raise DiagnoseError(f"diagnose state: node index out of range (the status lists name {len(names)} nodes)")
    return tuple(names[i] for i in indices)


def _names(value: Any) -> tuple[str, ...]:
    """A list of names, checked (a string here is a mistake, not a list of letters)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise DiagnoseError(f"diagnose state: expected a list of node names, got {value!r:.80}")
    return tuple(value)


def readable(data: Mapping[str, Any]) -> dict[str, Any]:
    """The stored (compact) state with domains, tests and plan spelled out by node name, for the report and the console."""
    try:
        state = DiagnoseState.from_dict(data)
    except DiagnoseError:
        return dict(data)
    out = dict(data)
    out["domains"] = {domain: list(nodes) for domain, nodes in state.domains}
    out["tests"] = [{**p.evidence(), "subjects": list(p.subjects)} for p in state.tests]
    out["plan"] = [{**p.evidence(), "subjects": list(p.subjects)} for p in state.plan]
    return out
