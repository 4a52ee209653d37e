"""The informer's join of each certification to its Workflows and Jobs over the watch cache, kept across snapshots
(CachedJoin): a view is rebuilt, a Workflow's Jobs patched, only where an object changed."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, replace

from nvcre_tui.engine.controllers.iterations import job_refs
from nvcre_tui.engine.report.readmodel import CertificationView, join_view, namespace_of, owner_uid
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.cacheview import CONTROLLER, CacheView, LabelGroup
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW
from nvcre_tui.engine.views.snapshot import Obj


@dataclass(frozen=True)
class _RanJobs:
    """What `CachedJoin.jobs_of` last answered for one Workflow, and what from."""

    workflow: tuple[object, ...]  # (id, resourceVersion) of the Workflow
    refs: frozenset[str]          # the names of the Jobs its groups ran
    group: LabelGroup | None      # its Jobs' group, at `stamp`
    stamp: int
    names: list[str]              # the answer's names, sorted
    jobs: list[Obj]               # the answer (shared with the views that took it: never changed)


class CachedJoin:
    """The same join read from the cache's Workflows and Jobs grouped by controller (store/cacheview.py), kept across
    snapshots: a certification's view is rebuilt only when the Certification, one of its Workflows or one of their
    Jobs changed since it was built, and a Workflow's Jobs are patched with the Jobs that changed since (taken whole
    only when its groups ran other Jobs). Each group is of one namespace, so a namesake elsewhere is never joined;
    the informer's views leave out the objects their models refuse (those built here leave out none: tests of the join)."""

    def __init__(self, cache: WatchCache, workflows: CacheView | None = None, jobs: CacheView | None = None) -> None:
        self.cache = cache
        self.workflows = workflows or CacheView(cache, WORKFLOW, group_by=CONTROLLER)
        self.jobs = jobs or CacheView(cache, JOB, group_by=CONTROLLER)
        if self.workflows.group_by != CONTROLLER or self.jobs.group_by != CONTROLLER:
            raise ValueError("the join takes Workflows and Jobs grouped by controller")
        self._views: dict[tuple[str, str], tuple[tuple[object, ...], CertificationView]] = {}
        self._jobs: dict[tuple[str, str], _RanJobs] = {}

    def workflows_of(self, cert: Obj) -> list[Obj]:
        group = self.workflows.group(namespace_of(cert), owner_uid(cert))
        return group.objects() if group is not None else []

    def jobs_of(self, workflow: Obj) -> list[Obj]:
        """Kept until the Workflow or one of the Jobs it controls changes; then patched with the Jobs that
        changed, or taken whole from the group when its groups ran other Jobs (or the group's journal no longer
        reaches back): a refresh after one Job changed costs that Job, not the Workflow's thousands."""
        at = (namespace_of(workflow), str(workflow["metadata"]["name"]))
        workflow_key = (id(workflow), workflow["metadata"].get("resourceVersion"))
        group = self.jobs.group(at[0], owner_uid(workflow))
        stamp = group.stamp if group is not None else 0
        found = self._jobs.get(at)
        refs = found.refs if found is not None and found.workflow == workflow_key else job_refs(workflow)
        if found is not None and found.group is group and (found.refs is refs or found.refs == refs):
            if found.stamp == stamp:
                if found.workflow != workflow_key:
                    self._jobs[at] = replace(found, workflow=workflow_key)
                return found.jobs
            changed = group.changed_since(found.stamp) if group is not None else None
            if changed is not None:
                names, jobs = list(found.names), list(found.jobs)
                for name in changed:
                    where = bisect_left(names, name)
                    if where < len(names) and names[where] == name:
                        del names[where], jobs[where]
                    job = group.by_name.get(name) if group is not None else None
                    if job is not None and name in refs:
                        names.insert(where, name)
                        jobs.insert(where, job)
                self._jobs[at] = _RanJobs(workflow_key, refs, group, stamp, names, jobs)
                return jobs
        names = [name for name in group.names if name in refs] if group is not None else []
        jobs = [group.by_name[name] for name in names] if group is not None else []
        self._jobs[at] = _RanJobs(workflow_key, refs, group, stamp, names, jobs)
        return jobs

    def view(self, cert: Obj) -> CertificationView:
        at = (namespace_of(cert), str(cert["metadata"]["name"]))
        key = self._key(cert)
        found = self._views.get(at)
        if found is None or found[0] != key:
            found = (key, join_view(self, cert))
            self._views[at] = found
        return found[1]

    def forget_except(self, certifications: Iterable[Obj]) -> None:
        """Drop the views of certifications that are gone, and their Workflows' Jobs."""
        kept = list(certifications)
        certs = {(namespace_of(cert), str(cert["metadata"]["name"])) for cert in kept}
        for at in [at for at in self._views if at not in certs]:
            del self._views[at]
        workflows = {(namespace_of(wf), str(wf["metadata"]["name"])) for cert in kept for wf in self.workflows_of(cert)}
        for at in [at for at in self._jobs if at not in workflows]:
            del self._jobs[at]

    def _key(self, cert: Obj) -> tuple[object, ...]:
        """What the view is built from: the Certification, its Workflows' group and each one's Jobs' group (their
        stamps never come back, even for a group gone and made again)."""
        namespace = namespace_of(cert)
        workflows = self.workflows.group(namespace, owner_uid(cert))
        stamps = [workflows.stamp if workflows is not None else 0]
        for wf in workflows.objects() if workflows is not None else []:
            jobs = self.jobs.group(namespace, owner_uid(wf))
            stamps.append(jobs.stamp if jobs is not None else 0)
        return (id(cert), cert["metadata"].get("resourceVersion"), *stamps)
