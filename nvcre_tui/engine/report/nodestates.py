"""Each node's map state (and the line explaining it) from the read model's categories, computed in full or
kept up to date between snapshots (no Textual).

What a category says about its nodes is a sequence of *marks* from its sources, in order: the Workflow's
status before its Jobs (exclusions, groups, iterations, diagnose), each Job (blamed and unblamed members),
then the failedNodes the Workflow stores (a diagnosis's verdicts). A node's state is the most urgent state among its marks; its detail
comes from the marks at that state only (a failure's reason, never a lesser state's), named by the category that marked it:
within a category the last overriding detail, else the first offered; across categories the first category's, the others at
that state named after it (as the failures pane lists a node under its first category, `+N` others). `NodeStateModel` keeps every source's marks and, for a new
snapshot, recomputes only the sources whose object changed (the watch cache replaces an object when it
changes and shares it otherwise, so identity says what changed) and only the nodes those sources mark:
a refresh under 1,000 Job updates a second costs O(changed objects), not a walk of every certification.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.bodies import conditions_of, group_nodes, job_status, job_template_spec, labels_of, orchestration_of, workflow_status
from nvcre_tui.engine.api.nodes import is_cordoned, node_name
from nvcre_tui.engine.api.vocabulary import (FAILED, IN_PROGRESS, LABEL_GROUP, LABEL_WORKFLOW, NOT_RUN, STATE_PRECEDENCE, STOPPED_FOR_REFUSAL,
                                             SUCCEEDED, TESTED_NOW, UNDER_SUSPICION, VALIDATION_FAILED)
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import blamed_members, recorded_blame, timed_out_everywhere, timeout_acquitted
from nvcre_tui.engine.diagnose import VERDICT_PREFIX, stored_partners, stored_records
from nvcre_tui.engine.judging.blame import blamed_together
from nvcre_tui.engine.judging.thresholds import diagnosis_values
from nvcre_tui.engine.judging.untested import tested_nothing
from nvcre_tui.engine.report.readmodel import CategoryView, pods_pending

Obj = dict[str, Any]
PLAIN, OFFER, OVERRIDE = 0, 1, 2  # a mark's detail: none, kept unless one came first, replaces any before it
Mark = tuple[str, str, int]  # (state, detail, how the detail applies)
Marks = dict[str, list[Mark]]  # node -> its marks from one source, in order
States = dict[str, tuple[str, str]]  # node -> (state, detail)
_RANK = {state.value: rank for rank, state in enumerate(STATE_PRECEDENCE)}
_UNTESTED = _RANK["untested"]  # a node nothing marks
# What a group's outcome says of a member its Job did not blame. A failed group ran it and proved nothing about it
# (a measurement missing, a run cut short, a neighbour's crash): inconclusive, neither convicted nor certified; unless
# its workload never ran at all (NOT_RUN: an image that cannot be pulled, pods nobody made): untested, as the report
# counts it.
MEMBER_STATES = {"Running": "running", IN_PROGRESS: "running", SUCCEEDED: "passed", FAILED: "inconclusive"}
# The same while the category diagnoses: its rounds speak for their members (a failed test's member the diagnosis
# clears later is healthy, not inconclusive). Until the round that holds a failed test is weighed, its members not
# yet proven healthy are suspects (their failure shows at once, not when the round's slowest test ends); once the
# diagnosis is complete a failed group marks nothing, the verdicts do.
DIAGNOSE_MEMBER_STATES = {"Running": "running", IN_PROGRESS: "running", SUCCEEDED: "passed", FAILED: "suspect"}
DIAGNOSED_MEMBER_STATES = {"Running": "running", IN_PROGRESS: "running", SUCCEEDED: "passed"}


def _mark(marks: Marks, node: str, state: str, detail: str = "", how: int = PLAIN) -> None:
    marks.setdefault(node, []).append((state, detail, how))


def workflow_marks(category: CategoryView) -> tuple[Marks, Marks]:
    """What a category's Workflow says before its Jobs, and after them (its failedNodes)."""
    wf = category.workflow
    assert wf is not None
    before: Marks = {}
    after: Marks = {}
    orch = category.orchestration
    for item in orch.get("excludedNodes") or []:
        _mark(before, item["name"], "excluded", item.get("message") or item["reason"], OFFER)
    diagnose: Mapping[str, Any] | None = orch.get("diagnose")
    # A diagnosis that stopped (on a group that tested nothing) is over too, with no round left to weigh.
    states = MEMBER_STATES if diagnose is None else DIAGNOSE_MEMBER_STATES if diagnosis_open(wf) else DIAGNOSED_MEMBER_STATES
    cleared = set((diagnose or {}).get("healthyNodes") or [])  # reference partners: a failed test beside them says nothing of them
    # A finished Workflow's current groups keep only name, nodes and phase: the rest is in its last record.
    last = category.iterations[-1].groups if category.iterations and cond.is_terminal(wf) else []
    recorded: dict[object, Mapping[str, Any]] = {g.get("name"): g for g in last}
    # A running test's reference partners are proven healthy and the test is not about them: drawn passed, so the
    # map's running nodes are the ones each round tests (a review took partners for suspects).
    partners = _partners(wf, diagnose) if diagnose is not None and states is DIAGNOSE_MEMBER_STATES else {}
    for current in category.groups:
        group: dict[str, Any] = {**recorded.get(current.get("name"), {}), **current}
        phase = str(group.get("phase") or "")
        state = unblamed_state(phase, group.get("reason"), states)
        # While the round is weighed: the members its Job blamed (even where the test never ran: a node that could
        # not take its pod), and every member of a test that ran and failed, except nodes proven healthy before. A
        # group that tested nothing (its Job deleted, a service down) is no evidence: the diagnosis stops on it.
        weighed = states is DIAGNOSE_MEMBER_STATES and phase == FAILED and not tested_nothing(group)
        if states is DIAGNOSE_MEMBER_STATES and phase == FAILED and not weighed:
            state = "untested"
        blamed = set(blamed_members(group, group["nodes"])) if weighed else set()
        for node in group["nodes"]:
            if weighed and (node in blamed or state == "suspect") and node not in cleared:
                said = (f"{group.get('blamedFor')} in test {group.get('name')}" if node in blamed
                        else f"in failed test {group.get('name')} ({failure_reason(None, group)}), not blamed by it")
                _mark(before, node, "suspect", f"{said}; the diagnosis weighs it this round", OFFER)
            elif state == "running" and partners.get(node) == group.get("name"):
                _mark(before, node, "passed", f"healthy: reference partner in diagnose test {group.get('name')}", OVERRIDE)
            elif state != "suspect":
                _mark(before, node, state)
    for record in category.iterations:
        for outcome in record.groups:
            finished = unblamed_state(str(outcome.get("phase") or ""), outcome.get("reason"), states)
            if finished in ("passed", "inconclusive"):  # what a finished iteration proved
                for node in outcome["nodes"]:
                    _mark(before, node, finished)
    diagnose = diagnose or {}
    # The map follows diagnose round by round: suspects narrow as the waves clear them, and a suspect the current
    # round tests shows running (a suspect would outrank it), so the operator sees which ones each round tries.
    # The round is the state's current one, numbered as its tests are (r2-...) and as the drill-down numbers it.
    testing = {node for group in category.groups if group.get("phase") == "Running" for node in group["nodes"]}
    suspects = diagnose.get("suspectNodes") or []
    convicted = [*(diagnose.get("faultyNodes") or []), *(diagnose.get("intermittentNodes") or [])]
    # Why each is a suspect, or was convicted: the tests it failed (a convicted node's line said only "intermittent
    # (fails some tests, passes others)" until the diagnosis ended, where the drill-down said "failed 3 of 5 tests").
    records = _suspect_records(wf, diagnose, [*suspects, *convicted]) if suspects or convicted else {}
    # A diagnosis over with suspects left (stopped on a group that tested nothing, or its Workflow ended) decided
    # nothing of them: inconclusive, its word for a node it could not decide, as the report and `certification list`
    # count them (no failed node), not suspects for ever (the wall said 4 suspect where the report said none failed).
    over = states is DIAGNOSED_MEMBER_STATES
    for node in suspects:
        under_test = node in testing and not over
        _mark(before, node, "inconclusive" if over else "running" if under_test else "suspect",
              f"diagnose round {diagnose.get('round', 0)}: {UNDER_SUSPICION}{f', {TESTED_NOW}' if under_test else ''}"
              + (", undecided: the diagnosis ended" if over else "") + (f"; {records[node]}" if node in records else ""), OFFER)
    for node in diagnose.get("inconclusiveNodes") or []:
        _mark(before, node, "inconclusive")
    # Verdicts as the diagnosis reaches them: the Workflow lists its convicted nodes in failedNodes only when it ends,
    # and a node convicted in round 2 of 6 showed untested on the map and the wall meanwhile (the pane listed it).
    for node in diagnose.get("faultyNodes") or []:
        _mark(before, node, "failed", f"{VERDICT_PREFIX}faulty" + (f", {records[node]}" if node in records else ""), OFFER)
    for node in diagnose.get("intermittentNodes") or []:
        _mark(before, node, "failed", f"{VERDICT_PREFIX}intermittent, " + records.get(node, "fails some tests, passes others"), OFFER)
    group_size = {n: len(g["nodes"]) for g in category.groups for n in g["nodes"]}
    # The verdicts a Workflow stores (a diagnosis's); other blames are its Jobs' marks (their failedNodes).
    for failed in workflow_status(wf).get("failedNodes") or []:
        if orch.get("diagnose") is not None or group_size.get(failed["name"], 1) == 1:
            _mark(after, failed["name"], "failed", ": ".join(filter(None, (failed["reason"], failed.get("message")))), OVERRIDE)
    if orch.get("diagnose") is None:
        _gone_job_marks(category, after)
    return before, after


