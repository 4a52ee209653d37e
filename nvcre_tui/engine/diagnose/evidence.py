"""What the recorded tests prove: convicted nodes, reference (healthy) nodes, suspects, and named link faults.

Recomputed from the whole test history after every round (a fixpoint: a conviction explains other nodes' failures,
which makes them references, which makes further failures clean). The rules are stated in the package docstring.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cached_property

from nvcre_tui.engine.diagnose import fabric, links, posterior
from nvcre_tui.engine.diagnose.links import Hypothesis
from nvcre_tui.engine.diagnose.state import DiagnoseState, Probe, Verdict

INTERMITTENT_FAILURES = 2  # clean, verified failures with disjoint partners that (with the odds) make a node that also passed intermittent
OUTWEIGH = 5  # a failure nobody explains stops counting once the node has passed this many tests per such failure
SPARSE_OUTWEIGH = 8  # ... in a fleet whose bad share (see posterior.bad_share) is below SPARSE_SHARE
SPARSE_SHARE = 0.3
RECHECK_PASSES = 5  # passes in all a node with a failure only an intermittent node explains needs to count healthy
# Cliques whose tests with one clique failed one by one that name its uplink: one more than the link faults the
# smallest explanation takes at once, so that as many degraded pairs of the clique never pass for its uplink.
UPLINK_PARTNERS = links.MOST_FAULTS + 1
NAMING_SPAN = 4  # cliques one failed test supporting a link fault spans at most (see _narrow)
CONVICTION_ODDS = 2000  # posterior odds (bad : healthy) a conviction needs besides the rules above (see odds())


class Evidence:
    """The inferences drawn from one state's tests."""

    def __init__(self, state: DiagnoseState) -> None:
        self.state = state
        # A recorded test that ran nothing (passed None: its node flagged before its workload started) is no evidence.
        self.tests: Sequence[Probe] = [t for t in state.tests if t.passed is not None]
        self.domain_of = state.domain_of
        self.fleet_cliques = sorted({d for d, _ in state.domains if d})
        self.uplinks = len(self.fleet_cliques) >= 3  # with two cliques an uplink and the pair look the same
        self.spans = [frozenset(self.domain_of[n] for n in t.nodes) - {""} for t in self.tests]
        self.members = [frozenset(t.nodes) for t in self.tests]
        self.by_node: dict[str, list[int]] = defaultdict(list)
        for i, test in enumerate(self.tests):
            for node in test.nodes:
                self.by_node[node].append(i)
        self.passes = {n: sum(1 for i in idx if self.tests[i].passed) for n, idx in self.by_node.items()}
        self.eliminated: set[Hypothesis] = set()
        for i, test in enumerate(self.tests):
            if test.passed and len(self.spans[i]) >= 2:
                self.eliminated |= links.within(self.spans[i], self.uplinks)
        # A failure its own log put on some members (a crash naming its node) says nothing of the links it crossed.
        self.open_hypotheses = {i: frozenset(links.within(self.spans[i], self.uplinks) - self.eliminated)
                                for i, t in enumerate(self.tests) if not t.passed and len(self.spans[i]) >= 2 and not t.culprits}
        # Nodes a hardware check flagged during a failed test: convicted faulty on that alone (see _solve).
        self.flagged = frozenset(n for t in self.tests if t.passed is False for n in t.hardware)
        self.convicted: dict[str, Verdict] = {n: "faulty" for n in sorted(self.flagged)}
        self.named: dict[Hypothesis, tuple[int, ...]] = {}
        self._unsearched_named = False  # `named` holds a fabric or flaky link (see _name_links), not the search's faults
        self._solve()

    # -- the fixpoint -------------------------------------------------------------------------------------------

    def _solve(self) -> None:
        for _ in range(12):  # convictions grow; a conviction whose partner is convicted later is withdrawn
            self._unexplained_cache: dict[str, list[int]] = {}
            self._own_cache: dict[str, list[int]] = {}
            self._flaky: float | None = None
            changed = self._name_links()
            for node in sorted(self.by_node):
                if node not in self.convicted and len(self.unexplained(node)) >= 2 and self._convicts(node):
                    self.convicted[node] = "faulty" if self.passes[node] == 0 else "intermittent"
                    changed = True
                    self._forget()
            for node in sorted(self.convicted.keys() - self.flagged):  # a hardware fault is never withdrawn
                verdict = self.convicted.pop(node)
                self._forget()
                if self._convicts(node):
                    self.convicted[node] = verdict
                else:
                    changed = True
            self._forget()
            if not changed:
                return

    def _forget(self) -> None:
        """Convictions changed, and with them what explains a failure."""
        self._unexplained_cache.clear()
        self._own_cache.clear()
        self._flaky = None

    def explained(self, i: int, node: str | None = None, culprit: str | None = None) -> bool:
        """A failed test that a convicted node (other than `node`), the assumed `culprit` or a named link accounts for."""
        members = self.members[i]
        if culprit is not None and culprit != node and culprit in members:
            return True
        if any(c in members and c != node for c in self.convicted):
            return True
        return not self.tests[i].culprits and any(links.in_test(h, self.spans[i]) for h in self.named)

    def link_risky(self, i: int) -> bool:
        """A failed test spanning cliques whose links are not all proven by passing tests."""
        return bool(self.open_hypotheses.get(i))

    def unexplained(self, node: str, culprit: str | None = None) -> list[int]:
        """The failed tests of this node that nothing else explains and that no unproven link could explain."""
        if culprit is None and node in self._unexplained_cache:
            return self._unexplained_cache[node]
        found = [i for i in self.by_node.get(node, ()) if not self.tests[i].passed and not self.link_risky(i)
                 and not self.explained(i, node, culprit)]
        if culprit is None:
            self._unexplained_cache[node] = found
        return found

    def reference(self, node: str, culprit: str | None = None) -> bool:
        """A node that may serve as a healthy partner: not convicted, passed a test, and every failure of its own is
        explained (assuming `culprit` is at fault) or outweighed by passes."""
        if node in self.convicted or node == culprit:
            return False
        passes = self.passes.get(node, 0)
        if passes == 0:
            return False
        failures = self.held_against(node, culprit)
        if failures:
            return passes >= self.outweigh * failures
        return self.rechecks_owed(node, culprit) == 0

    def rechecks_owed(self, node: str, culprit: str | None = None) -> int:
        """Passes this node still owes (RECHECK_PASSES in all) when a failure of its own is explained only by
        intermittent nodes: such a node fails only part of the time, so it explains that failure only in part, and a
        flaky node hiding behind it passes that many tests only by luck (1 in 2 ** RECHECK_PASSES). A failure
        holding the assumed `culprit` is explained by it."""
        weak = [i for i in self.by_node.get(node, ()) if not self.tests[i].passed and self._weakly_explained(i, node, culprit)]
        if not weak:
            return 0
        return max(0, RECHECK_PASSES - self.passes.get(node, 0))

    @property
    def noisy_share(self) -> bool:
        """Many flaky nodes about (a bad share of SPARSE_SHARE or more): a recheck group would mostly fail, so each
        node is rechecked beside a reference."""
        return self.bad_share >= SPARSE_SHARE

    @cached_property
    def dense(self) -> bool:
        """Many flaky nodes about as the samples show them (posterior.bad_share's point estimate of SPARSE_SHARE or
        more): a group of nodes owing passes would mostly fail, so each is rechecked beside a reference. A planning
        choice, not evidence: the posterior's conservative share, which a small fleet's few screening groups push to a
        half, would send every recheck there beside a reference, at twice the node-minutes of a group that passes."""
        return posterior.bad_share(self.tests, self.by_node, point=True) >= SPARSE_SHARE

    def may_owe_passes(self, node: str) -> bool:
        """Whether this node would owe passes were a partner of its failures convicted intermittent."""
        return self.passes.get(node, 0) < RECHECK_PASSES

    def outweighing(self, node: str) -> bool:
        """A node that has passed since its latest failure, whose failures nothing explains were all in groups of three
        or more and none a recheck: the passes that outweigh them (see reference) may be earned in groups, as such a
        failure says little about any one member (its culprit is most likely a flaky node that passed since). A failed
        recheck ends that: its members are confirmed one by one, so a flaky culprit fails beside references."""
        if node in self.convicted or not self.passes.get(node, 0) or self.reference(node):
            return False
        unexplained = self.unexplained(node)
        return (bool(unexplained) and bool(self.tests[self.by_node[node][-1]].passed)
                and all(len(self.members[i]) >= 3 and self.tests[i].stage != "recheck" for i in unexplained))

    def rechecking(self, node: str) -> bool:
        """A node that would be a reference but for the passes it owes (see rechecks_owed): it is tested again beside
        other such nodes, not confirmed as a suspect."""
        return (node not in self.convicted and self.passes.get(node, 0) > 0 and not self.held_against(node)
                and self.rechecks_owed(node) > 0)

    def _weakly_explained(self, i: int, node: str, culprit: str | None) -> bool:
        """A failed test that only convicted nodes which also passed tests (intermittent) explain."""
        members = self.members[i]
        if culprit is not None and culprit != node and culprit in members:
            return False
        if any(links.in_test(h, self.spans[i]) for h in self.named):
            return False
        blamed = [c for c in self.convicted if c in members and c != node]
        return bool(blamed) and all(self.passes.get(c, 0) for c in blamed)

    @cached_property
    def outweigh(self) -> int:
        """Passes per failure nobody explains that make a node a reference again: OUTWEIGH, SPARSE_OUTWEIGH where the
        fleet's bad share is low (few flaky partners about, so such a failure is most likely the node's own)."""
        return SPARSE_OUTWEIGH if self.bad_share < SPARSE_SHARE else OUTWEIGH

    def held_against(self, node: str, culprit: str | None = None) -> int:
        """Unexplained failures that count against a node: those without a never-passing node in them."""
        return sum(1 for i in self.unexplained(node, culprit) if not any(s != node and s in self.members[i] for s in self.stubborn))

    def clean_failures(self, node: str) -> list[tuple[int, frozenset[str]]]:
        """(test, partners) of failures where, were this node at fault, every partner is a reference."""
        found = []
        for i in self.unexplained(node):
            partners = self.members[i] - {node}
            if all(self.reference(p, node) for p in partners):
                found.append((i, partners))
        return found

    def _convicts(self, node: str) -> bool:
        """`faulty` (never passed): two clean failures that share no partner (no single other node explains both),
        every partner of those two having passed a test after it unless the run has shown no flaky behaviour yet.
        `intermittent` (passed too): two clean failures sharing no partner, every partner passing a test after it.
        Both also need the posterior odds of odds() to reach CONVICTION_ODDS. A flaky partner that passed once and then failed beside a healthy node looks exactly like a
        healthy partner beside a faulty one; the later pass, or more failures with yet other partners, is what
        tells them apart. Once the run has shown flaky behaviour, only verified failures count."""
        clean = self.clean_failures(node)
        verified = [(i, partners) for i, partners in clean if all(self._passed_after(p, i) for p in partners)]
        if self.passes.get(node, 0):
            ok = (len(verified) >= INTERMITTENT_FAILURES and _disjoint(verified)
                  and not self._one_link_spans([i for i, _ in verified]))
        else:
            ok = _disjoint(verified) or (not self.noisy and _disjoint(clean))
        return ok and self.odds(node) >= CONVICTION_ODDS

    def _one_link_spans(self, tests: Sequence[int]) -> bool:
        """Every one of these tests spans cliques and one link hypothesis is exercised by all of them. A node that also
        passed cannot be told from that link failing part of the time (a flaky link, or one just under the threshold,
        which a single lucky pass clears): its failures there convict nobody; a failure inside its clique does."""
        return bool(links.common((self.spans[i] for i in tests), self.uplinks))

    def failures(self, node: str) -> list[int]:
        """Indexes of the node's failed tests, oldest first."""
        return [i for i in self.by_node.get(node, ()) if not self.tests[i].passed]

    def shared_links(self, node: str) -> list[Hypothesis]:
        """The link hypotheses every failed test of this node exercised (see _one_link_spans), in order."""
        return sorted(links.common((self.spans[i] for i in self.failures(node)), self.uplinks))

    # -- the posterior ---------------------------------------------------------------------------------------------

    def _own_failures(self, node: str) -> list[int]:
        """Failed tests of this node whose other members are all references: its own failures, or a flaky reference's."""
        found = self._own_cache.get(node)
        if found is None:
            found = [i for i, _ in self.clean_failures(node)]
            self._own_cache[node] = found
        return found

    @cached_property
    def bad_share(self) -> float:
        """The share of bad nodes the posterior assumes (see posterior.bad_share)."""
        return posterior.bad_share(self.tests, self.by_node)

    def _partner_fails(self, partner: str, test: int, passing: frozenset[str] = frozenset()) -> float:
        """The chance that this partner failed `test` on its own account: certain for a convicted or never-passing
        one, even for one with another failure of its own, else small and halving with each of its passes (one
        more for a partner in `passing`)."""
        if partner in self.convicted or not self.passes.get(partner, 0):
            return 1.0
        if any(i != test for i in self._own_failures(partner)):
            return posterior.FLAKE
        return posterior.partner_fails(self.passes[partner] + (partner in passing), self.flaky_share())

    def flaky_share(self) -> float:
        """The share of flaky nodes a partner is drawn from (see posterior.flaky_share)."""
        if self._flaky is None:
            mixed = sum(1 for n in self.by_node if self.passes.get(n, 0) and self._own_failures(n))
            self._flaky = posterior.flaky_share(self.bad_share, mixed, len(self.stubborn), len(self.by_node))
        return self._flaky

    def odds(self, node: str, passing: frozenset[str] = frozenset()) -> float:
        """Posterior odds that this node is bad (faulty if it never passed, else flaky) against healthy: the fleet's
        share of bad nodes, times each test's likelihood ratio given its other members' chances to fail on their own
        (partners in `passing` assumed to pass one test more). Tests across unproven links, and those a named link
        fault explains, are left out."""
        share = self.bad_share
        faulty = not self.passes.get(node, 0)
        ratio = share / (1 - share)
        for i in self.by_node.get(node, ()):
            if self.link_risky(i) or any(links.in_test(h, self.spans[i]) for h in self.named):
                continue
            clear = 1.0
            for p in self.tests[i].nodes:  # in a fixed order: a float product over a set would depend on PYTHONHASHSEED
                if p != node:
                    clear *= 1 - self._partner_fails(p, i, passing)
            ratio *= posterior.weigh(not self.tests[i].passed, faulty, clear)
        return ratio

    def unverified_partners(self, node: str) -> set[str]:
        """Partners of this node's clean failures that have not passed a test since: testing them again is what
        turns those failures into evidence (see _convicts)."""
        return {p for i, partners in self.clean_failures(node) for p in partners if not self._passed_after(p, i)}

    def verification_convicts(self, node: str) -> bool:
        """Passes of this node's unverified partners would lift its odds to CONVICTION_ODDS: without that, the node
        needs another confirmation too, in the same wave."""
        return self.odds(node, frozenset(self.unverified_partners(node))) >= CONVICTION_ODDS

    def _passed_after(self, node: str, test: int) -> bool:
        return any(j > test and self.tests[j].passed for j in self.by_node.get(node, ()))

    @cached_property
    def noisy(self) -> bool:
        """Some failed test (inside one clique) had every member pass a test, before or after it: no persistent fault
        explains it, so a flaky node is about."""
        for i, test in enumerate(self.tests):
            if not test.passed and len(self.spans[i]) <= 1 and all(self.passes.get(n, 0) for n in test.nodes):
                return True
        return False

    @cached_property
    def stubborn(self) -> frozenset[str]:
        """Nodes that failed at least two tests and never passed one: a partner's failure with one of them is not held
        against the partner (a persistent fault never passes)."""
        return frozenset(n for n, idx in self.by_node.items() if self.passes[n] == 0 and len(idx) >= 2)

    # -- links --------------------------------------------------------------------------------------------------

    def link_suspects(self) -> dict[int, frozenset[Hypothesis]]:
        """Failed cross-clique tests of trusted nodes that no named link or convicted node explains: their open
        hypotheses."""
        return {i: h for i, h in self.open_hypotheses.items()
                if h and not self.explained(i) and all(self._link_clean(n) for n in self.members[i])}

    def _link_clean(self, node: str) -> bool:
        return self.reference(node)

    def single_fault_candidates(self) -> frozenset[Hypothesis]:
        """Hypotheses that alone explain every unexplained link failure."""
        suspects = list(self.link_suspects().values())
        return frozenset.intersection(*suspects) if suspects else frozenset()

    def _name_links(self) -> bool:
        """Name link faults the evidence pins down (see the package docstring); True when one was added."""
        # Again each time: a conviction makes its clique's other nodes sound. Either explains every failure across
        # cliques of sound nodes: no pair or uplink besides it.
        wide = fabric.fabric_wide(self)
        found = (links.fabric(set().union(*(self.spans[i] for i in wide))), wide) if wide else fabric.flaky_link(self)
        if found:
            fault = {found[0]: tuple(found[1])}
            changed, self.named, self._unsearched_named = fault != self.named, fault, True
            return changed
        if self._unsearched_named:
            self.named, self._unsearched_named = {}, False
            return True
        suspects = self.link_suspects()
        if not suspects:
            return False
        added = False
        single = frozenset.intersection(*suspects.values())
        for h in sorted(single):
            support = [i for i in suspects if links.in_test(h, self.spans[i])]
            if self._pinned(h, support, suspects):
                self.named[h], added = tuple(support), True
        for i, hypotheses in sorted(suspects.items()):  # several faults: each pinned by tests only it explains
            if len(hypotheses) == 1:
                [h] = hypotheses
                support = [j for j, hs in suspects.items() if hs == hypotheses]
                if h not in self.named and h[0] == "pair" and self.disjoint_pair(support) and self._narrow(support) and self._told_apart(h, support):
                    self.named[h], added = tuple(support), True
        if not single:
            added |= self._name_cover(suspects)
        return added

    def _name_cover(self, suspects: dict[int, frozenset[Hypothesis]]) -> bool:
        """Several link faults at once: the links that never passed and are in every smallest set of them
        (links.MOST_FAULTS at most) explaining the failures left, each supported as a single fault would be (a pair
        by a failure no other link explains: the smallest set is a guess until direct tests check it). Pairs b-c and
        b-d failing while a-b passes are those two pairs, not b's uplink; uplinks of c and d are not the whole
        fabric. A link only some of those sets hold waits for the search's direct tests of it."""
        left = {i: hs for i, hs in suspects.items() if not any(links.in_test(h, self.spans[i]) for h in self.named)}
        covers = links.minimal_covers(list(left.values()), links.MOST_FAULTS)
        added = False
        for h in sorted(frozenset.intersection(*covers) if covers else ()):
            besides = frozenset().union(*covers) - {h}
            # Its own support: not a failure another link of the explanation accounts for as well (a failed test over
            # all eight cliques, a bad uplink of c4 in it, and one flaky representative's failure between c1 and c3
            # named "degraded fabric between c1 and c3": two failures with no node in common, one of them c4's).
            support = [i for i in left if links.in_test(h, self.spans[i]) and not any(links.in_test(g, self.spans[i]) for g in besides)]
            singled = h[0] != "pair" or any(left[i] == {h} for i in support) and self._told_apart(h, support)  # a pair: a failure nothing else explains
            if singled and self.disjoint_pair(support) and self._narrow(support) and self._leaves_widely(h, support, besides):
                self.named[h], added = tuple(support), True
        return added

    def _leaves_widely(self, h: Hypothesis, support: Sequence[int], besides: frozenset[Hypothesis] = frozenset()) -> bool:
        """A pair; or an uplink whose tests against UPLINK_PARTNERS other cliques one by one failed (all those with a
        reference, when fewer have one), not counting a test that a link `besides` it explains: two failed pairs of
        one clique (a-b, a-d) look like its uplink until a test of it with a third clique says which."""
        if h[0] != "uplink":
            return True

        def telling(c: str) -> bool:
            return not any(links.in_test(g, frozenset((h[1], c))) for g in besides)

        others = {self.domain_of[n] for n in self.by_node if self._link_clean(n)} - {h[1], ""}
        partners = {c for c in self.failed_partners(h[1], support) if telling(c)}
        if len(partners) < min(UPLINK_PARTNERS, sum(1 for c in others if telling(c))):
            return False
        # Whichever one pair of the clique is degraded, failures besides that pair's say it is more: two of them with
        # no node in common, so one flaky representative's failure with a third clique does not make an uplink of
        # a degraded pair (three cliques of two nodes: the pair failed twice on one node, the flaky one once).
        return all(self.disjoint_pair([i for i in support if not links.in_test(links.pair(h[1], c), self.spans[i])]) for c in partners)

    def failed_partners(self, clique: str, tests: Sequence[int] | None = None) -> set[str]:
        """The cliques whose failed tests with this one alone (among `tests`, else all) cross its uplink."""
        failed = self.open_hypotheses if tests is None else tests
        return {c for i in failed if len(self.spans[i]) == 2 and clique in self.spans[i] and not self.tests[i].passed
                for c in self.spans[i]} - {clique}

    def _pinned(self, h: Hypothesis, support: list[int], suspects: dict[int, frozenset[Hypothesis]]) -> bool:
        if not self.disjoint_pair(support) or not self._narrow(support):
            return False  # one flaky representative must not make a fabric fault
        if h[0] == "pair":
            # With no third clique holding a healthy node, the pair and either clique's uplink look the same.
            thirds = {self.domain_of[n] for n in self.by_node if self._link_clean(n)} - set(links.cliques_of(h)) - {""}
            return (any(suspects[i] == {h} for i in support) or not self.uplinks or not thirds) and self._told_apart(h, support)
        partners = [{c for g in suspects[i] if g[0] == "pair" and h[1] in g for c in links.cliques_of(g)} - {h[1]} for i in support]
        return self._leaves_widely(h, support) and any(
            a.isdisjoint(b) and self.members[support[x]].isdisjoint(self.members[support[y]])
            for x, a in enumerate(partners) for y, b in enumerate(partners) if x < y)

    def _told_apart(self, h: Hypothesis, support: Sequence[int]) -> bool:
        """A pair failed a test over its two cliques alone, or no other pair crossed every one of its failures: a
        pair a pass cleared that did may be a link failing part of the time, and the pair left by elimination, never
        tested on its own, would take its blame (clique-0 to clique-3 failing half the time named clique-2 to
        clique-3 after two failed tests over all four cliques and a pass of every other pair)."""
        cliques = frozenset(links.cliques_of(h))
        if any(self.spans[i] == cliques for i in support):
            return True
        return not any(g != h and g[0] == "pair" and all(links.in_test(g, self.spans[i]) for i in support) for g in self.eliminated)

    def _narrow(self, support: Sequence[int]) -> bool:
        """One of these failed tests spans at most NAMING_SPAN cliques: two failures over dozens of cliques each are as
        well explained by two flaky representatives among their dozens of members (the search's sides eliminated
        every other link, so the last one left would be named without a test of its own). Once flaky behaviour has
        shown, two such failures with no node in common: one may be a flaky representative's (232 nodes in cliques
        of 18 with 8 flaky named two links that were fine, each from one link test)."""
        narrow = [i for i in support if len(self.spans[i]) <= NAMING_SPAN]
        if self.noisy:  # flaky behaviour has shown: one narrow failure may be a flaky representative's
            return self.disjoint_pair(narrow)
        return bool(narrow)

    def disjoint_pair(self, tests: Sequence[int]) -> bool:
        """Two of these tests have no node in common."""
        return any(self.members[a].isdisjoint(self.members[b]) for k, a in enumerate(tests) for b in tests[k + 1 :])

    # -- statuses -----------------------------------------------------------------------------------------------

    @cached_property
    def clear(self) -> frozenset[str]:
        """Reference nodes: healthy as far as the evidence goes."""
        return frozenset(n for n in self.by_node if self.reference(n))

    def needs_test(self, node: str) -> bool:
        """Neither convicted nor a reference."""
        return node not in self.convicted and node not in self.clear

    def indistinguishable(self, node: str) -> bool:
        """A node that never passed and failed only tests across unproven links, twice (two groups of members: one
        group run again, as onFailure imports a repeated iteration, is one test of the link): with no healthy node in
        its clique, more tests cannot tell its fault from its clique's uplink."""
        tests = self.by_node.get(node, ())
        crossing = {self.members[i] for i in tests if self.link_risky(i)}
        home = self.domain_of[node]
        alone = not any(self.domain_of[n] == home for n in self.clear)
        return alone and self.passes.get(node, 0) == 0 and len(crossing) >= 2 and all(self.link_risky(i) or self.tests[i].stage == "screening" for i in tests)

    def last_test(self, node: str) -> int | None:
        """Index of the node's latest test."""
        tests = self.by_node.get(node)
        return tests[-1] if tests else None


def _disjoint(failures: list[tuple[int, frozenset[str]]]) -> bool:
    """Two of these failures share no partner."""
    return any(a[1].isdisjoint(b[1]) for k, a in enumerate(failures) for b in failures[k + 1 :])
