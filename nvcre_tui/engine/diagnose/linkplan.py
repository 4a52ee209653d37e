"""Link tests: a failed cross-clique test narrowed down to the degraded link (a pair of cliques, or one clique's
uplink), and inter-clique coverage (every link outside the search proven, in as few tests as the named links allow).
The rules they serve are in the package docstring; the planner hands over its wave and the references it sees."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from nvcre_tui.engine.diagnose import fabric, links
from nvcre_tui.engine.diagnose.evidence import NAMING_SPAN, UPLINK_PARTNERS, Evidence
from nvcre_tui.engine.diagnose.links import Hypothesis
from nvcre_tui.engine.diagnose.state import DiagnoseState
from nvcre_tui.engine.diagnose.wave import Wave

MAX_LINK_WAVES = 8  # waves of link tests before a fabric fault is reported as not localised
DIRECT = 4  # candidate link hypotheses tested one by one at or below this count (or when such tests all fit a wave)
LINK_RECHECKS = 6  # tests of a link a pass had cleared, for a suspect whose failures all crossed it (see recheck)


class LinkPlanner:
    """Adds link and coverage tests to a wave."""

    def __init__(self, state: DiagnoseState, ev: Evidence, wave: Wave, clear_by_clique: Mapping[str, list[str]],
                 partner_uses: Counter[str]) -> None:
        self.state, self.ev, self.wave, self.m = state, ev, wave, state.min_group_size
        self.domain_of = state.domain_of
        self.clear_by_clique = clear_by_clique
        self.partner_uses = partner_uses  # shared with the planner: representatives and partners spread the load
        self.link_used: Counter[str] = Counter(n for i in ev.open_hypotheses for n in ev.members[i])

    def link_ok(self, a: str, b: str) -> bool:
        """Whether a test over these two cliques is known not to be hit by a link fault."""
        if a == b or not a or not b:
            return True
        if self.state.within_domains:
            return False
        h = links.pair(a, b)
        return h in self.ev.eliminated and not self._named_covers(h)

    # -- the search ---------------------------------------------------------------------------------------------

    def _cap(self) -> int:
        """Waves of link tests before the search gives up (more under maxConcurrent, where a wave holds fewer)."""
        mc = self.state.max_concurrent
        return MAX_LINK_WAVES * (math.ceil(16 / mc) if mc else 1)

    def _waves(self) -> int:
        """Waves that held link tests so far."""
        return len({t.round for t in self.state.tests if t.stage == "link"})

    def _reps(self, clique: str, count: int) -> list[str] | None:
        """Reference nodes of a clique for a link test: not busy, preferably not in an earlier failed link test."""
        free = [n for n in self.clear_by_clique.get(clique, []) if n not in self.wave.busy]
        if len(free) < count:
            return None
        return sorted(free, key=lambda n: (self.link_used[n], self.partner_uses[n], n))[:count]

    def _cross_test(self, stage: str, cliques: Sequence[str]) -> bool:
        """One test over these cliques: one representative each, more from the same cliques up to minGroupSize."""
        per = links.reps_each(self.m, len(cliques))
        chosen: list[str] = []
        for clique in cliques:
            reps = self._reps(clique, per)
            if reps is None:
                reps = self._reps(clique, 1)
                if reps is None:
                    return False
            chosen += reps
        if len(chosen) < self.m:
            return False
        ok = self.wave.add(stage, chosen)
        if ok:
            self.partner_uses.update(chosen)
        return ok

    def search(self) -> None:
        """Link tests for the failed cross-clique tests of references that nothing else explains."""
        if self.state.within_domains:
            return
        ev = self.ev
        suspects = ev.link_suspects()
        if not suspects or self._waves() >= self._cap():
            return
        apart = fabric.apart_from_two_uplinks(ev)
        if apart:  # two bad uplinks, or the whole fabric: a test between two other cliques tells them apart
            free = sorted(apart, key=lambda c: -sum(1 for n in self.clear_by_clique.get(c, []) if n not in self.wave.busy))
            self._cross_test("link", sorted(free[:2]))
        single = ev.single_fault_candidates()
        if len(single) > DIRECT and not ev.disjoint_pair(sorted(suspects)) and not self._direct_fits(single):
            # One failure so far (or several sharing a node): the same cliques again with other representatives,
            # beside the search. A pass clears every link at once (a flaky representative is then left to the
            # splits, where the search alone would go on for waves); a failure is the disjoint support a link fault
            # needs anyway. Direct tests of every candidate do both.
            self._cross_test("link", sorted({c for h in single for c in links.cliques_of(h)}))
        targets = [single] if single else sorted(set(suspects.values()), key=lambda hs: (len(hs), sorted(hs)))
        for candidates in targets:
            if len(candidates) <= DIRECT or self._direct_fits(candidates):
                planned: Counter[tuple[str, ...]] = Counter()
                # Two of each where they fit without maxConcurrent (always for the last candidate): two disjoint
                # failures name a link at once, and a link failing part of the time is seldom taken for another (a
                # flaky uplink failing one of its pairs' single tests looked like that pair in 3 of 8 runs). Under
                # maxConcurrent the second tests would push the wave's confirmations to the next.
                doubled = not self.state.max_concurrent and self._direct_fits(candidates, 2)
                copies = 2 if len(candidates) == 1 or doubled else 1
                for h in sorted(candidates, key=lambda h: (h[0] != "uplink", h)):  # an uplink test tells it from the pairs
                    for cliques in self._direct(h, candidates) * copies:
                        if planned[cliques] < copies and self._cross_test("link", cliques):
                            planned[cliques] += 1
            else:
                involved = sorted({c for h in candidates for c in links.cliques_of(h)})
                # Sides that split the candidates most evenly first (under maxConcurrent only a few run per wave);
                # a side holding no candidate tells nothing.
                sides = []
                for side in links.bit_sides(involved, self._waves()):
                    inside = sum(1 for h in candidates if links.in_test(h, frozenset(side)))
                    if inside:
                        sides.append((abs(2 * inside - len(candidates)), side))
                for _, side in sorted(sides):
                    self._cross_test("link", side)
                if not sides:
                    for h in sorted(candidates):
                        for cliques in self._direct(h, candidates):
                            self._cross_test("link", cliques)

    def recheck(self) -> None:
        """A pair of cliques every failure of a suspect crossed, after a pass had cleared it, tested again with other
        representatives (LINK_RECHECKS times at most): failures there without the suspect name the link failing part
        of the time (fabric.flaky_link) and clear the suspect; passes leave the suspect to its confirmations."""
        if self.state.within_domains:
            return
        ev = self.ev
        done: set[Hypothesis] = set()
        for node in sorted(n for n in ev.by_node if ev.needs_test(n) and ev.passes.get(n, 0)):
            # One pair every failure crossed (not a failed test over many cliques alone: it crossed them all; nor
            # failures beside several cliques, a flaky node's, which share only its uplink).
            failed = ev.failures(node)
            if not failed or any(not ev.reference(p, node) for i in failed for p in ev.members[i] - {node}):
                continue  # another suspect in a failure explains it as well as the link
            pairs = links.common((ev.spans[i] for i in failed), False)
            if len(pairs) != 1:
                continue
            [h] = pairs
            if h in done or h not in ev.eliminated or h in ev.named:
                continue
            done.add(h)
            tried = sum(1 for i, t in enumerate(ev.tests) if t.stage == "link" and node not in ev.members[i] and links.in_test(h, ev.spans[i]))
            if tried < LINK_RECHECKS:
                self._cross_test("link", list(links.cliques_of(h)))

    def _direct_fits(self, candidates: frozenset[Hypothesis], copies: int = 1) -> bool:
        """Whether a test of each candidate fits this wave (Jobs left under maxConcurrent, free representatives in
        each clique for every test, as many per test as _cross_test takes): then one wave names the link, where a
        search over the bits of the cliques' index takes two or more."""
        tests = {cliques for h in candidates for cliques in self._direct(h, candidates)}
        if len(self.wave.probes) + copies * len(tests) > self.wave.limit:
            return False
        per_clique: Counter[str] = Counter()
        for cliques in tests:  # as many representatives per clique as _cross_test takes
            per_clique.update(dict.fromkeys(cliques, copies * links.reps_each(self.m, len(cliques))))
        return all(sum(1 for n in self.clear_by_clique.get(c, []) if n not in self.wave.busy) >= count for c, count in per_clique.items())

    def _direct(self, h: Hypothesis, candidates: frozenset[Hypothesis]) -> list[tuple[str, ...]]:
        """Tests that single out one hypothesis: the pair itself; an uplink against as many other cliques as it takes
        to name it (UPLINK_PARTNERS failed one by one), those in no failed test with it first (their pair with it
        is no suspect of its own: a failure there is the uplink's), then those not in a candidate pair."""
        if h[0] == "pair":
            return [h[1:]]
        failed = self.ev.failed_partners(h[1], list(self.ev.link_suspects()))  # as the naming counts them
        beside = {c for i in self.ev.open_hypotheses if h[1] in self.ev.spans[i] and len(self.ev.spans[i]) <= NAMING_SPAN
                  for c in self.ev.spans[i]}  # (a failed test over most cliques holds them all)
        others = sorted((c for c in self.clear_by_clique if c and c != h[1] and not self._named_covers(links.pair(h[1], c))),
                        key=lambda c: (c in failed, c in beside, links.pair(h[1], c) in candidates, c))
        return [tuple(sorted((h[1], c))) for c in others[: max(1, UPLINK_PARTNERS - len(failed))]]

    # -- coverage of links between cliques -----------------------------------------------------------------------

    def crosses_unproven_links(self) -> bool:
        """A suspect failed over an unproven link: until a passing test proves it, such failures blame nobody (and
        with most of a clique faulty, confirmations across it keep failing without proving it)."""
        ev = self.ev
        if self.state.within_domains or ev.noisy or ev.named or ev.link_suspects():
            return False  # flaky nodes about, or a link under search: its own tests decide
        return any(ev.link_risky(i) for i in ev.open_hypotheses if any(ev.needs_test(n) for n in ev.members[i]))

    def coverage(self, early: bool = False) -> None:
        """One test across every clique whose links to another clique are not proven yet (and not under search);
        `early`: ahead of the wave's confirmations, and only once every clique has a reference. None within domains."""
        if self.state.within_domains:
            return
        ev = self.ev
        cliques = sorted(c for c, nodes in self.clear_by_clique.items() if c and any(n not in self.wave.busy for n in nodes))
        if len(cliques) < 2 or sum(1 for t in self.state.tests if t.stage == "inter") >= self._cap():
            return
        waiting = {self.domain_of[n] for n in self.domain_of if n not in ev.by_node or ev.needs_test(n)} - set(cliques)
        if waiting and (early or self.wave.probes):
            return  # a clique with no healthy node yet: cover it later in one test with the others
        # Under search: the hypotheses that alone explain the failures so far, else every open one. The other
        # links are proven in the same wave as the search (a failure there is new evidence, not lost time).
        searched = set(ev.single_fault_candidates()) or (set().union(*ev.link_suspects().values()) if ev.link_suspects() else set())
        uncovered = [links.pair(a, b) for k, a in enumerate(cliques) for b in cliques[k + 1 :]]
        planned = [frozenset(self.domain_of[n] for n in p.nodes) for p in self.wave.probes if p.stage == "inter"]
        uncovered = [h for h in uncovered if h not in ev.eliminated and h not in searched and not self._named_covers(h)
                     and not any(links.in_test(h, spans) for spans in planned)]  # an earlier call this wave covers it
        while uncovered:  # as many disjoint tests as it takes, in one wave: a named link splits the cliques in two
            chosen: list[str] = []
            degree = Counter(c for h in uncovered for c in links.cliques_of(h))
            for clique in sorted(degree, key=lambda c: (-degree[c], c)):
                trial = frozenset([*chosen, clique])
                if not any(links.in_test(h, trial) for h in ev.named) and not any(links.in_test(h, trial) for h in searched):
                    chosen.append(clique)
            members = set(chosen)
            left = [h for h in uncovered if not set(links.cliques_of(h)) <= members]
            if len(chosen) < 2 or len(left) == len(uncovered) or not self._cross_test("inter", sorted(chosen)):
                return
            uncovered = left

    def _named_covers(self, h: Hypothesis) -> bool:
        return any(links.in_test(n, frozenset(links.cliques_of(h))) for n in self.ev.named)
