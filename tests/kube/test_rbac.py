"""The engine's RBAC: the golden manifest, the rule checker, and what it denies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.api.serialize import to_yaml
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE, rbac_objects
from nvcre_tui.engine.kube.rbac import Grant, grants_for, rbac_allows, rule_allows
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN

GOLDEN = Path(__file__).parents[1] / "cases" / "rbac" / "nvcre-system.yaml"
HEADER = ("# The RBAC `nvcre setup init` grants the engine (namespace nvcre-system). Reviewed by hand:\n"
          "# regenerate with NVCRE_UPDATE_GOLDEN=1 and read the diff before committing it.\n")


def test_rbac_matches_the_golden_manifest() -> None:
    objects = rbac_objects(INSTALL_NAMESPACE)
    if os.environ.get("NVCRE_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(HEADER + to_yaml(objects), encoding="utf-8")
    assert list(yaml.safe_load_all(GOLDEN.read_text(encoding="utf-8"))) == objects


def test_rbac_follows_the_install_namespace() -> None:
    objects = {o["kind"]: o for o in rbac_objects("elsewhere")}
    assert objects["ClusterRoleBinding"]["subjects"][0]["namespace"] == "elsewhere"
    assert objects["Role"]["metadata"]["namespace"] == "elsewhere"


ENGINE = grants_for(rbac_objects(INSTALL_NAMESPACE), INSTALL_NAMESPACE, ENGINE_NAME)

# (verb, group, resource, subresource, namespace, name) -> allowed
CASES = [
    # what the engine does
    (("list", "nvcre.nvidia.com", "certifications", "", None, None), True),
    (("watch", "nvcre.nvidia.com", "workloadruns", "", "team-a", None), True),
    (("create", "nvcre.nvidia.com", "workflows", "", "team-a", None), True),
    (("patch", "nvcre.nvidia.com", "certifications", "status", "team-a", "c1"), True),
    (("create", "", "events", "", "team-a", None), True),
    (("update", "", "events", "", "team-a", "c1.abc"), True),
    (("create", "", "configmaps", "", "team-a", None), True),
    (("get", "", "nodes", "", None, "gpu-01"), True),
    (("get", "", "pods", "log", "team-a", "p"), True),
    (("create", "coordination.k8s.io", "leases", "", INSTALL_NAMESPACE, None), True),
    (("update", "coordination.k8s.io", "leases", "", INSTALL_NAMESPACE, "nvcre-engine"), True),
    # records, never remediates; Secrets created (a batch MPI run's ssh keys), never read or deleted; no exec
    (("patch", "", "nodes", "", None, "gpu-01"), False),
    (("update", "", "nodes", "status", None, "gpu-01"), False),
    (("delete", "", "nodes", "", None, "gpu-01"), False),
    (("create", "", "secrets", "", "team-a", None), True),
    (("get", "", "secrets", "", "team-a", "s"), False),
    (("list", "", "secrets", "", None, None), False),
    (("watch", "", "secrets", "", None, None), False),
    (("delete", "", "secrets", "", "team-a", "s"), False),
    (("update", "", "secrets", "", "team-a", "s"), False),
    (("create", "", "pods", "exec", "team-a", "p"), False),
    (("get", "", "pods", "exec", "team-a", "p"), False),
    # the user creates and deletes Certifications, never the engine; spec updates are nobody's
    (("create", "nvcre.nvidia.com", "certifications", "", "team-a", None), False),
    (("delete", "nvcre.nvidia.com", "certifications", "", "team-a", "c1"), False),
    (("update", "nvcre.nvidia.com", "jobs", "", "team-a", "j"), False),
    # the Lease rights hold only in the install namespace, and only for our Lease
    (("update", "coordination.k8s.io", "leases", "", "team-a", "nvcre-engine"), False),
    (("update", "coordination.k8s.io", "leases", "", INSTALL_NAMESPACE, "kube-scheduler"), False),
    (("list", "coordination.k8s.io", "leases", "", INSTALL_NAMESPACE, None), False),
    # status rights are not main-resource rights and vice versa
    (("patch", "nvcre.nvidia.com", "certifications", "", "team-a", "c1"), False),
    (("create", "nvcre.nvidia.com", "jobs", "status", "team-a", "j"), False),
    # same resource name, other group
    (("create", "batch", "jobs", "", "team-a", None), True),
    (("patch", "batch", "jobs", "", "team-a", "j"), False),
]


@pytest.mark.parametrize(("request_", "allowed"), CASES, ids=[" ".join(p or "-" for p in c[0]) for c in CASES])
def test_engine_rights(request_: tuple, allowed: bool) -> None:
    assert rbac_allows(ENGINE, *request_) is allowed


def test_wildcards_and_subresources_follow_the_authorizer() -> None:
    assert rule_allows({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, "delete", "x", "y", "status")
    star_status = {"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}
    assert rule_allows(star_status, "get", "", "pods", "status")
    assert not rule_allows(star_status, "get", "", "pods")
    assert not rule_allows({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, "get", "", "pods", "log")
    named = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]}
    assert rule_allows(named, "get", "", "configmaps", name="a")
    assert not rule_allows(named, "get", "", "configmaps", name="b")
    assert not rule_allows(named, "get", "", "configmaps")  # a list names nothing


def test_namespaced_grants_stay_in_their_namespace() -> None:
    rule = {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes", "pods"]}
    grant = Grant((rule,), "team-a")
    assert rbac_allows([grant], "get", "", "pods", namespace="team-a")
    assert not rbac_allows([grant], "get", "", "pods", namespace="team-b")
    assert not rbac_allows([grant], "get", "", "nodes")  # a RoleBinding grants nothing cluster-scoped
    assert rbac_allows([rule], "get", "", "nodes")  # a bare rule is a cluster-wide grant


def test_grants_follow_bindings_to_the_subject() -> None:
    objects = rbac_objects(INSTALL_NAMESPACE)
    assert grants_for(objects, INSTALL_NAMESPACE, "someone-else") == []
    assert grants_for(objects, "default", ENGINE_NAME) == []
    # a ClusterRole bound by a RoleBinding counts only in that namespace
    cluster_role = next(o for o in objects if o["kind"] == "ClusterRole")
    binding = {"kind": "RoleBinding", "metadata": {"name": "b", "namespace": "team-a"},
               "subjects": [{"kind": "ServiceAccount", "name": "sa"}],  # namespace defaults to the binding's
               "roleRef": {"kind": "ClusterRole", "name": cluster_role["metadata"]["name"]}}
    grants = grants_for([cluster_role, binding], "team-a", "sa")
    assert [g.namespace for g in grants] == ["team-a"]
    assert rbac_allows(grants, "get", "", "pods", namespace="team-a")
    assert not rbac_allows(grants, "get", "", "pods", namespace="team-b")


def test_every_nvcre_kind_may_block_its_childrens_deletion() -> None:
    # Children carry ownerReferences with blockOwnerDeletion: true (controllers/context.py, workloads/placement.py;
    # a standalone WorkloadRun owns its TrainJob). With the OwnerReferencesPermissionEnforcement admission plugin
    # (OpenShift, hardened clusters) a create is refused unless the creator may update the owner's finalizers.
    grants = grants_for(rbac_objects(INSTALL_NAMESPACE), INSTALL_NAMESPACE, ENGINE_NAME)
    for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN):
        assert rbac_allows(grants, "update", kind.group, kind.plural, "finalizers", namespace="team-a"), kind.plural
