"""Diagnose (testScale diagnose): topology-aware adaptive group testing that isolates faulty nodes.

Pure functions over data, no I/O, clock or randomness. OR model: a group fails if any member is faulty; a flaky
member fails some of its tests. A run is a sequence of rounds; every group of a round can run at the same time.

  round 0  intra-screening one group per topology domain (unlabelled nodes: chunks of max(ceil(sqrt N), 2))
  round 1  inter-screening one healthy representative per passed screening group; a failure is a fabric fault
           split           a failed pool of p nodes becomes p // m parts of m..2m-1 nodes (m = minGroupSize), or goes
                           straight to solo confirmation when that is cheaper (small pools)
  later    retest          every part passed although the pool failed: the pool once more (transient or not)
           confirmation    each suspect with m-1 healthy partners (same domain first, rotated so groups are disjoint)
           reconfirmation  one more solo test when a verdict lacks independent corroboration

Splitting straight into parts of ~m nodes instead of halving: with one faulty node in a pool of p, halving spends
p + p/2 + ... node-minutes over log2(p/m) rounds before its confirmation round; parts spend p + m*m in two rounds.

A node is "faulty" only when a solo test failed and another failing test, sharing none of its partners, is explained
by no other suspect (and, with partners from another domain, only once a test across domains has passed and no fabric
fault is known); it is "healthy" only when it passed a test; everything else ends "inconclusive" with a note.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from nvcre_tui.engine.diagnose_state import (
    DiagnoseError,
    DiagnoseState,
    Note,
    NodeStatus,
    Probe,
    Verdict,
)
from nvcre_tui.engine.grouping import Group

# The stage's word in group names: r0-screen-3, r1-inter-0, r1-part-2-0, r2-retest-0, r2-confirm-5, r3-reconfirm-0.
STAGE_TOKENS = {
    "intra-screening": "screen",
    "inter-screening": "inter",
    "split": "part",
    "retest": "retest",
    "confirmation": "confirm",
    "reconfirmation": "reconfirm",
}

__all__ = ["DiagnoseError", "DiagnoseState", "Verdict", "plan_round", "record_round", "start"]


def start(domains: Mapping[str, Sequence[str]], min_group_size: int) -> DiagnoseState:
    """A new run over these topology domains (domain -> node names; "" = unlabelled nodes) and its screening round."""
    if isinstance(min_group_size, bool) or not isinstance(min_group_size, int) or min_group_size < 1:
        raise DiagnoseError(f"diagnose: minGroupSize must be an integer >= 1, got {min_group_size!r}")
    cleaned = _check_domains(domains)
    groups: list[tuple[str, ...]] = []
    for domain, nodes in cleaned:
        size = max(math.ceil(math.sqrt(len(nodes))), 2) if domain == "" else len(nodes)
        groups += [nodes[i : i + size] for i in range(0, len(nodes), size)]
    plan = tuple(Probe(0, "intra-screening", f"r0-screen-{i}", g, g, pool=i) for i, g in enumerate(groups))
    status = tuple(sorted((node, "untested") for _, nodes in cleaned for node in nodes))
    return DiagnoseState(min_group_size, cleaned, 0, status, plan)  # type: ignore[arg-type]


def plan_round(state: DiagnoseState) -> list[Group]:
    """The groups (Jobs) of the current round; [] once complete. Names are unique over the run and DNS-safe."""
    domain_of = state.domain_of
    return [Group(p.group, p.nodes, tuple(sorted({domain_of[n] for n in p.nodes} - {""}))) for p in state.plan]


def record_round(state: DiagnoseState, passed: Mapping[str, bool]) -> DiagnoseState:
    """The state after the current round, given each group's outcome (missing or timed out = failed)."""
    if state.complete:
        raise DiagnoseError("diagnose: the run is complete; there is no round to record")
    if not isinstance(passed, Mapping):
        raise DiagnoseError(f"diagnose round {state.round}: outcomes must map group names to true/false")
    planned = {p.group for p in state.plan}
    unknown = sorted(str(group) for group in set(passed) - planned)
    if unknown:
        raise DiagnoseError(f"diagnose round {state.round}: outcomes for groups not in this round: {', '.join(unknown)}")
    wrong = sorted(group for group, ok in passed.items() if not isinstance(ok, bool))
    if wrong:
        raise DiagnoseError(f"diagnose round {state.round}: outcome must be true or false for: {', '.join(wrong)}")
    done = tuple(replace(p, passed=passed.get(p.group, False)) for p in state.plan)
    return _Round(state, done).next_state()


