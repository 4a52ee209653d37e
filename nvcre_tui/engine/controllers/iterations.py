"""A Workflow's groups as stored (without node lists where the same Workflow names them elsewhere) and as read
(with them).

`iterationHistory` keeps each group's outcome (name, phase, Job, times, measurements) as NVCRE's does, but not its
nodes: one copy of 10,000 cloud node names ("ip-10-0-1-2.us-west-2.compute.internal") is about 0.5 MiB of the
1.5 MiB an object may hold, and a copy per iteration (or diagnose round) would outgrow it. Nor do a diagnosing
Workflow's current groups: they are the diagnose plan, which names their nodes already (a copy there and one in the
groups took a 10,000-node diagnose to 1.44 MiB at its screening round). A group's nodes are known by its name
elsewhere in the same Workflow: the current groups (every iteration reuses them), the spec's plannedGroups, and
diagnose's test log and plan (each round's groups, and onFailure's imported iteration). Once a Workflow finishes,
its current groups keep what they are and how they ended (`settled_groups`): their Jobs, times and measurements are
in the last history record already. Writers store groups through `stored_orchestration`; readers take them through
`WorkflowGroups` (or `current_groups` and `finished_iterations`), and whom they blamed through `blamed_nodes`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar, cast

from nvcre_tui.engine.api.bodies import (GroupOutcome, GroupStatus, IterationRecord, job_status, job_template_spec, orchestration_of, workflow_spec,
                                         workflow_status)
from nvcre_tui.engine.api.vocabulary import FAILED, NOT_RUN, SUCCEEDED, TIMEOUT, WORKLOAD_FAILED
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers.conditions import is_terminal
from nvcre_tui.engine.diagnose import verdict_message
from nvcre_tui.engine.diagnose.state import DiagnoseError, DiagnoseState
from nvcre_tui.engine.diagnose.summary import ValueShown, significant
from nvcre_tui.engine.judging.results import job_failures, merge_failed
from nvcre_tui.engine.judging.thresholds import diagnosis_values
from nvcre_tui.engine.units import format_duration

JobBody = TypeVar("JobBody", bound=Mapping[str, Any])
EntryT = TypeVar("EntryT", bound=Mapping[str, Any])  # a failedNodes entry, as read or as built

# A group's keys the history leaves out: what the group is (the same in every iteration), not how it went.
STORED_ONLY_WHILE_CURRENT = frozenset({"nodes", "domains", "domainNodeCounts", "overflow"})
# A finished Workflow's current group's keys: what it is and how it ended.
SETTLED = STORED_ONLY_WHILE_CURRENT | {"name", "phase"}
# A diagnosing Workflow's current group's keys that its diagnose plan holds already.
NAMED_BY_THE_PLAN = frozenset({"nodes", "domains"})


def history_record(iteration: int, groups: Iterable[Mapping[str, Any]]) -> IterationRecord:
    """The iterationHistory entry of a finished iteration (or diagnose round)."""
    kept = [cast(GroupOutcome, {k: v for k, v in g.items() if k not in STORED_ONLY_WHILE_CURRENT}) for g in groups]
    return {"iteration": iteration, "groups": kept}


def settled_groups(groups: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A finished Workflow's current groups: what each group is and how it ended. The rest (Job, times, reason,
    measurements) is in the last iterationHistory record; a second copy would double a 4,000-node intra-node
    Workflow's last write."""
    return [{k: v for k, v in g.items() if k in SETTLED} for g in groups]


def stored_orchestration(orch: Mapping[str, Any]) -> dict[str, Any]:
    """status.orchestration as the Workflow stores it: a diagnosing Workflow's current groups without what the
    diagnose plan says of them (their nodes and domains)."""
    if orch.get("diagnose") is None:
        return dict(orch)
    return {**orch, "groups": [{k: v for k, v in g.items() if k not in NAMED_BY_THE_PLAN} for g in orch.get("groups") or []]}