_RECORDS: dict[tuple[object, ...], dict[str, str]] = {}  # (Workflow uid, round, tests, suspects) -> their records
RECORDS_KEPT = 64


_PARTNERS: dict[tuple[object, ...], dict[str, str]] = {}  # (Workflow uid, round, planned tests) -> reference partners


def _partners(wf: Obj, diagnose: Mapping[str, Any]) -> dict[str, str]:
    """stored_partners, once per planned round of a Workflow (as _suspect_records)."""
    plan = diagnose.get("plan")
    key = (wf["metadata"].get("uid"), diagnose.get("round"), len(plan) if isinstance(plan, list) else None)
    found = _PARTNERS.get(key)
    if found is None:
        if len(_PARTNERS) >= RECORDS_KEPT:
            _PARTNERS.pop(next(iter(_PARTNERS)))
        found = _PARTNERS[key] = stored_partners(diagnose)
    return found


def _suspect_records(wf: Obj, diagnose: Mapping[str, Any], suspects: Sequence[str]) -> dict[str, str]:
    """stored_records, once per round of a Workflow (its state changes by round; its status, each time a group starts
    or ends): decoding a 10,000-node state takes ~13 ms, and every snapshot of a changed Workflow asks for it."""
    tests = diagnose.get("tests")
    key = (wf["metadata"].get("uid"), diagnose.get("round"), len(tests) if isinstance(tests, list) else None, tuple(suspects))
    found = _RECORDS.get(key)
    if found is None:
        if len(_RECORDS) >= RECORDS_KEPT:
            _RECORDS.pop(next(iter(_RECORDS)))
        found = _RECORDS[key] = stored_records(diagnose, suspects, shown=diagnosis_values(job_template_spec(wf).get("thresholds")))
    return found


