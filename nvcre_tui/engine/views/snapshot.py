"""The Snapshot the console reads (every object it needs, at one resourceVersion, less the damaged ones) and
the informer's node-state models its snapshots share."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from nvcre_tui.engine.api.bodies import run_name
from nvcre_tui.engine.api.damage import DamageChecks, DamagedObject
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.readmodel import CertificationView, Join, Joined
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, ResourceStore


Obj = dict[str, Any]
SNAPSHOT_KINDS = (NODE, CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)  # Snapshot's field order


class NodeStateModels:
    """One incremental node-state model per certification filter (None: all), for one informer's snapshots."""

    LIMIT = 8  # filters kept (the map's, the wall's, the dashboard's); the least recently asked goes first

    def __init__(self) -> None:
        self._models: dict[str | None, nodestates.NodeStateModel] = {}

    def of(self, cert_name: str | None) -> nodestates.NodeStateModel:
        model = self._models.pop(cert_name, None) or nodestates.NodeStateModel()
        self._models[cert_name] = model
        while len(self._models) > self.LIMIT:
            del self._models[next(iter(self._models))]
        return model


@dataclass(frozen=True)
class Snapshot:
    """Every object the console needs, read at one resourceVersion: the Nodes and one namespace's certifications
    with their objects (the console's -n), so a name names one certification. Damaged objects (api/damage.py) are
    left out of the lists and named in `damaged`."""

    nodes: list[Obj] = field(default_factory=list)
    certifications: list[Obj] = field(default_factory=list)
    workflows: list[Obj] = field(default_factory=list)
    jobs: list[Obj] = field(default_factory=list)
    runs: list[Obj] = field(default_factory=list)
    resource_version: str = "0"
    # The informer's node-state models, shared by its successive snapshots (None: compute in full).
    models: NodeStateModels | None = field(default=None, compare=False, repr=False)
    # The informer's join over the cache, shared likewise (None: join these lists once).
    join: Join | None = field(default=None, compare=False, repr=False)
    damaged: tuple[DamagedObject, ...] = ()  # the objects left out, in SNAPSHOT_KINDS order

    def __deepcopy__(self, memo: dict[int, Any]) -> Snapshot:
        """A detached copy: its own objects, joined from its own lists (not the informer's cache and models)."""
        lists = {name: copy.deepcopy(getattr(self, name), memo) for name in ("nodes", "certifications", "workflows", "jobs", "runs")}
        return Snapshot(**lists, resource_version=self.resource_version, damaged=self.damaged)

    @classmethod
    async def read(cls, store: ResourceStore, namespace: str | None = None) -> Snapshot:
        """List each kind once (of one namespace, when given; Nodes have none), less the damaged objects."""
        lists = [await store.list(kind, namespace) for kind in SNAPSHOT_KINDS]
        damage = DamageChecks()
        split = [damage.split(kind.kind, result.items) for kind, result in zip(SNAPSHOT_KINDS, lists, strict=True)]
        nodes, certifications, workflows, jobs, runs = (kept for kept, _ in split)
        return cls(nodes, certifications, workflows, jobs, runs, resource_version=max((r.resource_version for r in lists), key=int),
                   damaged=tuple(found for _, damaged in split for found in damaged))

    @cached_property
    def joined(self) -> Join:
        """Workflows by certification and Jobs by Workflow: the informer's cache join, or these lists joined once."""
        return self.join or Joined(self.workflows, self.jobs)

    @cached_property
    def views(self) -> dict[str, CertificationView]:
        """Every certification's read model, by name."""
        return {cert["metadata"]["name"]: self.joined.view(cert) for cert in self.certifications}

    def workflows_of(self, cert_name: str) -> list[Obj]:
        """The certification's Workflows, in category order."""
        cert = self.certification(cert_name)
        return self.joined.workflows_of(cert) if cert is not None else []

    def jobs_of(self, workflow_name: str) -> list[Obj]:
        """The Jobs a Workflow's groups ran, by name."""
        workflow = next((wf for wf in self.workflows if wf["metadata"]["name"] == workflow_name), None)
        return self.joined.jobs_of(workflow) if workflow is not None else []

    def run_of(self, job_name: str) -> Obj | None:
        """The WorkloadRun of a Job."""
        return next((r for r in self.runs if r["metadata"]["name"] == run_name(job_name)), None)

    def category_name(self, workflow_name: str) -> str | None:
        """What every screen calls the category a Workflow runs (`domain/variant #2` where its certification runs it
        twice: CategoryView.name, the report's rule); None where no certification here holds it."""
        return next((category.name for view in self.views.values() for category in view.categories
                     if category.workflow is not None and category.workflow["metadata"]["name"] == workflow_name), None)

    def certification(self, name: str) -> Obj | None:
        """A certification by name."""
        return next((c for c in self.certifications if c["metadata"]["name"] == name), None)


def same_objects(objects: Sequence[Obj], seen: Sequence[Obj] | None) -> bool:
    """The very same objects, in the same order (the watch cache replaces an object when it changes and shares it
    otherwise, so identity is enough): what a screen laid out from `seen` needs no new layout for."""
    return seen is not None and len(objects) == len(seen) and all(a is b for a, b in zip(objects, seen, strict=True))
