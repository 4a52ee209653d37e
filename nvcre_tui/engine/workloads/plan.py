"""A rendered certification category -> the workload objects each of its planned groups would create
(what `nvcre certification render --workloads` prints), and why a group's fabric is not rendered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.planning.render import RenderedCategory
from nvcre_tui.engine.workloads import fabric_outcome, group_run_spec, workload_manifests
from nvcre_tui.engine.names import job_name
from nvcre_tui.engine.workloads.placement import Placement, hostnames_of

Obj = dict[str, Any]


@dataclass(frozen=True)
class GroupWorkloads:
    """One group's nvcre Job name, nodes and the objects its run creates."""

    category: str
    group: str
    job: str
    nodes: tuple[str, ...]
    objects: list[Obj]
    note: str | None = None  # why the run's fabric is not rendered on these nodes (workloads/fabric.py)


def category_workloads(cert: Certification, index: int, item: RenderedCategory, *, trainer: bool = True,
                       server_version: tuple[int, int] | None = None) -> list[GroupWorkloads]:
    """The workloads of every planned group of category `index` (the first iteration), on an API server of Kubernetes
    `server_version` (None: not known, taken as current)."""
    workflow = item.workflow
    status = workflow.status.orchestration if workflow.status else None
    orchestration = workflow.spec.orchestration
    assert status is not None and status.groups is not None
    spec = workflow.spec.job_template.spec.workload.workload_run
    assert spec is not None
    namespace = workflow.metadata.namespace or "default"
    result = []
    for group in status.groups:
        nodes = tuple(group.nodes or ())  # render names every group's nodes, a diagnose plan's too
        job = job_name(workflow.metadata.name, group.name, single=len(status.groups) == 1 and (orchestration.iterations or 1) == 1,
                       diagnose=orchestration.diagnose is not None)
        placement = Placement(job=job, namespace=namespace, nodes=nodes, platform=status.detected_platform or "onprem",
                              architecture=status.detected_gpu_architecture or "unknown", gang=spec.gang_scheduler,
                              hostnames=hostnames_of(item.discovery.nodes), priority_class=spec.priority_class_name,
                              node_objects={node_name(node): node for node in item.discovery.nodes if node_name(node) in nodes},
                              server_version=server_version)
        run = group_run_spec(spec, list(nodes))
        objects = workload_manifests(run, placement, trainer=trainer)
        fabric = fabric_outcome(run, placement)
        result.append(GroupWorkloads(category=item.entry.key, group=group.name, job=job, nodes=nodes, objects=objects,
                                     note=fabric.note if fabric else None))
    return result