# How a category's Jobs are read (job_marks): as they say, not at all (DIAGNOSE: its rounds speak), or with their
# Timeout blames convicting nobody (ACQUITTED: every run timed out, controllers.iterations.timed_out_everywhere).
AS_SAID, DIAGNOSE, ACQUITTED = "", "diagnose", "acquitted"


def job_marks(job: Obj, judging: str) -> Marks:
    """What one Job says about its group: waiting while its pods do not run yet (the Workflow says running from the
    moment the Job is made), else nothing while its category is in diagnose (the rounds speak); where its category's
    every run timed out (ACQUITTED), its Timeout blames leave its members inconclusive."""
    waiting = pods_pending(job)
    if waiting is not None:
        return {node: [("waiting", f"waiting for pods: {waiting}", OVERRIDE)] for node in group_nodes(job)}
    if judging == DIAGNOSE:
        return {}
    blamed = _convicting(job_status(job).get("failedNodes") or [], judging)
    if blamed or job_outcome(job) == FAILED:
        return _failed_group_marks(_test_name(job), group_nodes(job), blamed, failure_reason(job))
    return {}


def _convicting(blamed: Sequence[Mapping[str, Any]], judging: str) -> Sequence[Mapping[str, Any]]:
    """The blames of a Job or of its group's record that convict, as the report counts them: all of them, or, where
    its category's every run timed out (ACQUITTED), none for the Timeout (controllers.iterations.timeout_acquitted)."""
    return timeout_acquitted(blamed) if judging == ACQUITTED else blamed