class WorkflowGroups:
    """A Workflow's groups read back with their nodes: the current ones and each finished iteration's. What each
    group is by name is worked out once (decoding a 10,000-node diagnose state takes tens of milliseconds), so a
    reader that wants both pays for it once."""

    def __init__(self, workflow: Mapping[str, Any]) -> None:
        self.workflow = workflow
        self._known: dict[str, dict[str, Any]] | None = None

    @property
    def known(self) -> dict[str, dict[str, Any]]:
        """What each group of the Workflow is (the keys a record may leave out), by name."""
        if self._known is None:
            self._known = _groups_by_name(self.workflow)
        return self._known

    def current(self) -> list[GroupStatus]:
        """status.orchestration.groups with each group's nodes (and domains) restored where the record left them
        out; a group no record names gets no nodes (a damaged diagnose state)."""
        groups = orchestration_of(self.workflow).get("groups") or []
        if all("nodes" in g for g in groups):
            return list(groups)
        return [_restored(cast(GroupOutcome, g), self.known) for g in groups]

    def finished(self) -> list[FinishedIteration]:
        """iterationHistory with what each group is (nodes, domains, overflow) restored from its name (a record that
        kept its nodes, as older engines wrote, is read as it is)."""
        history = orchestration_of(self.workflow).get("iterationHistory") or []
        known = self.known if any("nodes" not in g for r in history for g in r.get("groups") or []) else {}
        return [{"iteration": record.get("iteration"), "groups": [_restored(g, known) for g in record.get("groups") or []]} for record in history]


class FinishedIteration(TypedDict):
    """An iterationHistory entry read back: its groups with their nodes."""

    iteration: int | None
    groups: list[GroupStatus]


def current_groups(workflow: Mapping[str, Any]) -> list[GroupStatus]:
    """status.orchestration.groups with their nodes (WorkflowGroups.current)."""
    return WorkflowGroups(workflow).current()


def finished_iterations(workflow: Mapping[str, Any]) -> list[FinishedIteration]:
    """iterationHistory with each group's nodes (WorkflowGroups.finished)."""
    return WorkflowGroups(workflow).finished()