class _Round:
    """The working copy used while recording one round and planning the next (mutable here, immutable outside)."""

    def __init__(self, state: DiagnoseState, done: tuple[Probe, ...]) -> None:
        self.state, self.done, self.m = state, done, state.min_group_size
        self.round = state.round + 1
        self.history = state.tests + done
        self.status: dict[str, NodeStatus] = dict(state.node_status)
        self.domain_of = state.domain_of
        self.faults = list(state.infrastructure_faults)
        self.notes = list(state.notes)
        self.pools: list[tuple[str, ...]] = []  # suspect pools to split or confirm
        self.retests: list[tuple[str, ...]] = []
        self.solos: list[tuple[str, str]] = list(state.waiting)  # (stage, node)

    def next_state(self) -> DiagnoseState:
        """Interpret the round, then plan the next one."""
        by_stage = {stage: [p for p in self.done if p.stage == stage] for stage in STAGE_TOKENS}
        for probe in by_stage["intra-screening"]:
            if probe.passed:
                self._mark(probe.subjects, "healthy")
            else:
                self.pools.append(probe.subjects)
        for probe in by_stage["inter-screening"]:
            if not probe.passed:
                self._fabric_fault(probe)
        self._record_splits(by_stage["split"])
        for probe in by_stage["retest"]:
            self._record_retest(probe)
        self._record_solos(by_stage["confirmation"] + by_stage["reconfirmation"])
        plan, waiting = self._plan(by_stage["intra-screening"])
        status = tuple(sorted(self.status.items()))
        faults, notes = tuple(self.faults), tuple(self.notes)
        return DiagnoseState(self.m, self.state.domains, self.round, status, plan, self.history, waiting, faults, notes)

    # -- interpreting results ----------------------------------------------------------------------------------

    def _mark(self, nodes: Sequence[str], status: NodeStatus) -> None:
        for node in nodes:
            self.status[node] = status

    def _note(self, kind: str, probe: Probe | None, nodes: Sequence[str], message: str) -> None:
        rnd, group = (probe.round, probe.group) if probe else (self.state.round, "")
        self.notes.append(Note(rnd, kind, group, tuple(nodes), message))

    def _fabric_fault(self, probe: Probe) -> None:
        """Nodes that passed their own screening are not blamed for a failing inter-domain test."""
        domains = sorted({self.domain_of[n] for n in probe.nodes})
        message = f"inter-domain test failed although each domain passed its own screening: fabric between {', '.join(domains)}"
        self.faults.append(Note(probe.round, "fabric", probe.group, probe.nodes, message))

    def _record_splits(self, parts: list[Probe]) -> None:
        for pool in sorted({p.pool for p in parts}):
            members = [p for p in parts if p.pool == pool]
            if all(p.passed for p in members):  # the pool failed, yet none of its parts did
                self.retests.append(tuple(sorted(n for p in members for n in p.subjects)))
                continue
            for part in members:
                if part.passed:
                    self._mark(part.subjects, "healthy")
                else:
                    self.solos += [("confirmation", node) for node in part.subjects]

    def _record_retest(self, probe: Probe) -> None:
        if probe.passed:
            self._mark(probe.subjects, "healthy")
            message = "the pool failed once, then its parts and the pool itself passed"
            self._note("transient", probe, probe.subjects, message)
            return
        self._mark(probe.subjects, "inconclusive")
        message = "the pool failed twice but each of its parts passed: a flaky node or a fault between nodes; not guessing"
        self._note("inconsistent", probe, probe.subjects, message)

    def _record_solos(self, solos: list[Probe]) -> None:
        """Decide each confirmed suspect against the other results of the round (decisions are final)."""
        healthy_like = {n for n, s in self.status.items() if s == "healthy"} | {p.subjects[0] for p in solos if p.passed}
        for probe in solos:
            node = probe.subjects[0]
            if not probe.passed:
                self._failed_solo(probe, node, healthy_like)
            elif self._unexplained(node, healthy_like) < 2:
                self.status[node] = "healthy"
            elif probe.stage == "confirmation":
                self.solos.append(("reconfirmation", node))
            else:
                self.status[node] = "inconclusive"
                message = "passed two confirmations after failing two tests no other node explains"
                self._note("inconsistent", probe, [node], message)

    def _failed_solo(self, probe: Probe, node: str, healthy_like: set[str]) -> None:
        partners = set(probe.padding)
        if any(self.domain_of[p] != self.domain_of[node] for p in partners) and not self._fabric_ok():
            self.status[node] = "inconclusive"
            why = "the fabric failed its inter-domain test" if self.faults else "no test across domains has passed yet"
            self._note("fabric", probe, [node], f"confirmation with partners from another domain failed and {why}")
        elif any(self._independent(t, node, partners, healthy_like) for t in self.history if not t.passed and t is not probe):
            self.status[node] = "faulty"
        elif probe.stage == "confirmation":
            self.solos.append(("reconfirmation", node))
        else:
            self.status[node] = "inconclusive"
            message = "failed its confirmations, but no independent failing test corroborates it"
            self._note("inconsistent", probe, [node], message)

    def _fabric_ok(self) -> bool:
        """Whether a failing test across domains can blame a node: no fabric fault, and some cross-domain test passed."""
        crossing = (t for t in self.history if t.passed and len({self.domain_of[n] for n in t.nodes}) > 1)
        return not self.faults and any(crossing)

    def _independent(self, test: Probe, node: str, partners: set[str], healthy_like: set[str]) -> bool:
        """A failing test of this node that no other suspect explains and that shares none of the given partners."""
        others = set(test.nodes) - {node}
        return node in test.subjects and others <= healthy_like and not others & partners

    def _unexplained(self, node: str, healthy_like: set[str]) -> int:
        """How many failing tests of this node no other suspect explains."""
        return sum(1 for t in self.history if not t.passed and self._independent(t, node, set(), healthy_like))

    # -- planning the next round -------------------------------------------------------------------------------

    def _plan(self, screened: list[Probe]) -> tuple[tuple[Probe, ...], tuple[tuple[str, str], ...]]:
        healthy = sorted(n for n, s in self.status.items() if s == "healthy")
        plan: list[Probe] = []
        used: Counter[str] = Counter()
        reps = [p.subjects[0] for p in screened if p.passed]
        if len(reps) >= 2:
            plan.append(Probe(self.round, "inter-screening", f"r{self.round}-inter-0", tuple(reps), (), pool=0))
            used.update(reps)
        for i, pool in enumerate(self.pools):
            parts = _parts(pool, self.m, have_partners=bool(healthy) or self.m == 1)
            if parts is None:
                self.solos += [("confirmation", node) for node in pool]
            else:
                names = [f"r{self.round}-part-{i}-{j}" for j in range(len(parts))]
                plan += [Probe(self.round, "split", name, part, part, pool=i) for name, part in zip(names, parts, strict=True)]
        for i, pool in enumerate(self.retests):
            plan.append(Probe(self.round, "retest", f"r{self.round}-retest-{i}", pool, pool, pool=i))
        self._mark([n for pool in self.pools for n in pool], "suspect")
        blocked: list[tuple[str, str]] = []
        counts: Counter[str] = Counter()
        for stage, node in sorted(set(self.solos), key=lambda s: (s[1], s[0])):
            partners = self._partners(node, healthy, used)
            if self.m > 1 and not partners:
                blocked.append((stage, node))
                continue
            name = f"r{self.round}-{STAGE_TOKENS[stage]}-{counts[stage]}"
            counts[stage] += 1
            plan.append(Probe(self.round, stage, name, (node, *partners), (node,)))
        return tuple(plan), self._hold(blocked, plan)

    def _hold(self, blocked: list[tuple[str, str]], plan: list[Probe]) -> tuple[tuple[str, str], ...]:
        """Blocked solos wait while other tests could still clear a partner; otherwise they stay inconclusive."""
        if any(p.subjects for p in plan):
            return tuple(blocked)
        nodes = [node for _, node in blocked]
        self._mark(nodes, "inconclusive")
        if nodes:
            self._note("no-reference", None, nodes, "no healthy node left to confirm these suspects against")
        return ()

    def _partners(self, node: str, healthy: list[str], used: Counter[str]) -> tuple[str, ...]:
        """Up to m-1 healthy partners, never this node's earlier partners while others exist (so a second failure is
        independent evidence); then untainted, unused this round, same domain. While the fabric is unproven (no
        cross-domain test passed yet, or one failed) a same-domain partner is reused rather than crossing domains."""
        if self.m == 1 or not healthy:
            return ()
        previous = {n for t in self.history if node in t.subjects for n in t.padding}
        tainted = {n for t in self.history if not t.passed for n in t.padding}
        home, fabric_ok = self.domain_of[node], self._fabric_ok()

        def preference(h: str) -> tuple[bool, bool, int, bool, str]:
            away = self.domain_of[h] != home
            return (h in tainted, away and not fabric_ok, used[h], away, h)

        candidates = [h for h in healthy if h not in previous] or healthy
        chosen = tuple(sorted(sorted(candidates, key=preference)[: self.m - 1]))
        used.update(chosen)
        return chosen