def _failed_group_marks(name: str, members: Sequence[str], blamed: Sequence[Mapping[str, Any]], reason: str) -> Marks:
    """What a failed group says of its members: its blames (_blame_marks), or, where it failed on no node's account,
    each member ran and proved nothing (inconclusive), or never ran (untested, NOT_RUN)."""
    if blamed:
        return _blame_marks(name, members, blamed, reason)
    if reason in STOPPED_FOR_REFUSAL:
        return {node: [("untested", f"in group {name}, stopped unfinished, its result not taken: {reason}", OFFER)] for node in members}
    if reason in NOT_RUN:
        return {node: [("untested", f"in group {name}, which never ran: {reason}", OFFER)] for node in members}
    return {node: [("inconclusive", f"in failed group {name}, no node blamed: {reason}", OFFER)] for node in members}


def job_outcome(job: Obj) -> str:
    """A Job's outcome as its group records it: Failed when it failed or ran to its end and missed a threshold
    (ValidationFailed), else its phase (Pending before it runs)."""
    return FAILED if cond.is_true(job, VALIDATION_FAILED) else cond.phase(job) or "Pending"


def failure_condition(job: Obj) -> Mapping[str, Any]:
    """The condition that says why a Job failed: ValidationFailed (it ran to its end and missed a threshold, or
    measured nothing to check) before Failed (RunIncomplete, WorkloadNotStarted, ...); {} when neither is True."""
    found = (cond.find(conditions_of(job), kind) for kind in (VALIDATION_FAILED, FAILED))
    return next((c for c in found if c and c.get("status") == "True"), {})


def failure_reason(job: Obj | None, group: Mapping[str, Any] | None = None) -> str:
    """Why a failed group failed, in one word: its Job's `failure_condition` reason, else the reason its record kept
    (its Job gone)."""
    reason = failure_condition(job).get("reason") if job is not None else None
    return str(reason or (group or {}).get("reason") or (group or {}).get("blamedFor") or "failed")


def member_state(members: Sequence[str], blamed: Sequence[Mapping[str, Any]], node: str, outcome: str, reason: str | None = None,
                 *, waiting: bool = False, diagnosing: bool = False) -> str:
    """What one group says of one member: waiting while its Job's pods do not run (`pods_pending`), else its blame
    (blamed_state), else what the group's outcome (a group record's phase, or `job_outcome`, and its `reason`) says of
    a member it did not blame (`unblamed_state`; while a diagnosis is open, `diagnosis_open`, a member of a test that
    ran and failed is a suspect). The drill-down's member rows and the node screen's Jobs show this, as the map does."""
    return member_states(members, blamed, [node], outcome, reason, waiting=waiting, diagnosing=diagnosing)[node]


def member_states(members: Sequence[str], blamed: Sequence[Mapping[str, Any]], nodes: Sequence[str], outcome: str, reason: str | None = None,
                  *, waiting: bool = False, diagnosing: bool = False) -> dict[str, str]:
    """member_state of each of `nodes`, the group's blames read once and each blame's word weighed once per reason:
    member by member, a group of 1024 blamed together took 0.3 s of each drill-down redraw."""
    if waiting:
        return dict.fromkeys(nodes, "waiting")
    failures = {str(f.get("name")): f for f in reversed(blamed)}  # the first blame of a node, as a scan finds it
    words: dict[str, str] = {}
    found: dict[str, str] = {}
    for node in nodes:
        failure = failures.get(node)
        if failure is not None:
            blame_reason = str(failure.get("reason") or "")
            if blame_reason not in words:
                words[blame_reason] = blamed_state(members, blamed, blame_reason)
            found[node] = words[blame_reason]
        elif diagnosing and tested_nothing({"phase": outcome, "reason": reason}):
            found[node] = "untested"
        else:
            found[node] = unblamed_state(outcome, reason, DIAGNOSE_MEMBER_STATES if diagnosing else MEMBER_STATES)
    return found


def diagnosis_open(workflow: Obj | None) -> bool:
    """Whether the Workflow diagnoses and its diagnosis still weighs rounds (not complete, nor stopped with the
    Workflow finished): its failed tests' members are suspects until then."""
    diagnose = orchestration_of(workflow).get("diagnose") if workflow is not None else None
    return diagnose is not None and workflow is not None and not diagnose.get("complete") and not cond.is_terminal(workflow)


