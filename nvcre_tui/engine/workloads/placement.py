"""Where a WorkloadRun's pods go and who owns them: the inputs every manifest builder shares.

The Kubernetes runner builds a Placement from the nvcre Job (name, namespace, uid, group nodes) and the
group's Node objects (`placement_for`); `nvcre certification render --workloads` builds one per planned group.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcre_tui.engine.api.base import GangScheduler, TaintSelector
from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.api.nodes import Node, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_HOSTNAME, group_nodes_value
from nvcre_tui.engine.planning.platform import fleet_summary

Obj = dict[str, Any]
# A TrainJob becomes a JobSet of its name, and JobSet's admission webhook refuses it unless every pod name it may
# make, <jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<5 random>, is a DNS label (63): the MPI launcher's
# "-launcher-0-0-abcde" and a node pod's "-node-0-19999-abcde" both leave 44. (The batch fallback's pods,
# <name>-<index>-abcde, need less.)
WORKLOAD_NAME_LIMIT = 44


@dataclass(frozen=True)
class Placement:
    """One group's run: the nvcre Job it belongs to, its nodes, fleet facts and scheduling intent."""

    job: str
    namespace: str
    nodes: tuple[str, ...]
    platform: str
    architecture: str
    owner: Obj | None = None  # the nvcre Job's ownerReference; None when rendering offline (no uid yet)
    gang: GangScheduler | None = None
    taint_selectors: tuple[TaintSelector, ...] = ()
    hostnames: Mapping[str, str] = field(default_factory=dict)  # node name -> kubernetes.io/hostname label
    priority_class: str | None = None  # the category's priorityClassName option
    # node name -> its Node object, where known: what a fabric reads of the nodes (workloads/fabric.py)
    node_objects: Mapping[str, Node] = field(default_factory=dict)
    # the API server's Kubernetes (major, minor), where known: a fabric's sidecar needs 1.29 (workloads/fabric.py)
    server_version: tuple[int, int] | None = None

    def hostname(self, node: str) -> str:
        """The node's kubernetes.io/hostname label (usually, not always, its name)."""
        return self.hostnames.get(node, node)

    @property
    def job_label(self) -> str:
        """The `nvcre.nvidia.com/job` label value: the Job name, hashed down when longer than a label allows."""
        return label_value(self.job)

    @property
    def owner_references(self) -> list[Obj] | None:
        """ownerReferences to the nvcre Job, so deleting the Job deletes the workload (cascade)."""
        return [dict(self.owner)] if self.owner else None


def owner_reference(job: Mapping[str, Any]) -> Obj:
    """A controller ownerReference to an nvcre object: the Job (or a standalone WorkloadRun)."""
    meta = job["metadata"]
    return {"apiVersion": job["apiVersion"], "kind": job["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def hostnames_of(nodes: Sequence[Node]) -> dict[str, str]:
    """node name -> its kubernetes.io/hostname label (the name when unlabelled)."""
    return {node_name(n): str(node_labels(n).get(LABEL_HOSTNAME) or node_name(n)) for n in nodes}


def placement_for(job: Mapping[str, Any], nodes: Sequence[Node], gang: GangScheduler | None = None,
                  taint_selectors: Sequence[TaintSelector] = (), priority_class: str | None = None,
                  server_version: tuple[int, int] | None = None) -> Placement:
    """The Placement of an nvcre Job on its group's Node objects (platform and architecture detected).

    The group is the Job's `nvcre.nvidia.com/group-nodes` annotation; without it (a standalone
    WorkloadRun passed as `job`) every node given. `gang` is the Workflow's (or the run's) gangScheduler;
    `taint_selectors` those of the Workflow's target (the run's own target is read from its spec); `server_version`
    the API server's (major, minor), None when not known.
    PlatformError when the nodes span platforms.
    """
    annotation = group_nodes_value(group_nodes(job))
    members = [name for name in annotation.split(",") if name]
    group = [node for node in nodes if node_name(node) in members] or list(nodes)
    fleet = fleet_summary(group)
    hostnames = hostnames_of(group)
    return Placement(job=job["metadata"]["name"], namespace=job["metadata"].get("namespace") or "default",
                     nodes=tuple(members or sorted(hostnames)), platform=fleet["platform"], architecture=fleet["architecture"],
                     owner=owner_reference(job) if job["metadata"].get("uid") else None, gang=gang,
                     taint_selectors=tuple(taint_selectors), hostnames=hostnames, priority_class=priority_class,
                     node_objects={node_name(node): node for node in group}, server_version=server_version)


def label_value(text: str) -> str:
    """`text` as a label value (at most 63 characters; a hash of the whole keeps long ones distinct)."""
    if len(text) <= 63:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{text[:54].rstrip('-_.')}-{digest}"


def child_name(job: str, suffix: str, limit: int = 63) -> str:
    """`<job><suffix>` as an RFC 1035 label (TrainJob, Service and the pods' hostnames need one): starting with a
    letter, and with a hash of the full name when it is longer than `limit` or held dots (a Job of Certification
    `gpu.cert`; the hash keeps it apart from one of `gpu-cert`)."""
    name = f"{job}{suffix}"
    if not name[:1].isalpha():
        name = f"w{name}"
    if len(name) <= limit and "." not in name:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    head = f"{'' if job[:1].isalpha() else 'w'}{job}".replace(".", "-")
    return f"{head[: limit - len(suffix) - 9].rstrip('-')}-{digest}{suffix}"


def kept_name(placement: Placement, suffix: str, base: str | None = None) -> str:
    """`<job><suffix>` for an object that may outlive its Job (a ConfigMap the engine may not delete; a ComputeDomain
    until the engine's release of the Job), with the first 8 hex digits of the owning Job's uid: one an earlier Job
    of the same name left behind, where no garbage collector removed it, never clashes with this Job's (nor is
    deleted with it: workloads.kept_object_names names this Job's). Offline (no uid yet) the name has none."""
    uid = str((placement.owner or {}).get("uid") or "").replace("-", "")[:8]
    return child_name(base or placement.job, f"{suffix}-{uid}" if uid else suffix)


def workload_name(job: str) -> str:
    """The TrainJob / batch Job / Service name of an nvcre Job: `<job>-workload`."""
    return child_name(job, "-workload", WORKLOAD_NAME_LIMIT)
