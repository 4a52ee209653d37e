"""One read model of certifications (no Textual): each Certification joined once to its Workflows and their
Jobs, in category order, with each category's recorded iterations.

The join is by owner, as the engine follows it (WatchCache.controlled_by): a Workflow belongs to the Certification
its controller ownerReference names by uid, a Job to its Workflow so; never by label (`nvcre.nvidia.com/certification`,
`nvcre.nvidia.com/workflow`: metadata anyone may remove or edit on a shared cluster, whose loss hid a category and its
evidence from the report while the engine still judged it; and a leftover of an earlier namesake carries the same
label, never the same uid). From lists (`Joined`) or, for the console, from the watch cache's views grouped by
controller (`views.join.CachedJoin`, which keeps each certification's view until one of its objects changes). The reports (text, JSON, JUnit, HTML),
the console's views (dashboard, map, wall, node screen) and the history archive read certifications through
this, so they cannot disagree about which objects belong together or which iteration a group ran in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from nvcre_tui.engine.api.bodies import GroupStatus, OrchestrationStatus, certification_status, group_nodes, orchestration_of, workflow_spec
from nvcre_tui.engine.api.vocabulary import FAILED, IN_PROGRESS, JOBS_STOPPED_AS, WORKLOAD_PENDING
from nvcre_tui.engine.controllers.conditions import find, is_terminal, status_of
from nvcre_tui.engine.controllers.iterations import WorkflowGroups, blamed_nodes, jobs_run, nodes_by_group
from nvcre_tui.engine.diagnose.state import STATUS_KEYS
from nvcre_tui.engine.names import controller_uid

Obj = dict[str, Any]


def owner_uid(obj: Obj) -> str:
    """An owner's uid, as its children's controller ownerReferences name it ("" for none: the join's key)."""
    return str(obj["metadata"].get("uid") or "")


def owned(children: Iterable[Obj], owner: Obj) -> list[Obj]:
    """The `children` `owner` controls (their controller ownerReference names its uid), in the order given: the join,
    for a reader that listed children by namespace, or by a label as a server-side filter only (it may hide none
    of those it owns: list without one)."""
    uid = owner_uid(owner)
    return [child for child in children if uid and controller_uid(child) == uid]


def namespace_of(obj: Obj) -> str:
    """The object's namespace ("" for none: the join's key, never a lookup)."""
    return str(obj["metadata"].get("namespace") or "")


@dataclass(frozen=True)
class Iteration:
    """One recorded iteration (or diagnose round) of a category: its number and its groups' status records."""

    number: int | None
    groups: list[GroupStatus]
    current: bool = False  # the iteration (or round) that is running now
    # A diagnose round's number as its tests are named (r<round>-...): round 0 is testScale diagnose's screening, or
    # the iterations an onFailure diagnosis starts from; None for an iteration.
    round: int | None = None

    @property
    def label(self) -> str:
        """"round 2", "iteration 1": what every screen and report calls it."""
        return f"round {self.round}" if self.round is not None else f"iteration {self.number}"


@dataclass(frozen=True)
class CategoryView:
    """One category of a certification: its status entry, its Workflow (None until created) and its Jobs."""

    status: Mapping[str, Any]  # the Certification's categoryStatuses entry
    workflow: Obj | None
    jobs: list[Obj] = field(default_factory=list)
    title: str = ""  # as the report names it among its certification's categories (category_titles); "" : its key

    @property
    def key(self) -> str:
        """domain/variant."""
        return f"{self.status['domain']}/{self.status['variant']}"

    @property
    def name(self) -> str:
        """What every screen and report calls it: its title (`domain/variant #2` where it runs twice), else its key."""
        return self.title or self.key

    @property
    def orchestration(self) -> OrchestrationStatus:
        """The Workflow's status.orchestration ({} before partitioning)."""
        if self.workflow is None:
            return {}
        return orchestration_of(self.workflow)

    @cached_property
    def _groups(self) -> WorkflowGroups | None:
        return None if self.workflow is None else WorkflowGroups(self.workflow)

    @cached_property
    def groups(self) -> list[GroupStatus]:
        """The current groups (status.orchestration.groups) with their nodes ([] before partitioning). Of a Workflow that
        failed with its running Jobs stopped (refused, or its Certification was: JOBS_STOPPED_AS), a group it still holds
        Running failed as its Job did: the engine records no group's end then, and every reader drew a certification
        long over running on those nodes (the map, the history), its drill-down without the group, its report with its
        iteration Running."""
        if self._groups is None:
            return []
        current = self._groups.current()
        stopped = self._jobs_stopped_as
        if stopped is None:
            return current
        return [GroupStatus(**{**group, "phase": FAILED, "reason": stopped}) if group.get("phase") == "Running" else group
                for group in current]

    @cached_property
    def _jobs_stopped_as(self) -> str | None:
        """The reason the Workflow's running Jobs were stopped with it (JOBS_STOPPED_AS), or None."""
        if self.workflow is None or not is_terminal(self.workflow):
            return None
        return JOBS_STOPPED_AS.get(str((find(status_of(self.workflow).get("conditions"), FAILED) or {}).get("reason")))

    @cached_property
    def iterations(self) -> list[Iteration]:
        """Every finished iteration (iterationHistory), or the current one while none has finished; the one its Jobs
        were stopped in (`groups`), never recorded, last."""
        history = self._finished
        if history and self._stopped_unrecorded:
            return [*history, self._record(len(history) + 1, self.groups)]
        if not history and self.groups:
            return [self._record(self.orchestration.get("currentIteration", 1), self.groups,
                                 current=self.workflow is not None and not is_terminal(self.workflow))]
        return history

    @cached_property
    def _finished(self) -> list[Iteration]:
        if self._groups is None:
            return []
        return [self._record(record.get("iteration"), list(record.get("groups") or [])) for record in self._groups.finished()]

    @cached_property
    def _rounds_from(self) -> tuple[int, int] | None:
        """(records before round 0, the first record that is a round): testScale diagnose's rounds start with its
        screening (round 0, record 1); an onFailure diagnosis's round 0 is the iterations it starts from, so its records
        after them are rounds 1, 2, ...; None without a diagnosis."""
        if self.workflow is None:
            return None
        spec = workflow_spec(self.workflow).get("orchestration") or {}
        if spec.get("testScale") == "diagnose" or spec.get("diagnose") is not None:  # its options block is optional
            return 1, 1
        iterations = int(spec.get("iterations") or 1)
        return (iterations, iterations + 1) if self.orchestration.get("diagnose") is not None else None

    def _record(self, number: int | None, groups: list[GroupStatus], current: bool = False) -> Iteration:
        rounds = self._rounds_from
        if rounds is None or number is None or number < rounds[1]:
            return Iteration(number, groups, current)
        return Iteration(number, groups, current, number - rounds[0])

    @cached_property
    def timeline(self) -> list[Iteration]:
        """Every finished iteration and, while the Workflow runs, the current one last (`current` set); the one its
        Jobs were stopped in (`groups`), never recorded, last too."""
        finished = self._finished
        running = self.workflow is not None and not is_terminal(self.workflow) and self.groups
        return finished + ([self._record(len(finished) + 1, self.groups, current=bool(running))] if running or self._stopped_unrecorded else [])

    @cached_property
    def _stopped_unrecorded(self) -> bool:
        """Whether the Workflow's current groups are an iteration its Jobs were stopped in (`groups`), never recorded."""
        return (self._jobs_stopped_as is not None and self._groups is not None
                and any(group.get("phase") == "Running" for group in self._groups.current()))

    @cached_property
    def failed_nodes(self) -> list[dict[str, Any]]:
        """The nodes this category blames, one entry per (name, reason) (controllers.iterations.blamed_nodes)."""
        return [] if self.workflow is None else blamed_nodes(self.workflow, self.jobs)

    @cached_property
    def jobs_by_name(self) -> dict[str, Obj]:
        return {job["metadata"]["name"]: job for job in self.jobs}

    def job_of(self, group: Mapping[str, Any]) -> Obj | None:
        """The Job a group status record points to."""
        return self.jobs_by_name.get(group.get("jobRef") or "")

    def jobs_on(self, node: str) -> list[Obj]:
        """This category's Jobs whose group holds `node`."""
        return [job for job in self.jobs if node in group_nodes(job)]


@dataclass(frozen=True)
class CertificationView:
    """A Certification with its categories, in the order its spec lists them."""

    cert: Obj
    categories: list[CategoryView]

    @property
    def name(self) -> str:
        return str(self.cert["metadata"]["name"])

    def held_nodes(self) -> set[str]:
        """The nodes its categories hold (planned, grouped, tested or left out): the wall's `of N nodes`, the report's
        totalNodes with its excludedNodes. Empty before any category has its nodes."""
        return set(self._held)

    @cached_property
    def _held(self) -> frozenset[str]:
        """held_nodes, worked out once per view: the console keeps a view until one of its objects changes, and the wall
        asked at every refresh (every group of every Workflow decoded: 4 ms a refresh at 10,000 nodes)."""
        found: set[str] = set()
        for category in self.categories:
            if category.workflow is None:
                continue
            found.update(node for nodes in nodes_by_group(category.workflow).values() for node in nodes)
            found.update(str(item.get("name")) for item in category.orchestration.get("excludedNodes") or [])
            diagnose: Mapping[str, Any] = category.orchestration.get("diagnose") or {}
            found.update(str(node) for key in STATUS_KEYS.values() for node in diagnose.get(key) or [])
        return frozenset(found)

    @classmethod
    def of(cls, cert: Obj, workflows: Iterable[Obj], jobs: Iterable[Obj]) -> CertificationView:
        """Join one Certification to the Workflows and Jobs given (others are ignored)."""
        return Joined(list(workflows), list(jobs)).view(cert)


class Join(Protocol):
    """Where a certification's Workflows and a Workflow's Jobs are found."""

    def workflows_of(self, cert: Obj) -> list[Obj]:
        """The Workflows the certification controls (their controller ownerReference names its uid)."""
        ...

    def jobs_of(self, workflow: Obj) -> list[Obj]:
        """The Jobs the Workflow's groups ran (controllers.iterations.jobs_run) of those it controls, by name. The list may be shared with other readers (the console's cache
        join keeps it): never change it."""
        ...

    def view(self, cert: Obj) -> CertificationView: ...


class Joined:
    """Workflows by certification and Jobs by Workflow, indexed once from lists (a report, a history record)."""

    def __init__(self, workflows: Sequence[Obj], jobs: Sequence[Obj]) -> None:
        self.workflows_by_cert: dict[tuple[str, str], list[Obj]] = {}
        for workflow in workflows:
            self.workflows_by_cert.setdefault((namespace_of(workflow), controller_uid(workflow) or ""), []).append(workflow)
        self.jobs_by_workflow: dict[tuple[str, str], list[Obj]] = {}
        for job in sorted(jobs, key=lambda j: j["metadata"]["name"]):
            self.jobs_by_workflow.setdefault((namespace_of(job), controller_uid(job) or ""), []).append(job)

    def workflows_of(self, cert: Obj) -> list[Obj]:
        return self.workflows_by_cert.get((namespace_of(cert), owner_uid(cert)), []) if owner_uid(cert) else []

    def jobs_of(self, workflow: Obj) -> list[Obj]:
        return jobs_run(workflow, self.jobs_by_workflow.get((namespace_of(workflow), owner_uid(workflow)), []) if owner_uid(workflow) else [])

    def view(self, cert: Obj) -> CertificationView:
        return join_view(self, cert)


def category_titles(categories: Sequence[Mapping[str, Any]]) -> list[str]:
    """`domain/variant` of each category, numbered (`#2`) where a certification runs the same one again: a CI system
    keys test cases by name, and two cards of one title read as one. Every part of the report names a category so."""
    keys = [f"{c['domain']}/{c['variant']}" for c in categories]
    titles, seen = [], dict.fromkeys(keys, 0)
    for key in keys:
        seen[key] += 1
        titles.append(f"{key} #{seen[key]}" if keys.count(key) > 1 else key)
    return titles


def join_view(join: Join, cert: Obj) -> CertificationView:
    """One Certification joined to its Workflows (by the category statuses' workflowRef) and the Jobs their groups
    ran (controllers.iterations.jobs_run)."""
    status = certification_status(cert)
    by_name = {wf["metadata"]["name"]: wf for wf in join.workflows_of(cert)}
    entries = status.get("categoryStatuses") or [
        {"domain": c["domain"], "variant": c["variant"], "status": "Pending"} for c in cert["spec"].get("categories") or []
    ]
    categories = []
    for entry, title in zip(entries, category_titles(entries), strict=True):
        workflow = by_name.get((entry.get("workflowRef") or {}).get("name", ""))
        jobs = join.jobs_of(workflow) if workflow is not None else []
        categories.append(CategoryView(entry, workflow, jobs, title))
    return CertificationView(cert, categories)


def pods_pending(job: Obj) -> str | None:
    """Why a Job in progress has no running pods yet, as the engine wrote it on its InProgress condition (reason
    WorkloadPending: no pods made and which controller would make them, the nodes a scheduler cannot use, and when
    it fails); None once its pods run, or when it is not in progress."""
    found = find(status_of(job).get("conditions"), IN_PROGRESS)
    if not found or found.get("status") != "True" or found.get("reason") != WORKLOAD_PENDING:
        return None
    return str(found.get("message") or "pods not running yet")