def nodes_by_group(workflow: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every group name of a Workflow that some record ties to its nodes."""
    return {name: list(group.get("nodes") or []) for name, group in _groups_by_name(workflow).items()}


ITERATED_TEST = re.compile(r"(.+)-iter-\d+")  # an iteration's group as an onFailure diagnosis names it (iterated_name)


def iterated_name(group: str, iteration: object) -> str:
    """An iteration's group as an onFailure diagnosis names it among its tests (`<group>-iter-<n>`), as its Job."""
    return f"{group}-iter-{iteration}"


def _groups_by_name(workflow: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What each group of a Workflow is (the keys the history leaves out), by name."""
    orch = orchestration_of(workflow)
    # Later sources win: the plan recorded at creation, then what diagnose planned and tested (a plan partitioned
    # again reuses its names with other nodes), then the current groups that carry their nodes.
    known: dict[str, dict[str, Any]] = {}
    for group in ((workflow_spec(workflow).get("orchestration") or {}).get("plannedGroups") or []):
        known[str(group["name"])] = {k: v for k, v in group.items() if k in STORED_ONLY_WHILE_CURRENT}
    state = orch.get("diagnose")
    if state is not None:
        try:
            decoded = DiagnoseState.from_dict(state)
        except DiagnoseError:  # a damaged state loses its groups' nodes, not the rest of the view
            decoded = None
        if decoded is not None:
            domain_of = decoded.domain_of
            for probe in (*decoded.tests, *decoded.plan):
                domains = sorted({domain_of[n] for n in probe.nodes} - {""})
                known[probe.group] = {"nodes": list(probe.nodes), **({"domains": domains} if domains else {})}
                # an onFailure diagnosis names each iteration's group `<group>-iter-<n>`: its records name `<group>`
                if probe.round == 0 and (iterated := ITERATED_TEST.fullmatch(probe.group)):
                    known[iterated.group(1)] = known[probe.group]
    for group in orch.get("groups") or []:
        if "nodes" in group:  # a diagnosing Workflow's groups are known by its plan, above
            known[str(group["name"])] = {k: v for k, v in group.items() if k in STORED_ONLY_WHILE_CURRENT}
    return known


def _restored(group: GroupOutcome, known: Mapping[str, Mapping[str, Any]]) -> GroupStatus:
    if "nodes" in group:
        return cast(GroupStatus, group)
    return cast(GroupStatus, {"nodes": [], **known.get(str(group.get("name")), {}), **group})


def blamed_nodes(workflow: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A Workflow's failed nodes, one per (name, reason): the verdicts a diagnosing Workflow stores (its screening
    groups convict nobody), else what the Jobs its groups ran blamed, in iteration order (merged by
    judging.results.merge_failed: the first message wins, with its evidence). Those stay out of the Workflow's
    status: a fleet that misses a threshold everywhere would put an entry per node there, about 0.2 KiB each with a
    cloud name, towards the 1.5 MiB an object may hold. A Job gone since (deleted by hand) is read from its group's
    record (`blamedFor`, `blamedMembers`); a Job no group ran (another run's, left behind) blames nobody. A list an
    older engine stored is merged in."""
    stored = workflow_status(workflow).get("failedNodes") or []
    orch = orchestration_of(workflow)
    if orch.get("diagnose") is not None:
        if stored or is_terminal(workflow):
            return [dict(item) for item in stored]
        return _convicted_so_far(orch, {str(job["metadata"]["name"]): job for job in jobs}, diagnosis_values(job_template_spec(workflow).get("thresholds")))
    by_name = {str(job["metadata"]["name"]): job for job in jobs}
    groups = WorkflowGroups(workflow)
    blamed: list[tuple[tuple[int, str], list[dict[str, Any]]]] = []
    for ref, (iteration, group) in _groups_run(workflow).items():
        job = by_name.get(ref)
        # Only a record whose Job is gone needs the group's nodes (restoring them may decode a plan).
        nodes = groups.known.get(str(group.get("name")), {}).get("nodes") or [] if job is None and group.get("blamedFor") else []
        blamed.append(((iteration, ref), group_failures(group, nodes, job)))
    return _convicting(workflow, merge_failed(stored, *(items for _, items in sorted(blamed, key=lambda item: item[0]))))


# The Failed reason of a Workflow whose runs all timed out (timed_out_said): the timeout failed, not its nodes.
TIMED_OUT_EVERYWHERE = "TimedOutEverywhere"


def timed_out_everywhere(workflow: Mapping[str, Any]) -> bool:
    """Every group that ran (a reason not in NOT_RUN) and finished, in every iteration, timed out, and at least one
    did: no run gave a result within timeoutPerJob, which is evidence against the timeout, not against each node
    (a diagnosis weighs its own). Its Timeout blames then convict nobody (blamed_nodes, blamed_names): the groups'
    nodes are inconclusive (inconclusive_names) and the Workflow fails naming the timeout. A Timeout beside a run
    of the same workload that did give a result, in time, blames its group as ever."""
    if orchestration_of(workflow).get("diagnose") is not None:
        return False
    ran = [group for _, group in _groups_run(workflow).values()
           if group.get("phase") in (FAILED, SUCCEEDED) and group.get("reason") not in NOT_RUN]
    return bool(ran) and all(group.get("phase") == FAILED and group.get("blamedFor") == TIMEOUT for group in ran)


def timed_out_said(workflow: Mapping[str, Any]) -> str | None:
    """Why a Workflow whose runs timed out everywhere (timed_out_everywhere) failed, naming the timeout and how long
    its runs went: "no run gave a result within timeoutPerJob 51m (2 runs, stopped after 51m00s): evidence against
    the timeout, not against a node (none blamed): give a longer timeoutPerJob"; else None.
    The one sentence the Workflow's condition, the report and the console say."""
    if not timed_out_everywhere(workflow):
        return None
    ran = [group for _, group in _groups_run(workflow).values() if group.get("phase") == FAILED]
    spans = sorted(round((parse_time(g["completionTime"]) - parse_time(g["startTime"])).total_seconds())
                   for g in ran if g.get("startTime") and g.get("completionTime"))
    went = "" if not spans else (f", stopped after {format_duration(spans[0])}" if spans[0] == spans[-1]
                                 else f", stopped after {format_duration(spans[0])}-{format_duration(spans[-1])}")
    runs = f"{len(ran)} run{'' if len(ran) == 1 else 's'}"
    return (f"no run gave a result within timeoutPerJob {job_template_spec(workflow).get('timeout') or '24h'} ({runs}{went}): "
            "evidence against the timeout, not against a node (none blamed): give a longer timeoutPerJob")


def _convicting(workflow: Mapping[str, Any], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`entries` less their Timeout blames where the Workflow's runs timed out everywhere (timed_out_everywhere)."""
    return timeout_acquitted(entries) if entries and timed_out_everywhere(workflow) else entries


def timeout_acquitted(entries: Iterable[EntryT]) -> list[EntryT]:
    """What blames still convict where a Workflow's runs timed out everywhere (timed_out_everywhere): all but the
    Timeout ones. The one rule for the Workflow's verdict and the report (_convicting) and for the console's node
    states, from a Job or, its Job gone, from its group's record (report.nodestates)."""
    return [e for e in entries if e.get("reason") != TIMEOUT]


def blamed_names(workflow: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> set[str]:
    """The names of blamed_nodes(workflow, jobs), without building its entries: a certification counts its failed
    nodes at each of its reconciles, and copying every Job's entries (with their evidence) to merge them was O(nodes)
    each time. Entries of an unexpected shape take blamed_nodes itself (its answer, or its error)."""
    orch = orchestration_of(workflow)
    if orch.get("diagnose") is not None:
        return {item["name"] for item in blamed_nodes(workflow, jobs)}
    jobs = list(jobs)
    stored = workflow_status(workflow).get("failedNodes") or []
    names: set[str] = set()
    if not _names_into(names, stored):
        return {item["name"] for item in blamed_nodes(workflow, jobs)}
    by_name = {str(job["metadata"]["name"]): job for job in jobs}
    groups = WorkflowGroups(workflow)
    for ref, (_, group) in _groups_run(workflow).items():
        job = by_name.get(ref)
        if job is not None:
            if not _names_into(names, job_status(job).get("failedNodes") or []):
                return {item["name"] for item in blamed_nodes(workflow, jobs)}
        elif group.get("blamedFor"):
            names.update(blamed_members(group, groups.known.get(str(group.get("name")), {}).get("nodes") or []))
    if names and timed_out_everywhere(workflow):
        return {item["name"] for item in blamed_nodes(workflow, jobs)}
    return names


def excluded_counted(workflows: Iterable[Mapping[str, Any]], failed: Collection[str]) -> set[str]:
    """The nodes a certification counts as excluded: those its Workflows excluded (orchestration.excludedNodes) and
    none blamed (`failed`, blamed_names of each), left inconclusive (inconclusive_names) nor holds suspect in an open
    diagnosis. One node, one state per certification, the worst first (STATE_PRECEDENCE): a node blamed in one
    category and excluded from a later one (cordoned mid-run) is a failed node only, one whose group failed on no
    node's account and that left the target before the next category an inconclusive one, as the wall, the report,
    `certification list` and the history count them."""
    workflows = list(workflows)
    excluded = {str(e["name"]) for wf in workflows for e in (orchestration_of(wf).get("excludedNodes") or [])} - set(failed)
    for wf in workflows if excluded else ():
        excluded -= inconclusive_names(wf) | open_suspects(wf)
    return excluded


def inconclusive_counted(workflows: Iterable[Mapping[str, Any]], failed: Collection[str]) -> set[str]:
    """The nodes a certification counts as inconclusive: those a Workflow's groups left proving nothing
    (inconclusive_names) that no category blamed (`failed`) nor an open diagnosis holds suspect (the worse states).
    The same rule as excluded_counted, so every node counts once: the report's inconclusiveNodes (every format) and
    the wall's `inconclusive` agree. While it runs, a node inconclusive in an earlier iteration and under test again
    counts here (so far), where the wall shows it running."""
    workflows = list(workflows)
    worse = set(failed).union(*(open_suspects(wf) for wf in workflows))
    return set().union(*(inconclusive_names(wf) for wf in workflows)) - worse


def open_suspects(workflow: Mapping[str, Any]) -> set[str]:
    """The suspects of a diagnosis still weighing its rounds (not complete, its Workflow not finished): the wall's
    `suspect`, which the report's suspectNodes (blamed only with a whole group) does not hold."""
    diagnose = orchestration_of(workflow).get("diagnose")
    if not isinstance(diagnose, Mapping) or diagnose.get("complete") or is_terminal(workflow):
        return set()
    return {str(node) for node in diagnose.get("suspectNodes") or []}


def inconclusive_names(workflow: Mapping[str, Any]) -> set[str]:
    """The nodes a Workflow's groups say ran and proved nothing (the console's `inconclusive`, report.nodestates; or
    its `failed`, `suspect` where a Job blamed them): every member of a group that failed after its workload ran (a
    reason not in NOT_RUN); under a diagnosis, the nodes it left inconclusive, and its suspects once it is over
    (complete, or its Workflow finished: it decided nothing of them; open_suspects while it weighs them)."""
    orch = orchestration_of(workflow)
    diagnose: Mapping[str, Any] | None = orch.get("diagnose")
    if diagnose is not None:
        undecided = {str(node) for node in diagnose.get("inconclusiveNodes") or []}
        return undecided | ({str(node) for node in diagnose.get("suspectNodes") or []} - open_suspects(workflow))
    groups = WorkflowGroups(workflow)
    outcomes = [group for record in groups.finished() for group in record["groups"]]
    if not is_terminal(workflow):  # the running iteration's (a finished Workflow's last groups are in its last record)
        outcomes += groups.current()
    return {str(node) for group in outcomes if group.get("phase") == FAILED and group.get("reason") not in NOT_RUN
            for node in group.get("nodes") or []}


def _names_into(names: set[str], entries: Any) -> bool:
    """Add the failed-node entries' names to `names`; False (part added) unless each is a mapping with a name and a
    reason, as merge_failed reads them."""
    if not isinstance(entries, list):
        return False
    for entry in entries:
        if not isinstance(entry, dict) or "name" not in entry or "reason" not in entry:
            return False
        names.add(entry["name"])
    return True


def _convicted_so_far(orch: Mapping[str, Any], jobs: Mapping[str, Mapping[str, Any]], shown: ValueShown) -> list[dict[str, Any]]:
    """What a running diagnosis has convicted already, as its Workflow will list it when it ends: the certification's
    failed-node count, `certification list` and the report's summary said none while the map showed them."""
    stored = orch["diagnose"]
    if not (isinstance(stored, Mapping) and (stored.get("faultyNodes") or stored.get("intermittentNodes"))):
        return []  # none yet: no decoding (15 ms at 10,000 nodes, at each of the certification's reconciles)
    try:
        return diagnose_convictions(DiagnoseState.from_dict(stored), jobs, list(orch.get("iterationHistory") or []), shown)
    except (DiagnoseError, KeyError, TypeError, AttributeError):
        return []  # a damaged state or history convicts nobody here; the Workflow's own reconcile reports it


def diagnose_convictions(state: DiagnoseState, jobs: Mapping[str, Mapping[str, Any]],
                         history: Sequence[Mapping[str, Any]], shown: ValueShown = significant) -> list[dict[str, Any]]:
    """A diagnosis's faulty and intermittent nodes as failed-node entries: the reason and evidence of the last test
    that failed them (its Job's entry for the node, else its record's), the verdict and its tests as the message."""
    # An onFailure diagnosis names an iteration's groups as _every_iteration does (iterated_name).
    by_group = {name: g for record in history for g in record["groups"]
                for name in (g["name"], iterated_name(g["name"], record.get("iteration")))}
    tested = {test.group: list(test.nodes) for test in state.tests}
    failed = []
    for node, verdict in sorted(state.verdicts().items()):
        if verdict not in ("faulty", "intermittent"):
            continue
        tests = [t for t in state.evidence(node) if not t["passed"]]
        last = by_group.get(tests[-1]["group"]) if tests else None
        job = jobs.get(str((last or {}).get("jobRef") or ""))
        source = next((f for f in job_failures(job or {}) if f["name"] == node), None)
        reason = (source["reason"] if source else _recorded_reason(last, tested.get(tests[-1]["group"], []), node)
                  if job is None else WORKLOAD_FAILED)
        entry: dict[str, Any] = {"name": node, "reason": reason,
                                 "message": verdict_message(state, node, shown) + (f"; {source['message']}" if source else "")}
        if source and source.get("evidence"):
            entry["evidence"] = source["evidence"]
        failed.append(entry)
    return failed


def _recorded_reason(group: Mapping[str, Any] | None, nodes: list[str], node: str) -> str:
    """Why a deleted Job blamed `node`, as its group (of `nodes`) recorded it (GroupOutcome.blamedFor)."""
    if group and node in blamed_members(group, nodes):
        return str(group["blamedFor"])
    return WORKLOAD_FAILED


def group_failures(group: Mapping[str, Any], nodes: Sequence[str], job: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Whom a group's Job blamed: the Job's own entries (judging.results.job_failures) while it exists, else what
    the group's record (of its `nodes`) keeps of them."""
    return job_failures(job) if job is not None else recorded_blame(group, nodes)


def recorded_blame(group: Mapping[str, Any], nodes: Sequence[str]) -> list[dict[str, Any]]:
    """The failed-node entries a group's record keeps of its Job's (for a Job deleted since): the nodes of the group
    (`nodes`) its Job blamed (`blamed_members`), for the reason it gave; its message went with the Job."""
    if not group.get("blamedFor"):
        return []
    message = f"{group.get('reason') or 'failed'} in Job {group.get('jobRef')}, deleted since: its message went with it"
    return [{"name": name, "reason": group["blamedFor"], "message": message} for name in blamed_members(group, nodes)]


def blamed_members(group: Mapping[str, Any], nodes: Sequence[str]) -> list[str]:
    """The nodes a group's record says its Job blamed: those at its `blamedMembers` positions in the group's
    `nodes`, else every one (none without `blamedFor`)."""
    if not group.get("blamedFor"):
        return []
    members = group.get("blamedMembers")
    if members is None:
        return list(nodes)
    return [nodes[index] for index in members if 0 <= index < len(nodes)]


def jobs_run(workflow: Mapping[str, Any], jobs: Iterable[JobBody], refs: Collection[str] | None = None) -> list[JobBody]:
    """The Jobs the Workflow's groups ran (by jobRef; `refs`: job_refs(workflow), where the caller kept it), in the
    order given: another run's left behind with its label (no garbage collector) says nothing about this one."""
    ran = job_refs(workflow) if refs is None else refs
    return [job for job in jobs if job["metadata"]["name"] in ran]


def job_groups(workflow: Mapping[str, Any]) -> dict[str, GroupOutcome]:
    """The record of the group that ran each Job of the Workflow, by the Job's name (how it ended: phase, reason,
    measurements; its finished iteration's record before a current group's)."""
    return {ref: group for ref, (_, group) in _groups_run(workflow).items()}


def job_refs(workflow: Mapping[str, Any]) -> frozenset[str]:
    """The names of the Jobs the Workflow's groups ran."""
    return frozenset(_groups_run(workflow))


def _groups_run(workflow: Mapping[str, Any]) -> dict[str, tuple[int, GroupOutcome]]:
    """Every group that ran a Job, by the Job's name, with its iteration: the finished iterations' records first
    (they are final), then the current groups."""
    orch = orchestration_of(workflow)
    ran: dict[str, tuple[int, GroupOutcome]] = {}
    for record in orch.get("iterationHistory") or []:
        for group in record.get("groups") or []:
            if group.get("jobRef"):
                ran.setdefault(str(group["jobRef"]), (int(record.get("iteration") or 0), group))
    for group in orch.get("groups") or []:
        if group.get("jobRef"):
            ran.setdefault(str(group["jobRef"]), (int(orch.get("currentIteration") or 0), group))
    return ran