def unblamed_state(outcome: str, reason: object, states: Mapping[str, str] = MEMBER_STATES) -> str:
    """The state of a member its group did not blame: by the group's outcome (MEMBER_STATES), untested where it
    failed before its workload ran (NOT_RUN)."""
    return "untested" if outcome == FAILED and reason in NOT_RUN else states.get(outcome, "untested")


def blamed_state(members: Sequence[str], blamed: Sequence[Mapping[str, Any]], reason: str) -> str:
    """What one blame by a group's Job makes of a node: `failed` when it was blamed alone (a single-node group, a
    node-specific reason, or fewer nodes than the group), `suspect` when the whole group was blamed together (a
    multi-node run that missed a threshold convicts none of its members by itself). Every screen shows this word."""
    return "suspect" if blamed_together(members, blamed, reason) else "failed"


def _test_name(job: Obj) -> str:
    """A Job as the other lines name its test: `group-0-iter-1` (its Workflow's name left off), or `group-0` for the
    one Job of a single group; its full name when it carries no Workflow label."""
    name, labels = str(job["metadata"]["name"]), labels_of(job)
    workflow = labels.get(LABEL_WORKFLOW)
    if not workflow or not name.startswith(f"{workflow}-"):
        return name
    if name == f"{workflow}-job":
        return labels.get(LABEL_GROUP) or name
    return name.removeprefix(f"{workflow}-")


def _blame_marks(job_name: str, members: Sequence[str], blamed: Sequence[Mapping[str, Any]], reason: object) -> Marks:
    marks: Marks = {}
    if not blamed:
        return marks
    words: dict[str, str] = {}  # per reason, the same for every failure of it (weighed per failure: O(n²), 0.5 s at 1,024 blamed)
    for failed in blamed:
        if failed["reason"] not in words:
            words[failed["reason"]] = blamed_state(members, blamed, failed["reason"])
        _mark(marks, failed["name"], words[failed["reason"]], f"{failed['reason']}: {failed.get('message', '')}", OVERRIDE)
    # Unblamed members of a failed group ran but proved nothing (inconclusive); of one whose workload never ran (a
    # member's node could not take its pod), they were not tested at all: `unblamed_state`, as member rows say it.
    state = unblamed_state(FAILED, reason)
    said = f"in group {job_name}, which never ran: {reason}" if state == "untested" else f"in failed group {job_name}, not blamed"
    for name in sorted(set(members) - {f["name"] for f in blamed}):
        _mark(marks, name, state, said, OFFER)
    return marks


def _gone_job_marks(category: CategoryView, after: Marks) -> None:
    """What the Jobs deleted since their groups failed said, from the groups' records (blamedFor, blamedMembers),
    read as their Jobs would be (job_marks: a Timeout convicts nobody where every run timed out)."""
    present = set(category.jobs_by_name)
    judging = _judging(category)
    for group in (*category.groups, *(g for record in category.iterations for g in record.groups)):
        ref = group.get("jobRef")
        if ref and ref not in present and group.get("blamedFor"):
            blamed = _convicting(recorded_blame(group, group["nodes"]), judging)
            for node, found in _failed_group_marks(ref, group["nodes"], blamed, failure_reason(None, group)).items():
                after.setdefault(node, []).extend(found)
            present.add(ref)  # a current group and its record: one Job


def _diagnosing(category: CategoryView) -> bool:
    return category.orchestration.get("diagnose") is not None


def _judging(category: CategoryView) -> str:
    """How the category's Jobs are read (job_marks)."""
    if _diagnosing(category):
        return DIAGNOSE
    return ACQUITTED if category.workflow is not None and timed_out_everywhere(category.workflow) else AS_SAID