def _parts(pool: tuple[str, ...], m: int, *, have_partners: bool) -> list[tuple[str, ...]] | None:
    """Split a failed pool into p // m contiguous parts, or None when solo confirmation is cheaper (or the only way).

    Cost model, one faulty node: parts p + (largest part) * m node-minutes; solo confirmation p * m (one round less).
    """
    p, k = len(pool), len(pool) // m
    if k < 2:
        return None
    base, extra = divmod(p, k)
    sizes = [base + 1] * extra + [base] * (k - extra)
    if have_partners and p * m <= p + sizes[0] * m:
        return None
    starts = [sum(sizes[:i]) for i in range(k)]
    return [pool[s : s + size] for s, size in zip(starts, sizes, strict=True)]


def _check_domains(domains: Mapping[str, Sequence[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Domains sorted by name with sorted node lists; DiagnoseError names bad or duplicated nodes."""
    if not isinstance(domains, Mapping):
        raise DiagnoseError(f"diagnose: domains must map a domain name to node names, got {type(domains).__name__}")
    seen: dict[str, str] = {}
    cleaned: list[tuple[str, tuple[str, ...]]] = []
    for domain, nodes in sorted(domains.items(), key=lambda item: str(item[0])):
        names_ok = isinstance(nodes, list | tuple) and all(isinstance(n, str) and n for n in nodes)
        if not isinstance(domain, str) or not names_ok:
            raise DiagnoseError(f"diagnose: domain {domain!r} must be a name with a list of non-empty node names")
        for node in nodes:
            if node in seen:
                twice = seen[node] == domain
                where = f"twice in domain {domain!r}" if twice else f"in domains {seen[node]!r} and {domain!r}"
                raise DiagnoseError(f"diagnose: node {node!r} appears {where}")
            seen[node] = domain
        if nodes:
            cleaned.append((domain, tuple(sorted(nodes))))
    if not seen:
        raise DiagnoseError("diagnose: no nodes to diagnose")
    return tuple(cleaned)
