"""Diagnose (testScale diagnose): adaptive group testing that isolates faulty, intermittent nodes and bad links.

Pure functions over data, no I/O, clock or randomness. A group test fails when it holds a faulty node, when a flaky
node fails that time, or when it spans a degraded link (a pair of cliques, or one clique's uplink). A run is a
sequence of rounds; each round is one wave that can really run at once: no node in two tests, at most
maxConcurrent tests. The engine launches exactly the wave planned. It imports only planning.grouping (the Group it
plans), parsers.measurements (the metric it weighs) and the leaf modules.

Stages: screening (unlabelled nodes in chunks; each clique in even parts of at least minGroupSize as far as one wave
goes: WAVE_CAP Jobs when maxConcurrent is unlimited, else the maxConcurrent Jobs the chunks and the inter test leave;
whole when there are more cliques than that), inter (one representative per clique, so
every pair of cliques is covered by a passing test; beside the last screening wave when it fits there and at most
EARLY_UNPROVEN of its members are screened in that wave, so a healthy fleet is done with its screening, else after
it), split (a failed pool into parts of about minGroupSize, across cliques whose links passing tests have proven),
confirmation (a suspect with minGroupSize-1 reference partners, same clique first, never its former companions while
others exist; one that failed twice, only across cliques, inside its own clique before all else: a link failing part
of the time fails it again across), repeat (no reference anywhere: suspects together in new combinations), recheck
(nodes owing passes, tested in groups: after a failure an intermittent node explains, or one in a large group) and
link (tests over chosen cliques' representatives that localise a link fault).
Within domains (on NVL domains with MNNVL on and a bandwidth threshold: testScale diagnose, and the onFailure
narrowing of an intra-rack run; a test across cliques takes the network there, another path than inside them): no inter or link test, partners only from the node's own clique, and a
clique without a healthy node regroups its suspects inside it; no test spans two domains.

Verdict rules (recomputed from the whole history after every round):
- A node a hardware check flagged while a test ran (the Job failed HardwareFailureDetected on it: the node health
  check over the Node, e.g. a GPU fallen off the bus) is convicted `faulty` on that alone, whatever it passed
  before: it is direct evidence, not a failure to weigh (`intermittent` is for a node that fails part of the time).
  Its conviction explains that test, so a partner is not held to it. A crash whose log names a node is no such
  evidence (a flaky partner crashes a test beside a healthy node): it is weighed as below. A flag before the test's
  workload started (a node cordoned after its round was planned) convicts nobody: the engine records that test
  untested (passed None: no evidence for or against any member) and hands its node to the planner as unavailable,
  in no later test.
- A failed test is *explained* by a convicted node in it, or by a named link fault it spans. A failed test across
  cliques whose links no passing test has proven is *link-risky*: it blames no node until its links are proven.
- A *reference* (a healthy partner) has passed a test and has no unexplained failure, or has passed at least
  OUTWEIGH (5) times as many tests as it has unexplained failures (SPARSE_OUTWEIGH, 8, in a fleet whose estimated
  bad share is below 0.3: few flaky partners are about, so such a failure is most likely the node's own and a
  flaky node gets the tests that make a second failure likely). So a node with a failure on record is never a
  reference partner until another node's conviction explains that failure or enough passes outweigh it.
  A conviction `intermittent` explains a failure only in part (such a node fails about half its tests, so a flaky
  node beside it may have failed too): a node whose failure only intermittent nodes explain is a reference once it
  has passed RECHECK_PASSES (5) tests in all, and is tested again beside other such nodes until then (stage
  recheck, four to a group; one by one beside a reference in a fleet whose bad share, as its screening shows it
  rather than the posterior's conservative estimate below, is 0.3 or more, where such groups mostly fail).
  Under maxConcurrent, when more nodes are outweighing a failure than one wave has Jobs, those whose unexplained
  failures were all in groups of three or more (a flaky culprit that passed since hides among them) earn their
  passes in recheck groups too; a failed recheck sends its members back to confirmations one by one.
- A failure is *clean* for node n when, assuming n is at fault, every other member of the test is a reference; it
  is *verified* when each of those partners has also passed a test after it. A flaky partner that passed once and
  then failed beside a healthy node looks exactly like a healthy partner beside a faulty node; only a later test of
  the partner (or more failures with yet other partners) tells the two apart.
  n is convicted `faulty` (it never passed a test) on two clean failures that share no partner (no single other
  node explains both), both verified, or, while no flaky behaviour has shown (some failed test inside a clique
  whose members all passed some test: no persistent fault explains it), not yet verified. n is convicted
  `intermittent` (it also passed; with its record: failed x of y, which tests, measured values) on two verified
  clean failures that share no partner and do not all cross one link (a pair of cliques, or one clique's uplink):
  a link that fails part of the time, flaky or just under the threshold, is cleared by one lucky pass and would
  otherwise convict the healthy nodes that crossed it. Either conviction also needs posterior odds (bad : healthy) of at least
  CONVICTION_ODDS (2000) in a small model (posterior.py): each node is healthy, faulty (fails every test) or flaky
  (fails half its tests). The prior share of bad nodes is the low end of a 90 % confidence bound from the screening
  groups and the split parts beyond the one failure each split forces (at least one node of those tested, at most a
  half), so a small fleet, whose few groups say little, is assumed to hold many. Partners are drawn from the flaky
  share: the bad share times the high end of the part of bad-looking nodes that also passed (a pass and a failure of
  their own) against those that failed twice and never passed (a persistent fault never passes), again at least one
  node of those tested (a failure is being weighed: were the suspect healthy, some partner of it would be flaky).
  A partner's chance to have failed on its own account is that share, halved by each of its passes (one half for a
  partner with a failure of its own, certain for one that never passed); tests over unproven or named links are left
  out. So flaky partners failing beside one healthy node, each having passed once or twice, do not convict it: their
  failures are worth little against the fleet's flaky share, and the node is tested again beside partners with more
  passes.
  The partners of a suspect's unverified failures are tested again. Conflicting evidence keeps a node
  under test, up to 12 confirmations after its first failure (a regrouping counts a third of one).
- Regrouping without references (stage repeat): the clique's free references first, then the suspects least blamed
  by a fault estimate with explaining away (each failed test's blame shared in proportion to its members' current
  weights), never a group holding every suspect of an earlier failed test (inside its cliques: a test across a link
  no pass has proven may have failed for the link) while another choice is left (other first members are tried).
  Three waves' worth of regroupings per clique, REPEAT_WALLED (3) times that where every test leaving the clique
  failed: there a partner from another clique fails beside its suspects for the link.
- `healthy` = a reference at the end; everything else ends `inconclusive` with a note saying why.
- Links: a pair hypothesis (A, B) is eliminated by any passing test spanning A and B; an uplink of A by any passing
  test spanning A and another clique. Failed cross-clique tests of references are narrowed with tests over chosen
  cliques: the bits of their index, then one by one, or every candidate at once when a test of each fits the wave
  (Jobs left, free representatives in each clique); two of each when those fit too without maxConcurrent (a link
  failing part of the time then seldom passes its only test, which would leave another link to take its blame).
  While no two of those failures are disjoint and direct tests do not fit, the same cliques are tested again with
  other representatives beside that search: a pass clears every link, so a flaky representative costs one wave of
  link tests, not the whole search. A link fault is named when it alone explains every such failure and is supported
  by two failed tests with no node in common (one flaky representative never makes a fabric fault), one of them over
  at most NAMING_SPAN (4) cliques (two flaky representatives among dozens fail two tests over dozens of cliques), and,
  for a pair, one failed test that nothing else explains, and a failed test over its two cliques alone where another
  pair a pass cleared crossed every one of its failures (that pair may fail part of the time: the one left by
  elimination is tested before it is named); an uplink needs two failed tests whose other candidate
  pairs differ, and failed tests with UPLINK_PARTNERS (4) other cliques one by one (every clique with a reference,
  when fewer have one; not one whose own named link explains the failure): up to three degraded pairs of one
  clique look like its uplink until a fourth clique is tried, first one in none of its failures; and, besides
  the tests of any one pair of its clique, two failures with no node in common (one flaky representative failing
  beside a third clique does not make a degraded pair an uplink). Several faults
  at once: the links in every smallest set (links.MOST_FAULTS, 3, at most) of links no pass has cleared that
  explains every such failure are named, each supported as above (b-c and b-d failing while a-b passes are two pairs;
  every test leaving c or d failing while a-b passes is two uplinks, not the fabric). A faulty node in a clique does
  not hide its link: once the clique has references, an inter test covers it.
- The fabric between the cliques they span is named instead when, among the tests across cliques of nodes that pass
  inside their own, at least FABRIC_WIDE_TESTS (4) failed, no one link is exercised by all of them, two share no
  node, no set of at most three links that never passed explains them while some such test passed (nor, while none
  passed, does every one hold one of two cliques when two others could be tested between themselves: the search
  tests two of those together first, and its pass says two bad uplinks), and they are FABRIC_WIDE_SHARE (0.9) of
  those tests, or FABRIC_NOISY_SHARE (0.5) with four failures over
  links that passing tests had proven (links just under the threshold pass now and then, and each pass would clear
  its links for good). It explains every failure between those cliques: no link search there, no partner across
  them; the links of a clique left out are covered, and their failures widen it.
- A link failing part of the time (a pass cleared it) is named when links that never passed cannot explain the
  failures (one failed test at least crosses only links that passed some test; nor does one such link explain every
  failure but those of one node, a flaky representative's), every failed test across cliques of
  sound nodes exercises it and FLAKY_LINK_FAILURES (3) of them span two cliques, share no node and hold no node that failed
  another, unless it passed INSIDE_PASSES_PER_FAILURE (2) tests inside its clique for each failure (a flaky node
  fails there too; a flaky uplink fails its clique's few representatives again and again). Of several such links,
  the one with the largest share of failures. A suspect whose failures all crossed one pair of cliques a pass had
  cleared gets that pair tested with other representatives (LINK_RECHECKS, 6): their failures name it and clear the
  suspect.
- At the end, failed tests across cliques that nothing explains (a link search left candidates, or every link they
  crossed passed some test while their nodes count healthy) are reported as `fabric-unresolved` with the cliques they
  point at: they fail the category without blaming a node or naming a link.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Literal, TypedDict

from nvcre_tui.engine.diagnose import links
from nvcre_tui.engine.diagnose.clearance import link_words
from nvcre_tui.engine.diagnose.evidence import OUTWEIGH, Evidence
from nvcre_tui.engine.diagnose.planner import MAX_ROUNDS, MAX_SUBJECT_TESTS, Planner, round_cap, screening_groups
from nvcre_tui.engine.diagnose.summary import ValueShown, link_faults_crossed, record_text, significant, unnamed_links_said
from nvcre_tui.engine.diagnose.state import STAGES, DiagnoseError, DiagnoseState, NodeStatus, Note, Probe, Verdict, readable
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.planning.grouping import Group
from nvcre_tui.engine.units import count

__all__ = [
    "MAX_ROUNDS", "MAX_SUBJECT_TESTS", "OUTWEIGH", "STAGES", "DiagnoseError", "DiagnoseState", "Note", "Probe", "Verdict",
    "measured", "node_record", "plan_round", "problems", "verdict_message", "readable", "record_round", "start", "stored_partners", "stored_records", "VERDICT_PREFIX",
]


def start(domains: Mapping[str, Sequence[str]], min_group_size: int, max_concurrent: int = 0, within_domains: bool = False) -> DiagnoseState:
    """A new run over these topology domains (domain -> node names; "" = unlabelled nodes) and its first wave;
    `within_domains`: no test spans two domains (see the module docstring)."""
    if isinstance(min_group_size, bool) or not isinstance(min_group_size, int) or min_group_size < 1:
        raise DiagnoseError(f"diagnose: minGroupSize must be an integer >= 1, got {min_group_size!r}")
    if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int) or max_concurrent < 0:
        raise DiagnoseError(f"diagnose: maxConcurrent must be an integer >= 0, got {max_concurrent!r}")
    cleaned = _check_domains(domains)
    status: tuple[tuple[str, NodeStatus], ...] = tuple(sorted((node, "untested") for _, nodes in cleaned for node in nodes))
    state = DiagnoseState(min_group_size, max_concurrent, cleaned, 0, status, (), within_domains=within_domains)
    return replace(state, plan=Planner(state, Evidence(state)).plan())


class GroupResult(TypedDict, total=False):
    """What follow_up reads of a finished group: a Workflow's status.orchestration.groups entry. The fields of
    api.bodies.GroupStatus, with the same types, so that view is one of these (this layer does not import api)."""

    name: str
    nodes: list[str]
    domains: list[str]
    phase: Literal["Pending", "Running", "Succeeded", "Failed"]  # api.resources.Phase
    measurements: dict[str, float]


def follow_up(groups: Sequence[GroupResult], min_group_size: int, max_concurrent: int = 0,
              within_domains: bool = False, cliques: Mapping[str, str] | None = None,
              reasons: Mapping[str, str] | None = None, culprits: Mapping[str, Sequence[str]] | None = None,
              hardware: Mapping[str, Sequence[str]] | None = None, unavailable: Collection[str] = ()) -> DiagnoseState | None:
    """onFailure: diagnose. A run over the nodes of a finished intra-rack or full-scale iteration that starts from its
    groups' results (recorded as screening), so passed groups' nodes are references at once; None when none failed.
    `within_domains`: no test spans two domains (no inter test, no link search, partners from the node's own).
    Each node's domain is its group's when every group was cut inside one (intra-rack); else (a full-scale group spans
    several) `cliques`: node -> its domain as the Nodes are labelled ("" or absent: none), so the links between them
    are searched; without it every node is unlabelled and a link fault unsearched. `reasons`, `culprits`, `hardware`,
    `unavailable`: as record_round's."""
    if all(g.get("phase") == "Succeeded" for g in groups):
        return None
    nodes = sorted({str(n) for g in groups for n in g["nodes"]})
    by_domain: dict[str, set[str]] = {}
    labelled = all(len(g.get("domains") or ()) == 1 for g in groups)
    for group in groups:
        for node in group["nodes"]:
            domain = str(group["domains"][0]) if labelled else str((cliques or {}).get(str(node)) or "")
            by_domain.setdefault(domain, set()).add(str(node))
    state = start({d: sorted(ns) for d, ns in by_domain.items()}, min_group_size, max_concurrent, within_domains)
    values = measured(groups)
    members = [tuple(sorted(str(n) for n in g["nodes"])) for g in groups]
    imported = tuple(Probe(0, "screening", str(g["name"]), nodes, nodes, ok := g.get("phase") == "Succeeded", values.get(str(g["name"])),
                           None if ok else (reasons or {}).get(str(g["name"])), () if ok else _culprits(culprits, str(g["name"]), nodes),
                           () if ok else _flagged(hardware, str(g["name"]), nodes))
                     for g, nodes in zip(groups, members, strict=True))
    recorded = replace(state, round=1, tests=imported, plan=(), status=tuple((n, "untested") for n in nodes))
    ev = Evidence(recorded)
    return _conclude(replace(recorded, plan=Planner(recorded, ev, unavailable).plan()), ev)


def plan_round(state: DiagnoseState) -> list[Group]:
    """The groups (Jobs) of the current wave; [] once complete. Names are unique over the run and DNS-safe."""
    domain_of = state.domain_of
    return [Group(p.group, p.nodes, tuple(sorted({domain_of[n] for n in p.nodes} - {""}))) for p in state.plan]


def record_round(state: DiagnoseState, passed: Mapping[str, bool], values: Mapping[str, float] | None = None,
                 reasons: Mapping[str, str] | None = None, culprits: Mapping[str, Sequence[str]] | None = None,
                 hardware: Mapping[str, Sequence[str]] | None = None, untested: Collection[str] = (),
                 unavailable: Collection[str] = ()) -> DiagnoseState:
    """The state after the current wave, given each group's outcome (missing or timed out = failed), where the Job
    measured one its value (bus bandwidth), for a failed group whose value is not why it failed, the reason (the
    Workflow controller's `_failure_reasons`), and the members its own log named where it named some, not all
    (`_failure_culprits`), and the members a hardware check flagged while it ran (`_hardware_flagged`: the Job failed
    HardwareFailureDetected), each convicted `faulty` on that alone. The groups `untested` ran nothing (a member flagged
    before its workload started: a node cordoned between rounds): recorded with no outcome (passed None), no evidence
    for or against any member. The nodes `unavailable` (left out by the engine: cordoned) are in no later test."""
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
    values, reasons = values or {}, reasons or {}
    done = tuple(replace(p, reason=reasons.get(p.group)) if p.group in untested else
                 replace(p, passed=(ok := passed.get(p.group, False)), value=_number(values.get(p.group)),
                         reason=None if ok else reasons.get(p.group), culprits=() if ok else _culprits(culprits, p.group, p.nodes),
                         hardware=() if ok else _flagged(hardware, p.group, p.nodes))
                 for p in state.plan)
    recorded = replace(state, round=state.round + 1, tests=state.tests + done, plan=())
    ev = Evidence(recorded)
    plan = Planner(recorded, ev, unavailable).plan()
    return _conclude(replace(recorded, plan=plan), ev)


def _culprits(culprits: Mapping[str, Sequence[str]] | None, group: str, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """The members of `group` its log named; a name that is not a member is not the test's to blame."""
    named = set((culprits or {}).get(group) or ())
    return tuple(n for n in nodes if n in named) if len(named & set(nodes)) < len(nodes) else ()


def _flagged(hardware: Mapping[str, Sequence[str]] | None, group: str, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """The members of `group` a hardware check flagged (every one of them, if it flagged all)."""
    flagged = set((hardware or {}).get(group) or ())
    return tuple(n for n in nodes if n in flagged)


class NodeRecord(TypedDict):
    """A node's record: failed x of y tests, which (by group name), and the measured values."""

    failed: int
    tests: int
    failedTests: list[str]
    values: list[float]


def node_record(state: DiagnoseState, node: str) -> NodeRecord:
    """A node's record: failed x of y tests, which, and the measured values."""
    tests = state.evidence(node)
    failed = [t for t in tests if t["passed"] is False]
    return {"failed": len(failed), "tests": len(tests), "failedTests": [t["group"] for t in failed],
            "values": [t["value"] for t in tests if "value" in t]}


def measured(groups: Sequence[Mapping[str, object]], metric: str = BUS_BANDWIDTH) -> dict[str, float]:
    """Each finished group's measured value (Workflow group status -> record_round's `values`)."""
    values = {}
    for group in groups:
        measurements = group.get("measurements")
        value = _number(measurements.get(metric)) if isinstance(measurements, Mapping) else None
        if value is not None:
            values[str(group["name"])] = value
    return values


def stored_records(data: Mapping[str, object], nodes: Iterable[str], limit: int = 4, shown: ValueShown = significant) -> dict[str, str]:
    """Each of `nodes`' record ("failed 2 of 2 tests (r0-screen-3 at 265.63, ...)") from a stored state, for the lines a
    console shows while the diagnosis runs; {} when the state cannot be read (its readers say so)."""
    try:
        state = DiagnoseState.from_dict(data)
    except (DiagnoseError, KeyError, TypeError, ValueError):
        return {}
    wanted = set(nodes)
    tests: dict[str, list[dict[str, object]]] = {node: [] for node in wanted}
    for probe in state.tests:  # once over the tests, whatever the number of nodes asked
        for node in wanted.intersection(probe.nodes):
            tests[node].append(probe.evidence())
    crossed = link_faults_crossed(dict(state.domains), [note.cliques for note in state.infrastructure_faults])
    return {node: record_text(found, limit=limit, crossed=crossed, shown=shown, node=node) for node, found in tests.items() if found}


# Tests about the links between cliques: their members stand for their cliques; a healthy one is not under test.
LINK_STAGES = frozenset({"inter", "link"})


def stored_partners(data: Mapping[str, object]) -> dict[str, str]:
    """The healthy nodes the planned round's tests are not about, each with its test's name, from a stored state ({}
    when it cannot be read): a confirmation's reference partners (proven healthy before: a suspect may partner
    another), and the healthy members of a test of the links between cliques (its cliques' representatives), so the
    map's running nodes are the suspects each round tests."""
    try:
        state = DiagnoseState.from_dict(data)
    except (DiagnoseError, KeyError, TypeError, ValueError):
        return {}
    healthy = {node for node, status in state.status if status == "healthy"}
    return {node: probe.group for probe in state.plan
            for node in (probe.nodes if probe.stage in LINK_STAGES else probe.padding) if node in healthy}


VERDICT_PREFIX = "diagnose: "  # a diagnosis's verdict message (the failed-nodes ConfigMap, the report) starts so


def verdict_message(state: DiagnoseState, node: str, shown: ValueShown = significant) -> str:
    """One line for the failed-nodes ConfigMap: the verdict and the tests that decided it."""
    crossed = link_faults_crossed(dict(state.domains), [note.cliques for note in state.infrastructure_faults])
    return f"{VERDICT_PREFIX}{state.node_status[node]}, {record_text(state.evidence(node), crossed=crossed, shown=shown, node=node)}"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _conclude(state: DiagnoseState, ev: Evidence) -> DiagnoseState:
    """Node statuses, named infrastructure faults and, once complete, the notes that explain every verdict."""
    status: dict[str, NodeStatus] = {}
    for node, _ in state.status:
        if node in ev.convicted:
            status[node] = ev.convicted[node]
        elif node in ev.clear:
            status[node] = "healthy"
        elif node not in ev.by_node:
            status[node] = "untested" if not state.complete else "inconclusive"
        else:
            status[node] = "suspect" if not state.complete else "inconclusive"
    faults = tuple(_fault_note(state, ev, h, tests) for h, tests in sorted(ev.named.items()))
    notes: list[Note] = []
    if state.complete:
        notes = _final_notes(state, ev, status)
    return replace(state, status=tuple(sorted(status.items())), infrastructure_faults=faults, notes=tuple(notes))


FAULT_TESTS_SHOWN = 6  # failed tests a fault's message names (its `tests` hold them all)
SHARED_LINKS_SHOWN = 4  # links an inconclusive node's note names that every failure of it crossed


def _fault_note(state: DiagnoseState, ev: Evidence, h: links.Hypothesis, tests: tuple[int, ...]) -> Note:
    groups = tuple(ev.tests[i].group for i in tests)
    shown = ", ".join(groups[:FAULT_TESTS_SHOWN]) + (f" and {len(groups) - FAULT_TESTS_SHOWN} more" if len(groups) > FAULT_TESTS_SHOWN else "")
    if h in ev.eliminated:  # a link that passed some test too (fabric.flaky_link)
        crossing = [i for i, spans in enumerate(ev.spans) if links.in_test(h, spans)]
        failed = sum(1 for i in crossing if not ev.tests[i].passed)
        shown += f"; failing part of the time: {failed} of {len(crossing)} tests across it failed"
    return Note(max(ev.tests[i].round for i in tests), "fabric", links.describe(h, len(ev.fleet_cliques)) + f" (failed: {shown})",
                cliques=links.cliques_of(h), tests=groups)


def _final_notes(state: DiagnoseState, ev: Evidence, status: Mapping[str, NodeStatus]) -> list[Note]:
    notes = []
    rnd = max(state.round - 1, 0)  # the last round recorded, numbered as its tests are (state.round counts them)
    for node, verdict in sorted(status.items()):
        record = node_record(state, node)
        if verdict == "intermittent":
            notes.append(Note(rnd, "intermittent", f"{node} failed {record['failed']} of {record['tests']} tests ({', '.join(record['failedTests'])})",
                              (node,), tests=tuple(record["failedTests"])))
        elif verdict == "inconclusive":
            if node not in ev.by_node:
                why = "never tested (the run stopped first)"
            elif ev.indistinguishable(node):
                why = "no healthy node in its clique and its tests across cliques failed: its fault cannot be told from its clique's uplink"
            elif not ev.clear and state.min_group_size > 1:
                why = "no healthy node left to confirm it against"
            elif len(shared := ev.shared_links(node)) == 1 and record["failed"] < record["tests"]:
                why = (f"failed {record['failed']} of {record['tests']} tests, every failure across one link ({links.describe(shared[0])}): "
                       "that link failing part of the time explains them as well as the node")
            elif shared and record["failed"] < record["tests"]:
                # failures over three cliques or more cross several links alike: naming one of them (the first in
                # order) blamed a link that may be sound
                said = ", ".join(link_words(links.cliques_of(h)) for h in shared[:SHARED_LINKS_SHOWN])
                more = f" and {len(shared) - SHARED_LINKS_SHOWN} more" if len(shared) > SHARED_LINKS_SHOWN else ""
                why = (f"failed {record['failed']} of {record['tests']} tests, every failure across the same {len(shared)} links ({said}{more}): "
                       "one of them failing part of the time explains them as well as the node")
            else:
                why = f"failed {record['failed']} of {record['tests']} tests, but no two failures with different partners convict it"
            notes.append(Note(rnd, "inconclusive", f"{node}: {why}", (node,), tests=tuple(record["failedTests"])))
        elif verdict == "healthy" and ev.held_against(node):
            # its other failures have other explanations (a convicted partner, a link): the count says they happened
            notes.append(Note(rnd, "outweighed", f"{node} failed {record['failed']} of {record['tests']} tests, {ev.held_against(node)} "
                              f"that nothing else explains, and passed {ev.passes[node]}: counted healthy", (node,)))
    if state.within_domains and len(ev.fleet_cliques) >= 2:
        notes.append(Note(rnd, "within-domains", f"every test stayed inside one of the {len(ev.fleet_cliques)} cliques (MNNVL on: across them a "
                          "test runs over the network, which the threshold set for NVLink cannot judge); the links between "
                          "cliques were not tested", cliques=tuple(ev.fleet_cliques)))
    unresolved = ev.link_suspects()
    if unresolved:
        cliques = tuple(sorted({c for i in unresolved for c in ev.spans[i]}))
        groups = tuple(ev.tests[i].group for i in sorted(unresolved))
        left = sorted(frozenset().union(*unresolved.values()))
        # one left is named: "(1 candidate links left)" said neither which nor in good English
        which = f": {link_words(links.cliques_of(left[0]))}" if len(left) == 1 else ""
        notes.append(Note(rnd, "fabric-unresolved", f"{_tests(len(groups))} across {', '.join(cliques)} failed although their nodes are healthy; "
                          f"the degraded link could not be localised ({count(len(left), 'candidate link')} left{which})", cliques=cliques, tests=groups))
    elif passed_links := _failed_over_passed_links(ev, status):
        # No link fault explains these, as every link they crossed passed some test: a link failing part of the time
        # that failed too seldom to be named (or a flaky node outweighed). Said where the failures point.
        common = links.common((ev.spans[i] for i in passed_links), ev.uplinks)
        cliques = tuple(sorted({c for h in common for c in links.cliques_of(h)} or {c for i in passed_links for c in ev.spans[i]}))
        groups = tuple(ev.tests[i].group for i in passed_links)
        values = [value for i in passed_links if (value := ev.tests[i].value) is not None]
        notes.append(Note(rnd, "fabric-unresolved", unnamed_links_said(cliques, groups, values), cliques=cliques, tests=groups))
    return notes


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


def _failed_over_passed_links(ev: Evidence, status: Mapping[str, NodeStatus]) -> list[int]:
    """Failed tests across cliques that nothing explains, every member counted healthy."""
    return [i for i, test in enumerate(ev.tests) if not test.passed and len(ev.spans[i]) >= 2 and not ev.explained(i)
            and all(status.get(n) == "healthy" for n in test.nodes)]


def problems(state: DiagnoseState) -> list[str]:
    """Why a complete run is not a pass besides its faulty nodes: inconclusive nodes, link faults (named or not)."""
    verdicts = state.verdicts()
    unsure = sorted(n for n, v in verdicts.items() if v == "inconclusive")
    found = [f"{len(unsure)} nodes inconclusive ({', '.join(unsure[:8])}{' ...' if len(unsure) > 8 else ''})"] if unsure else []
    found += [f"infrastructure fault: {note.message}" for note in state.infrastructure_faults]
    found += [f"infrastructure fault: {note.message}" for note in state.notes if note.kind == "fabric-unresolved"]
    outweighed = sorted(n for note in state.notes if note.kind == "outweighed" for n in note.nodes)
    if outweighed:  # a failure nobody explains is not a pass, even when later passes outweigh it
        found.append(f"{len(outweighed)} nodes passed later tests after a failure nothing explains ({', '.join(outweighed[:8])}{' ...' if len(outweighed) > 8 else ''})")
    return found


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


__all__ += ["round_cap", "screening_groups"]
