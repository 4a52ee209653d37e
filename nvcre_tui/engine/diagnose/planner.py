"""The next wave: tests that can really run at once (no node in two of them, at most maxConcurrent of them).

Priority within a wave: link tests (they sit on the critical path), inter-clique coverage when a suspect failed over
an unproven link (until a pass proves it, such failures blame nobody) and the first inter test while the bad share
is low, the partners a never-passing suspect's conviction waits for, tested together (one pass verifies minGroupSize
of them, where a third confirmation takes a test per suspect; both, when those passes would leave the suspect's odds
short and the bad share is low), splits of failed pools, confirmations of suspects (regroupings when no healthy
partner exists), re-tests of the partners a conviction waits for, rechecks (nodes owing passes, tested in groups),
screening of untested nodes (with the inter-clique test beside its last wave when it fits, see
Planner._early_inter), then inter-clique coverage (every link outside the search, in as few tests as the named links
allow). Link and coverage tests are planned in linkplan.py, into the same wave (wave.py).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence

from nvcre_tui.engine.diagnose import links
from nvcre_tui.engine.diagnose.evidence import Evidence
from nvcre_tui.engine.diagnose.linkplan import LinkPlanner
from nvcre_tui.engine.diagnose.state import DiagnoseState, Probe
from nvcre_tui.engine.diagnose.wave import Wave

MAX_SUBJECT_TESTS = 12  # confirmations a suspect gets after its first failure before it is left inconclusive
REPEAT_SHARE = 3  # regroupings that count as one confirmation (see Planner._subject_tests)
MAX_ROUNDS = 60  # a hard stop in rounds (see round_cap), whatever the evidence
WAVE_CAP = 64  # screening: this many groups (Jobs) at once when maxConcurrent is unlimited (more only when more cliques)
EARLY_UNPROVEN = 32  # at most this many untested nodes in the inter-clique test beside the last screening wave
RECHECK_GROUP = 4  # nodes owing passes (see Evidence.rechecks_owed) tested together
REPEAT_WALLED = 3  # regrouping budget times this for a clique whose every test across cliques failed (Planner._walled)
ALTERNATIVE_STARTS = 16  # first members tried for a regrouping that repeats no failed test (see _companions)


def _shuffled(nodes: Sequence[str], salt: int) -> list[str]:
    """A deterministic reshuffle per round, so regrouped suspects meet new companions whatever their pattern. (A
    cryptographic hash: CRC32 is linear, so the orders of two salts differ by a fixed XOR and the groups repeat.)"""
    return sorted(nodes, key=lambda n: (hashlib.blake2b(f"{salt}:{n}".encode(), digest_size=8).digest(), n))


def round_cap(max_concurrent: int) -> int:
    """The hard stop in waves after the screening: MAX_ROUNDS, more when maxConcurrent spreads a round over several
    waves (see hard_stop)."""
    return MAX_ROUNDS * (math.ceil(16 / max_concurrent) if max_concurrent else 1)


def hard_stop(state: DiagnoseState) -> int:
    """The wave a run stops at, whatever the evidence: the screening's own waves beyond its first, then round_cap.
    A fleet with more cliques than maxConcurrent screens one clique a Job (10,000 nodes in cliques of 8 under
    maxConcurrent 8: 157 waves), which a cap counting from the first wave cut short, its last cliques never tested."""
    screening = len(screening_groups(state.domains, state.min_group_size, state.max_concurrent))
    waves = math.ceil(screening / state.max_concurrent) if state.max_concurrent else 1
    return max(0, waves - 1) + round_cap(state.max_concurrent)


def screening_groups(domains: Sequence[tuple[str, Sequence[str]]], m: int, max_concurrent: int) -> list[tuple[str, ...]]:
    """Unlabelled nodes in chunks small enough to localise a fault, large enough that the chunks fit in one wave (two
    under maxConcurrent). Each clique in even parts of at least minGroupSize and two nodes, as many as one wave holds:
    with maxConcurrent unlimited (WAVE_CAP - chunks) // cliques each; under maxConcurrent the Jobs the chunks and the
    inter-clique test leave, shared out (cliques first in order take one more), and a part fewer where the inter-clique
    test beside the last screening wave would take one of the clique's nodes (see Planner._early_inter); a clique stays
    whole when there are more cliques than Jobs. A smaller group localises its fault in fewer tests, a flaky node fails
    beside fewer partners, and fewer healthy nodes share its failure and owe the passes that outweigh it (a failed
    clique of 18 left 17 of them, each earning five to eight passes: the node-minutes a flaky fleet costs)."""
    least = max(m, 2)
    chunks: list[tuple[str, ...]] = []
    for domain, nodes in domains:
        if not domain:
            size = max(least, math.ceil(len(nodes) / (max_concurrent * 2 if max_concurrent else WAVE_CAP)))
            chunks += [tuple(nodes[i : i + size]) for i in range(0, len(nodes), size)]
    cliques = sum(1 for domain, _ in domains if domain)
    if max_concurrent:  # one wave: the Jobs the chunks and the inter-clique test leave, shared out
        jobs, room = max_concurrent - len(chunks) - (cliques >= 2), cliques >= 2
        per, extra = divmod(max(jobs, cliques), max(cliques, 1))
    else:
        per, extra, room = max(1, (WAVE_CAP - len(chunks)) // max(cliques, 1)), 0, False
    groups: list[tuple[str, ...]] = []
    labelled = 0
    for domain, nodes in domains:
        if domain:
            most = (len(nodes) - room) // least  # a node fewer where the inter-clique test takes one
            groups += _even_parts(nodes, max(1, min(most, per + (labelled < extra))))
            labelled += 1
        else:
            groups += chunks
    return groups


def _companions(base: Sequence[str], pool: Sequence[str], size: int, failed: Sequence[frozenset[str]],
                key: Callable[[str], tuple[float, int]]) -> list[str]:
    """`base` filled up to `size` from `pool`, greedily by `key`, each member chosen to complete no failed set. When
    the group still holds one (the least blamed node was the culprit, and beside it every choice repeats a failure),
    other first members are tried in turn (up to ALTERNATIVE_STARTS) for a group that holds none."""

    def holds_failure(group: Sequence[str]) -> bool:
        members = frozenset(group)
        return any(fail <= members for fail in failed)

    def fill(group: list[str], candidates: list[str]) -> list[str]:
        while len(group) < size and candidates:
            best = min(candidates, key=lambda n: (holds_failure([*group, n]), key(n)))
            group.append(best)
            candidates.remove(best)
        return group

    first = fill(list(base), list(pool))
    if len(base) >= size - 1 or not holds_failure(first):
        return first
    for start in sorted(pool, key=key)[:ALTERNATIVE_STARTS]:
        trial = fill([*base, start], [n for n in pool if n != start])
        if len(trial) == size and not holds_failure(trial):
            return trial
    return first


def _even_parts(nodes: Sequence[str], parts: int) -> list[tuple[str, ...]]:
    """`nodes` in `parts` runs whose sizes differ by at most one."""
    size, extra = divmod(len(nodes), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [tuple(nodes[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


class Planner:
    """Plans one wave from the evidence."""

    def __init__(self, state: DiagnoseState, ev: Evidence, unavailable: Collection[str] = ()) -> None:
        self.state, self.ev, self.m = state, ev, state.min_group_size
        self.wave = Wave(state)
        # Nodes the engine left out since (cordoned): never in a test again, as if busy in every wave.
        self.wave.busy.update(unavailable)
        self.verifying: set[str] = set()
        self.deferred: dict[str, list[str]] = defaultdict(list)  # suspects confirmed after the others (see _local_first)
        self.fresh_only = True
        self.domain_of = state.domain_of
        self.clear_by_clique = self._by_clique(sorted(ev.clear))
        # Partners for confirmations: references first, then nodes whose latest test passed (a failure on their
        # record is then most likely the suspect's; the verdict rules check that assumption).
        self.likely = {n for n in ev.by_node if n not in ev.convicted and n not in ev.clear and ev.tests[ev.by_node[n][-1]].passed}
        self.partner_by_clique = self._by_clique(sorted(ev.clear | self.likely))
        self.partner_uses: Counter[str] = Counter(p for t in state.tests for p in t.padding)
        # Nodes earning the passes that outweigh a failure in a large group (see Evidence.outweighing) earn them in
        # recheck groups when their confirmations, one test each, would not fit in one wave under maxConcurrent.
        outweighing = {n for n in ev.by_node if ev.outweighing(n)}
        crowded = bool(state.max_concurrent) and len(outweighing) > state.max_concurrent
        self.outweighing = {n for n in outweighing if not self._waits(n)} if crowded else set()
        self.link_planner = LinkPlanner(state, ev, self.wave, self.clear_by_clique, self.partner_uses)
        self.inter_tested = any(t.stage == "inter" for t in state.tests)  # the first inter test is planned early

    def _by_clique(self, nodes: Iterable[str]) -> defaultdict[str, list[str]]:
        """These nodes by clique, in the order given."""
        found: defaultdict[str, list[str]] = defaultdict(list)
        for node in nodes:
            found[self.domain_of[node]].append(node)
        return found

    def plan(self) -> tuple[Probe, ...]:
        if self.state.round >= hard_stop(self.state):
            return ()
        tests = self.state.tests
        repeats = sum(1 for t in tests if t.stage == "repeat")
        # Groups of three or more pass by luck when many nodes are faulty: they get twice the new combinations.
        budget = (3 if self.m <= 2 else 6) * max(1, len(self.domain_of) // max(self.m, 2))
        if (tests and not any(t.passed for t in tests) and repeats >= budget
                and all(len(self.ev.by_node.get(n, ())) >= 2 for n in self.domain_of)):
            return ()  # every node failed twice, waves of new combinations too, nothing ever passed (often a threshold nobody reaches)
        self.link_planner.search()
        self.link_planner.recheck()
        # Prove the links first when a suspect failed over an unproven one (the wave's cross-clique confirmations then
        # count), and place the first inter test ahead of confirmations while the bad share is low: after them, a
        # clique whose references all partner its suspects holds it (and a link search after it) back a wave. Where
        # many nodes are bad, references are scarce and the confirmations come first.
        first = not self.ev.noisy_share and not self.inter_tested
        if self.link_planner.crosses_unproven_links() or first:
            self.link_planner.coverage(early=True)
        self._paired_verifications()
        self._splits_and_confirmations()  # follow-ups before more screening: they sit on the critical path
        self._verifications()
        self._rechecks()
        self._screening()
        self.link_planner.coverage()
        return tuple(self.wave.probes)

    # -- screening ----------------------------------------------------------------------------------------------

    def _screening(self) -> None:
        tested = self.ev.by_node
        groups = [g for g in screening_groups(self.state.domains, self.m, self.state.max_concurrent) if not any(n in tested for n in g)]
        if groups:
            groups = self._early_inter(groups)
        for group in groups:
            self.wave.add("screening", group)

    def _early_inter(self, groups: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """The inter-clique test in the last screening wave, when it fits beside it: a reference of each clique
        screened before, a node of each clique screened now (its parts formed from the rest, as many as before). A
        healthy fleet then ends with its screening, where the test after it takes a wave more. Not where a clique
        would be screened in fewer parts (a failed part would then cost more tests), nor with more than
        EARLY_UNPROVEN nodes screened now (a failure would leave each of them to confirm). Returns the screening
        groups to add."""
        cliques = self.ev.fleet_cliques
        if len(cliques) < 2 or self.state.within_domains or self.inter_tested or len(self.wave.probes) + len(groups) + 1 > self.wave.limit:
            return groups
        per = links.reps_each(self.m, len(cliques))
        least = max(self.m, 2)
        now = self._by_clique(n for g in groups for n in g)
        parts = Counter(self.domain_of[g[0]] for g in groups)
        reps: list[str] = []
        for clique in cliques:
            free = [n for n in self.clear_by_clique.get(clique, []) if n not in self.wave.busy]
            if len(free) >= per:
                reps += free[:per]
            elif len(now.get(clique, ())) - per >= least * parts[clique]:  # its parts stay as many (and small)
                reps += now[clique][-per:]
            else:
                return groups
        taken = set(reps) - self.ev.clear
        if len(taken) > EARLY_UNPROVEN or not self.wave.add("inter", reps):
            return groups
        pulled = {self.domain_of[n] for n in taken}
        regrouped = [g for g in groups if self.domain_of[g[0]] not in pulled]
        for clique in sorted(pulled):
            rest = [n for n in now[clique] if n not in taken]
            regrouped += _even_parts(rest, parts[clique])
        return regrouped

    # -- partners -----------------------------------------------------------------------------------------------

    def _partners(self, node: str, count: int, avoid: set[str]) -> list[str] | None:
        """`count` reference partners: same clique first (others only over a proven link), fresh (never failed with
        this node), least used."""
        if count <= 0:
            return []
        home = self.domain_of[node]
        seen = {p for i in self.ev.by_node.get(node, ()) for p in self.ev.tests[i].padding}
        shared: Counter[str] = Counter(p for i in self.ev.by_node.get(node, ()) if not self.ev.tests[i].passed for p in self.ev.members[i])
        candidates = [p for nodes in self.partner_by_clique.values() for p in nodes if p not in self.wave.busy and p not in avoid and p != node]
        if len(candidates) < count:
            return None
        local = self.state.within_domains or any(self.domain_of[p] == home for p in candidates)
        # A node that failed twice, only across cliques, is tested inside its own first: across, every test crosses
        # some link, and one failing part of the time (a pass proved it) would fail it again. (After one failure a
        # partner across also tests the links again.)
        failed = self.ev.failures(node)
        inside_first = bool(home) and len(failed) >= 2 and all(len(self.ev.spans[i]) >= 2 for i in failed)
        def preference(p: str) -> tuple[bool, bool, int, bool, bool, bool, bool, int, str]:
            away = self.domain_of[p] != home
            # A partner across an unproven link only when the clique has none: a failure then blames nobody until
            # a passing test proves the link, a pass proves both the node and the link. Partners that passed twice
            # make a failure strong evidence (see Evidence._convicts).
            return (away and not self.link_planner.link_ok(home, self.domain_of[p]), away and inside_first, shared[p], p in seen,
                    p in self.likely, self.ev.passes.get(p, 0) < 2, away, self.partner_uses[p], p)
        if local:  # within domains: never across (link_ok is False for every other clique there)
            candidates = [p for p in candidates if self.domain_of[p] == home or self.link_planner.link_ok(home, self.domain_of[p])]
            if len(candidates) < count:
                return None
        chosen = sorted(candidates, key=preference)[:count]
        if self.fresh_only and any(shared[p] >= 2 for p in chosen):
            return None  # a failure with a former companion proves nothing new: wait for fresh partners
        self.partner_uses.update(chosen)
        return chosen

    # -- node faults --------------------------------------------------------------------------------------------

    def _subject_tests(self, node: str) -> int:
        """Tests about this node since its first failure: confirmations count one each, regroupings (no healthy
        partner anywhere, so a pass is luck when most nodes are faulty) one per REPEAT_SHARE."""
        first = next((i for i in self.ev.by_node.get(node, ()) if not self.ev.tests[i].passed), None)
        if first is None:
            return 0
        later = [self.ev.tests[i].stage for i in self.ev.by_node[node] if i > first and node in self.ev.tests[i].subjects]
        return later.count("confirmation") + later.count("repeat") // REPEAT_SHARE

    def _splits_and_confirmations(self) -> None:
        ev = self.ev
        todo = sorted(n for n in ev.by_node if ev.needs_test(n) and n not in self.wave.busy and self._subject_tests(n) < MAX_SUBJECT_TESTS
                      and not ev.rechecking(n) and n not in self.outweighing
                      and not self._waits(n) and not ev.indistinguishable(n) and n not in self.verifying)
        pools: dict[int, list[str]] = defaultdict(list)
        for node in todo:
            last = ev.last_test(node)
            if last is not None and not ev.tests[last].passed and ev.tests[last].stage in ("screening", "split", "inter", "recheck"):
                pools[last].append(node)
        pending = [(i, nodes) for i, nodes in sorted(pools.items()) if len(nodes) >= 2 * self.m]
        split: set[str] = set()
        have_partners = bool(ev.clear or self.likely) or self.m == 1
        for k, (_, nodes) in enumerate(pending):
            for family in self._proven_families(nodes):
                parts = self._parts(family, have_partners, len(pending) - k)
                for part in parts or []:
                    if self.wave.add("split", part):
                        split.update(part)
        solos = [n for n in todo if n not in split]
        solos = self._local_first(solos)
        blocked = []
        for node in solos:
            partners = self._partners(node, self._partners_for(node), set())
            if partners is None:
                blocked.append(node)
            else:
                self.wave.add("confirmation", [node, *partners], [node])
        for clique, nodes in sorted(self.deferred.items()):  # partners the other cliques' suspects left free
            rest = []
            for node in nodes:
                partners = self._partners(node, self._partners_for(node), set())
                if partners is None or not self.wave.add("confirmation", [node, *partners], [node]):
                    rest.append(node)
            if len(rest) >= max(self.m, 2):
                self._recombine(clique, rest)
        untested = any(n not in self.ev.by_node for n in self.domain_of)
        if blocked and not self.wave.probes and not untested:  # nothing else to run: former companions, or recombine
            self.fresh_only = False
            for node in blocked:
                partners = self._partners(node, self._partners_for(node), set())
                if partners is not None:
                    self.wave.add("confirmation", [node, *partners], [node])
            if not self.wave.probes:
                self._repeat(blocked)

    def _partners_for(self, node: str) -> int:
        """Partners a suspect's confirmation takes: minGroupSize - 1, and one at least while every failure of it was
        beside others: alone it would take another path (NVLink only, no NIC or fabric) and pass a fault it has."""
        failed = self.ev.failures(node)
        alone = any(len(self.ev.members[i]) == 1 for i in failed)
        return self.m - 1 if alone or not failed else max(self.m - 1, 1)

    def _owed(self) -> dict[str, set[str]]:
        """Suspects that never passed, with two clean failures sharing no partner while no flaky behaviour has shown:
        a pass of each unverified partner convicts them (see Evidence._convicts) where the odds allow, as a third
        failure would."""
        ev = self.ev
        if ev.noisy:
            return {}
        found = {}
        for n in ev.by_node:
            if ev.needs_test(n) and not ev.passes.get(n, 0):
                clean = ev.clean_failures(n)
                if len(clean) == 2 and clean[0][1].isdisjoint(clean[1][1]):
                    found[n] = ev.unverified_partners(n)
        return found

    def _paired_verifications(self) -> None:
        """Test unverified partners together, minGroupSize at a time: one passing test verifies them all, where a
        third confirmation per suspect would take a test each (a healthy reference passes beside another)."""
        owed = self._owed()
        pool = sorted({p for ps in owed.values() for p in ps} - self.wave.busy, key=lambda p: (self.domain_of[p], p))
        size = max(self.m, 2)
        while len(pool) >= size:
            group = [pool.pop(0)]
            # The same clique, or one over a proven link: a test across a degraded link fails for the link.
            for p in [p for p in pool if all(self.link_planner.link_ok(self.domain_of[p], self.domain_of[g]) for g in group)][: size - 1]:
                group.append(p)
                pool.remove(p)
            if len(group) == size:
                self.wave.add("confirmation", group)
        verified = {p for probe in self.wave.probes for p in probe.nodes}
        # Suspects whose every owed pass is in this wave wait for it instead of a third confirmation, unless those
        # passes would leave their odds short: then the confirmation runs in this wave too. Not where many flaky
        # nodes are about: a flaky suspect's next test there mostly passes and muddies a record the passes would settle.
        self.verifying.update(n for n, ps in owed.items() if ps and ps <= verified and (self.ev.noisy_share or self.ev.verification_convicts(n)))

    def _verifications(self) -> None:
        """Test again the partners of a suspect's failures that have not passed since (see Evidence._convicts): a
        healthy partner passes and the failure convicts; a flaky one shows itself."""
        ev = self.ev
        # Without flaky behaviour so far, a never-passing suspect's next confirmation (a third failure) is cheaper.
        pending = sorted({p for n in ev.by_node if ev.needs_test(n) and len(ev.unexplained(n)) >= 2 and (ev.noisy or ev.passes.get(n, 0))
                          for p in ev.unverified_partners(n)})
        for partner in pending:
            if partner in self.wave.busy:
                continue
            partners = self._partners(partner, self.m - 1, set())
            if partners is not None:
                self.wave.add("confirmation", [partner, *partners], [partner])

    def _rechecks(self) -> None:
        """Nodes owing passes after a failure only an intermittent node explains (see Evidence.rechecks_owed), nodes
        earning passes in groups (self.outweighing) and nodes waiting on another suspect that may come to owe them,
        tested together inside their clique (or cliques whose links are proven), RECHECK_GROUP at a time (a pass
        counts for all of them); one left over, or each where many flaky nodes are about (Evidence.dense), is tested
        beside a reference."""
        ev = self.ev
        # Nodes waiting on another suspect's verdict (see _waits) are rechecked meanwhile: if that suspect turns out
        # intermittent, the passes they owe are then mostly paid, instead of taking waves after its conviction.
        waiting = [n for n in ev.by_node if n not in self.wave.busy and ev.needs_test(n) and self._waits(n)
                   and ev.may_owe_passes(n)]
        owing = [n for n in ev.by_node if n not in self.wave.busy and (ev.rechecking(n) or n in self.outweighing)]
        size = max(self.m, RECHECK_GROUP) if not ev.dense else 1  # many flaky nodes: beside a reference
        for family in self._proven_families(sorted({*waiting, *owing})):
            nodes = _shuffled(family, self.state.round)
            while nodes and not self.wave.full:
                group, nodes = nodes[:size], nodes[size:]
                if len(group) < max(self.m, 2):
                    partners = self._partners(group[0], max(self.m, 2) - len(group), set(group))
                    if partners is None:
                        break
                    self.wave.add("recheck", [*group, *partners], group)
                else:
                    self.wave.add("recheck", group)

    def _proven_families(self, nodes: Sequence[str]) -> list[list[str]]:
        """These nodes by clique, cliques whose links to each other passing tests have all proven taken together: a
        failed test over them then blames a node, as inside one clique (the representatives of a failed inter test,
        one per clique, are split like a failed screening group, so the part holding the culprit shows itself)."""
        by_clique = self._by_clique(nodes)
        families: list[tuple[list[str], list[str]]] = []  # (cliques, nodes)
        for clique, members in sorted(by_clique.items()):
            for cliques, family in families:
                if all(self.link_planner.link_ok(clique, c) for c in cliques):
                    cliques.append(clique)
                    family += members
                    break
            else:
                families.append(([clique], list(members)))
        return [family for _, family in families]

    def _local_first(self, suspects: list[str]) -> list[str]:
        """Suspects of a clique without a healthy node get one wave of confirmations beside the references other
        cliques' suspects leave free (self.deferred), then are tested together in new pairs (a few waves) inside their
        clique: a partner from another clique makes every failure ambiguous with the link until some such test passes.
        Returns the suspects left for confirmations."""
        by_clique = self._by_clique(suspects)
        left = []
        size = max(self.m, 2)
        for clique, nodes in sorted(by_clique.items()):
            local = any(p not in self.wave.busy for p in self.partner_by_clique.get(clique, []))
            # Up to three waves' worth of new combinations (fewer groups fit a wave under maxConcurrent).
            members = len(dict(self.state.domains).get(clique, ()))
            budget = 3 * max(1, members // size) * (REPEAT_WALLED if self._walled(clique) else 1)
            tried = sum(1 for t in self.state.tests if t.stage == "repeat" and self.domain_of[t.nodes[0]] == clique) >= budget
            if not clique or local or tried or len(nodes) < size or len(self.domain_of) == 0:
                left += nodes
                continue
            # First one wave beside other cliques' references (those the other cliques' suspects leave free): a pass
            # proves the node and the link at once, where new pairs of a dense clique mostly fail again.
            crossed = any(clique in self.ev.spans[i] and len(self.ev.spans[i]) >= 2 for i in range(len(self.ev.tests)))
            if not crossed and self.m >= 2 and not self.state.within_domains:
                self.deferred[clique] = nodes
                continue
            self._recombine(clique, nodes)  # new companions for each
            left += [n for n in nodes if n not in self.wave.busy]
        return left

    def _walled(self, clique: str) -> bool:
        """Every test leaving this clique failed (two at least): a partner from another clique would fail beside its
        suspects for the link as likely as for them, so new companions inside it are all that can find a pass."""
        ev = self.ev
        across = [i for i in range(len(ev.tests)) if clique in ev.spans[i] and len(ev.spans[i]) >= 2]
        return len(across) >= 2 and not any(ev.tests[i].passed for i in across)

    def _waits(self, node: str) -> bool:
        """A node that passed since its failures waits while each of those failures has another member still under
        suspicion (the likely culprit); once one has none, the evidence conflicts and the node is tested again."""
        if node not in self.likely:
            return False
        ev = self.ev
        suspicious = [n for n in ev.by_node if ev.needs_test(n) and n not in self.likely]
        return all(any(m in suspicious or m in ev.convicted for m in ev.members[i] if m != node) for i in ev.unexplained(node))

    def _parts(self, pool: list[str], have_partners: bool, pools_left: int) -> list[tuple[str, ...]] | None:
        """Split a failed pool of p suspects into parts of about m nodes, fewer when maxConcurrent would make the parts
        take several waves; None when confirming each suspect is as cheap."""
        p, m = len(pool), self.m
        k = p // m
        if math.isfinite(self.wave.limit):
            free = max(int(self.wave.limit) - len(self.wave.probes), 2)
            k = min(k, max(2, free // max(pools_left, 1)))
        if k < 2:
            return None
        # Confirming each suspect costs p * m node-minutes; the parts cost p, then the largest part's confirmations.
        if have_partners and p * m <= p + math.ceil(p / k) * m:
            return None
        return _even_parts(pool, k)

    def _repeat(self, blocked: list[str]) -> None:
        """No reference partner anywhere: test suspects together in new combinations, to find some that pass."""
        by_clique = self._by_clique(blocked)
        for clique, nodes in sorted(by_clique.items()):
            self._recombine(clique, nodes)

    def _failed_sets(self, inside: bool = False) -> list[frozenset[str]]:
        """The members not known healthy of each failed test nothing explains: one of each set is at fault. With
        `inside`, not a test across a link no pass has proven, which the link may have failed."""
        ev = self.ev
        found = [frozenset(n for n in t.nodes if n not in ev.clear) for i, t in enumerate(ev.tests)
                 if not t.passed and not ev.explained(i) and not (inside and ev.link_risky(i))]
        return [members for members in found if members]

    def _suspicion(self, failed: list[frozenset[str]]) -> dict[str, float]:
        """A cheap fault posterior with explaining away: each failed set's blame is shared among its members in
        proportion to their current weights, iterated (a node that failed only beside a much-blamed node, or only in
        large groups, ends low)."""
        weight = {n: 1.0 for members in failed for n in members}
        for _ in range(8):
            blame = dict.fromkeys(weight, 0.0)
            for members in failed:
                total = math.fsum(weight[n] for n in members)  # exact: a set's order (PYTHONHASHSEED) must not break ties
                for n in members:
                    blame[n] += weight[n] / total
            weight = {n: 0.01 + b for n, b in blame.items()}
        return defaultdict(float, weight)

    def _recombine(self, clique: str, nodes: list[str]) -> None:
        """Repeat tests over these suspects of one clique: the clique's free references first (too few to confirm
        with, each raises the chance that a group passes), then the suspects least blamed so far (see _suspicion),
        never a group holding all suspects of an earlier failed test while other choices are left (it would fail
        again)."""
        size = max(self.m, 2)
        refs = [p for p in self.clear_by_clique.get(clique, []) if p not in self.wave.busy]
        suspicion = self._suspicion(self._failed_sets())
        # A suspect that failed beside a healthy node across an unproven link (behind a bad uplink, say) would seem
        # to repeat that failure in every group it joins, and be left out of each new one.
        failed = self._failed_sets(inside=True)
        order = {n: k for k, n in enumerate(_shuffled(nodes, self.state.round))}
        pool = sorted((n for n in nodes if n not in self.wave.busy), key=lambda n: (suspicion[n], order[n]))
        while len(pool) + min(len(refs), size - 1) >= size and not self.wave.full:
            group = _companions(refs[: size - 1], pool, size, failed, lambda n: (suspicion[n], order[n]))
            refs = refs[size - 1 :]
            pool = [n for n in pool if n not in group]
            if len(group) < size or not self.wave.add("repeat", group):
                return