def resolve(mark_lists: Iterable[tuple[str, Sequence[Mark]]], node: Obj) -> tuple[str, str]:
    """A node's (state, detail) from its marks in order, each list with the category that marked it; a cordoned node
    nothing marks is excluded. The detail is said at the winning state only, named by its category (module docstring)."""
    found = [(category, mark) for category, marks in mark_lists for mark in marks]
    if not found:
        return ("excluded", "cordoned") if is_cordoned(node) else (STATE_PRECEDENCE[_UNTESTED].value, "")
    best = min(_RANK[state] for _, (state, _, _) in found)
    details: dict[str, tuple[str | None, str | None]] = {}  # category -> (last override, first offer), in category order
    for category, (state, detail, how) in found:
        if _RANK[state] != best or how == PLAIN:
            continue
        override, offered = details.get(category, (None, None))
        if how == OVERRIDE:
            override = detail
        elif offered is None:
            offered = detail
        details[category] = (override, offered)
    said = [(category, override if override is not None else offered or "") for category, (override, offered) in details.items()]
    said = [(category, detail) for category, detail in said if detail]
    if not said:
        return STATE_PRECEDENCE[best].value, ""
    category, detail = said[0]
    others = [other for other, _ in said[1:] if other and other != category]
    also = f" (also {', '.join(others)})" if others else ""
    return STATE_PRECEDENCE[best].value, (f"{category}: {detail}" if category else detail) + also


def compute(categories: Sequence[CategoryView], nodes: Sequence[Obj]) -> States:
    """Every node's (state, detail), in the order of `nodes`, walking every source once."""
    by_node: dict[str, list[tuple[str, Sequence[Mark]]]] = {}
    for category in categories:
        before, after = workflow_marks(category)
        judging = _judging(category)
        for marks in (before, *(job_marks(job, judging) for job in category.jobs), after):
            for node, found in marks.items():
                by_node.setdefault(node, []).append((category.name, found))
    return {node_name(n): resolve(by_node.get(node_name(n), ()), n) for n in nodes}


@dataclass
class _Source:
    """One object that marks nodes: a Workflow (before or after its Jobs) or a Job."""

    obj: Obj
    diagnosing: str  # its category's judging (job_marks), for a Job; AS_SAID for a Workflow
    marks: Marks
    category: str  # the name of the category it belongs to (its marks' details are said under it)


