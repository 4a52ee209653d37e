"""What the engine may do on a cluster (the rules `nvcre setup init` grants), and a checker for rules.

Least privilege (design property 8): Nodes are read-only, Secrets created and never read, no pods/exec. Each rule below says
which code needs it; a test runs a certification over the emulator and checks every engine request
against these rules, so a rule nobody needs or a request nobody granted shows up there.

The checker follows the API server's RBAC authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go): a rule
matches a request when its verbs, apiGroups and resources (`pods/log`, `*`, `*/status`) and, when given,
resourceNames match; a Role (or a ClusterRole bound by a RoleBinding) counts only in its namespace, a
ClusterRole bound by a ClusterRoleBinding everywhere, cluster-scoped resources included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.bodies import meta_of
from nvcre_tui.engine.api.vocabulary import COMPUTE_DOMAIN_GROUP, DRA_GROUP, ENGINE_NAME, JOBSET_GROUP, TRAINER_GROUP
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD, LEASE, NVCRE_GROUP, VALIDATION_REQUEST

__all__ = [
    "READ", "CLUSTER_RULES", "LEASE_RULES", "Grant", "rule_allows", "rbac_allows", "grants_for",
]

Rule = dict[str, Any]
READ = ["get", "list", "watch"]
NVCRE_PLURALS = ("certifications", "workflows", "jobs", "workloadruns")


def _rule(groups: Sequence[str], resources: Sequence[str], verbs: Sequence[str], names: Sequence[str] = ()) -> Rule:
    rule: Rule = {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
    if names:
        rule["resourceNames"] = list(names)
    return rule


# ClusterRole nvcre-engine: certifications may live in any namespace, so these hold cluster-wide.
CLUSTER_RULES: list[Rule] = [
    # The engine's cache and reconcilers read our four kinds; users create Certifications, the engine
    # never does (so no create/delete on them).
    _rule([NVCRE_GROUP], list(NVCRE_PLURALS), READ),
    # Children it owns: Workflows (per category), Jobs (per group), WorkloadRuns (per attempt). Delete: a child
    # whose Certification is gone, where no garbage collector removes it (controllers/collect.py).
    _rule([NVCRE_GROUP], ["workflows", "jobs", "workloadruns"], ["create", "delete"]),
    # Status is all the engine writes on its objects (merge patch; update for update_status). WorkloadRun
    # status is written by the runner that plays or watches the workload.
    _rule([NVCRE_GROUP], ["certifications/status", "workflows/status", "jobs/status", "workloadruns/status"],
          ["get", "patch", "update"]),
    # Children carry ownerReferences with blockOwnerDeletion: true, which the
    # OwnerReferencesPermissionEnforcement admission plugin allows only with update on the owner's finalizers.
    # (A standalone WorkloadRun owns its workload objects: workloadruns/finalizers too.)
    _rule([NVCRE_GROUP], ["certifications/finalizers", "workflows/finalizers", "jobs/finalizers", "workloadruns/finalizers"], ["update"]),
    # Events on our objects (engine/store/events.py: get, then create or update with a higher count).
    _rule([""], ["events"], ["create", "get", "update"]),
    # Result ConfigMaps owned by the Workflow (failed-nodes-*, succeeded-nodes-*) and a run's config ConfigMap:
    # create, get on a clash. Never delete: other namespaces keep credentials in ConfigMaps (aws-auth).
    _rule([""], ["configmaps"], ["create", "get"]),
    # A batch MPI run's ssh key pair (workloads/batch.py): create only. Never read, listed or deleted: the engine
    # sees no one's Secret, its own included (a clash is its own earlier try: the name carries the Job's uid).
    _rule([""], ["secrets"], ["create"]),
    # An engine checks at start that our CRDs carry this nvcre's schema (engine/kube/session.py): CRDs of another
    # version prune or refuse fields it writes. Read only, and only ours.
    _rule([CRD.group], ["customresourcedefinitions"], ["get"], [f"{plural}.{NVCRE_GROUP}" for plural in NVCRE_PLURALS]),
    # Records, never remediates: Nodes are read only (targets, health, topology).
    _rule([""], ["nodes"], READ),
    # NVSentinel's ValidationRequests, read only: the console shows which one created a Certification and
    # what it says of a node (engine/history/nvsentinel.py); absent CRD: no NVSentinel.
    _rule([VALIDATION_REQUEST.group], ["validationrequests"], READ),
    # Pods of the workloads (one watch) and their logs (the runner reads output). Never pods/exec.
    _rule([""], ["pods"], READ),
    _rule([""], ["pods/log"], ["get"]),
    # Workloads on the cluster (runners/kubernetes/): per group a Kubeflow Trainer TrainJob and its own
    # TrainingRuntime (its pod templates carry the group's pinning), or without the Trainer a batch/v1 Indexed Job
    # and headless Service. Create; get on a create clash (ours from an earlier try?); delete to free the GPUs of a
    # failed run, and a deleted certification's where no garbage collector does. Never listed or watched: the runner
    # follows the pods.
    _rule([TRAINER_GROUP], ["trainjobs", "trainingruntimes"], ["get", "create", "delete"]),
    # The JobSet the Trainer's controller makes of a TrainJob, read by name only: none made a minute after the TrainJob
    # means no Trainer controller runs (runners/kubernetes), and the run fails then rather than after the grace; one
    # made with no status and no child Job (a batch Job read by name, with the get below) that long, no JobSet controller.
    _rule([JOBSET_GROUP], ["jobsets"], ["get"]),
    _rule([BATCH_JOB.group], ["jobs"], ["get", "create", "delete"]),
    _rule([""], ["services"], ["get", "create", "delete"]),
    # GB200 / GB300: the run's DRA ComputeDomain (multi-node NVLink channel); get on a create clash (and before a
    # delete: only one its Job owns); delete: a finished run's (its IMEX daemons hold the nodes), and a deleted
    # certification's where no garbage collector does.
    _rule([COMPUTE_DOMAIN_GROUP], ["computedomains"], ["create", "get", "delete"]),
    # AWS GB300: the run's own DRA ResourceClaimTemplate of its RoCE NICs (catalog/_workloads/claims.yaml); get and
    # delete as the ComputeDomain's (owned by the run's Job, a garbage collector removes it with it where one runs).
    _rule([DRA_GROUP], ["resourceclaimtemplates"], ["create", "get", "delete"]),
]

# Role nvcre-engine in the install namespace: the one engine Lease (engine/lease.py).
LEASE_RULES: list[Rule] = [
    # create cannot be limited by name (the authorizer sees no name on create)
    _rule([LEASE.group], ["leases"], ["create"]),
    _rule([LEASE.group], ["leases"], ["get", "update"], [ENGINE_NAME]),
]


def _matches(allowed: Iterable[str], wanted: str) -> bool:
    return any(item in ("*", wanted) for item in allowed)


def _resource_matches(allowed: Iterable[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for item in allowed:
        if item in ("*", combined) or (subresource and item == f"*/{subresource}"):
            return True
    return False


def rule_allows(rule: Mapping[str, Any], verb: str, api_group: str, resource: str, subresource: str = "",
                name: str | None = None) -> bool:
    """Whether one PolicyRule allows the request (resourceNames: only requests naming one of them)."""
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("verbs") or [], verb)
        and _matches(rule.get("apiGroups") or [], api_group)
        and _resource_matches(rule.get("resources") or [], resource, subresource)
        and (not names or (name is not None and name in names))
    )


@dataclass(frozen=True)
class Grant:
    """Rules that hold in one namespace, or everywhere (`namespace` None: a ClusterRoleBinding)."""

    rules: tuple[Mapping[str, Any], ...]
    namespace: str | None = None

    def covers(self, namespace: str | None) -> bool:
        """Cluster-wide grants cover all; a namespaced one only requests inside its namespace
        (not cluster-scoped resources, not lists across all namespaces)."""
        return self.namespace is None or self.namespace == namespace


def rbac_allows(grants: Iterable[Grant | Mapping[str, Any]], verb: str, api_group: str, resource: str,
                subresource: str = "", namespace: str | None = None, name: str | None = None) -> bool:
    """Whether any grant allows the request. A bare PolicyRule mapping counts as a cluster-wide grant."""
    for grant in grants:
        if not isinstance(grant, Grant):
            grant = Grant((grant,))
        if grant.covers(namespace) and any(
            rule_allows(rule, verb, api_group, resource, subresource, name) for rule in grant.rules
        ):
            return True
    return False


def _is_subject(binding: Mapping[str, Any], namespace: str, service_account: str) -> bool:
    binding_ns = meta_of(binding).get("namespace")
    for subject in binding.get("subjects") or []:
        subject_ns = subject.get("namespace") or (binding_ns if binding["kind"] == "RoleBinding" else None)
        if subject.get("kind") == "ServiceAccount" and subject.get("name") == service_account and subject_ns == namespace:
            return True
    return False


def grants_for(objects: Iterable[Mapping[str, Any]], namespace: str, service_account: str) -> list[Grant]:
    """The grants a ServiceAccount gets from a set of RBAC objects (roles and bindings, any order)."""
    objects = list(objects)
    cluster_roles = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ClusterRole"}
    roles = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects if o.get("kind") == "Role"}
    grants: list[Grant] = []
    for binding in objects:
        kind = binding.get("kind")
        if kind not in ("ClusterRoleBinding", "RoleBinding") or not _is_subject(binding, namespace, service_account):
            continue
        ref = binding.get("roleRef") or {}
        binding_ns = binding["metadata"].get("namespace") if kind == "RoleBinding" else None
        if ref.get("kind") == "ClusterRole":
            role = cluster_roles.get(ref.get("name"))
        elif kind == "RoleBinding":
            role = roles.get((binding_ns, ref.get("name")))
        else:
            role = None  # a ClusterRoleBinding cannot refer to a Role
        if role is not None:
            grants.append(Grant(tuple(role.get("rules") or []), binding_ns))
    return grants