class NodeStateModel:
    """`compute`'s result, kept current across snapshots of one set of categories (one certification or all)."""

    def __init__(self) -> None:
        self._layout: list[tuple[str, int]] = []  # per category: its Workflow's name and how many Jobs it has
        self._job_names: list[tuple[str, ...]] = []  # per category: its Jobs' names (its Workflow's marks read them)
        self._sources: list[_Source] = []  # per category: its Workflow before its Jobs, each Job, its Workflow after
        self._node_sources: dict[str, list[int]] = {}  # node -> indexes of the sources that mark it, in order
        self._nodes: list[Obj] = []
        self._by_name: dict[str, Obj] = {}
        self._states: States = {}

    def update(self, categories: Sequence[CategoryView], nodes: Sequence[Obj]) -> States:
        """The states for these categories and nodes (a new dict; the caller may keep it)."""
        changed = self._changes(categories, nodes)
        if changed is None:
            self._rebuild(categories, nodes)
        else:
            self._apply(changed, categories, nodes)
        return dict(self._states)

    @staticmethod
    def _flat(categories: Sequence[CategoryView]) -> Iterator[tuple[int, str, Obj, str]]:
        """(category index, role, object, diagnosing) of every source, in mark order."""
        for index, category in enumerate(categories):
            wf = category.workflow
            assert wf is not None
            judging = _judging(category)
            yield index, "before", wf, AS_SAID
            for job in category.jobs:
                yield index, "job", job, judging
            yield index, "after", wf, AS_SAID

    def _changes(self, categories: Sequence[CategoryView], nodes: Sequence[Obj]) -> list[tuple[int, int, str, Obj, str]] | None:
        """The sources whose object changed, as (source index, category index, role, object, diagnosing);
        None when the categories, their Jobs or the nodes are not the same ones (rebuild)."""
        if len(nodes) != len(self._nodes) or len(categories) != len(self._layout):
            return None
        for category, (name, jobs) in zip(categories, self._layout, strict=True):
            if (category.workflow or {}).get("metadata", {}).get("name") != name or len(category.jobs) != jobs:
                return None
        if any(a is not b and node_name(a) != node_name(b) for a, b in zip(nodes, self._nodes, strict=True)):
            return None
        changed = []
        for source_index, (source, (index, role, obj, diagnosing)) in enumerate(zip(self._sources, self._flat(categories), strict=True)):
            if source.obj is obj and source.diagnosing == diagnosing:
                continue
            if obj["metadata"]["name"] != source.obj["metadata"]["name"]:
                return None
            changed.append((source_index, index, role, obj, diagnosing))
        return changed

    @staticmethod
    def _marks(categories: Sequence[CategoryView], index: int, role: str, obj: Obj, diagnosing: str,
               workflows: dict[int, tuple[Marks, Marks]] | None = None) -> Marks:
        """One source's marks; a Workflow's worked out once for both its roles where `workflows` (by category index)
        keeps them for the pass."""
        if role == "job":
            return job_marks(obj, diagnosing)
        found = workflows.get(index) if workflows is not None else None
        if found is None:
            found = workflow_marks(categories[index])
            if workflows is not None:
                workflows[index] = found
        return found[0] if role == "before" else found[1]

    def _kept(self) -> dict[tuple[object, ...], _Source]:
        """The sources a rebuild may take as they are: a Job's marks are its object's alone; a Workflow's also read its
        category's Jobs (the ones deleted since their group failed), so they are kept with those Jobs' names."""
        kept: dict[tuple[object, ...], _Source] = {}
        index = 0
        for names in self._job_names:
            workflow = self._sources[index].obj
            for role, source in (("before", self._sources[index]), ("after", self._sources[index + len(names) + 1])):
                kept[(role, id(workflow), source.diagnosing, source.category, names)] = source
            for source in self._sources[index + 1 : index + len(names) + 1]:
                kept[("job", id(source.obj), source.diagnosing, source.category)] = source
            index += len(names) + 2
        return kept

    def _rebuild(self, categories: Sequence[CategoryView], nodes: Sequence[Obj]) -> None:
        """Everything again (categories, Jobs or nodes came or went), taking the marks of every object that is the same
        one as before (the watch cache shares an unchanged object): a Workflow of a group per node that got one Job
        more worked out every other category's marks and every Job's again (a refresh of a 10,000-node map as each batch
        of Jobs started)."""
        kept = self._kept() if len(self._job_names) == len(self._layout) else {}
        names = [tuple(str(job["metadata"]["name"]) for job in c.jobs) for c in categories]
        workflows: dict[int, tuple[Marks, Marks]] = {}
        sources = []
        for index, role, obj, diagnosing in self._flat(categories):
            category = categories[index].name
            key = ("job", id(obj), diagnosing, category) if role == "job" else (role, id(obj), diagnosing, category, names[index])
            source = kept.get(key)
            if source is None or source.obj is not obj:  # an id is only the same object while that object lives
                source = _Source(obj, diagnosing, self._marks(categories, index, role, obj, diagnosing, workflows), category)
            sources.append(source)
        self._layout = [(str((c.workflow or {}).get("metadata", {}).get("name")), len(c.jobs)) for c in categories]
        self._job_names = names
        self._nodes = list(nodes)
        self._sources = sources
        self._node_sources = {}
        for source_index, source in enumerate(self._sources):
            for node in source.marks:
                self._node_sources.setdefault(node, []).append(source_index)
        self._by_name = {node_name(n): n for n in nodes}
        self._states = {name: self._resolve(name, n) for name, n in self._by_name.items()}

    def _apply(self, changed: list[tuple[int, int, str, Obj, str]], categories: Sequence[CategoryView], nodes: Sequence[Obj]) -> None:
        dirty: dict[str, None] = {}  # the nodes to resolve again, in the order found
        workflows: dict[int, tuple[Marks, Marks]] = {}  # a changed Workflow's marks, for both its roles
        for source_index, index, role, obj, diagnosing in changed:
            old = self._sources[source_index].marks
            marks = self._marks(categories, index, role, obj, diagnosing, workflows)
            if old.keys() != marks.keys():
                for name in old.keys() - marks.keys():
                    self._node_sources[name].remove(source_index)
                for name in marks.keys() - old.keys():
                    insort(self._node_sources.setdefault(name, []), source_index)
            dirty.update(dict.fromkeys(old))
            dirty.update(dict.fromkeys(marks))
            self._sources[source_index] = _Source(obj, diagnosing, marks, categories[index].name)
        for node, seen in zip(nodes, self._nodes, strict=True):
            if node is not seen:  # a Node changed (its cordon may)
                self._by_name[node_name(node)] = node
                dirty[node_name(node)] = None
        self._nodes = list(nodes)
        for name in dirty:
            listed = self._by_name.get(name)
            if listed is not None:  # a node the snapshot lists (marks may name others)
                self._states[name] = self._resolve(name, listed)

    def _resolve(self, name: str, node: Obj) -> tuple[str, str]:
        sources = self._sources
        return resolve([(sources[index].category, sources[index].marks[name]) for index in self._node_sources.get(name, ())], node)
