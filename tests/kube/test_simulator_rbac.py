"""`setup init --sim-runner`: the simulated fleet's Node rights come as their own role, only when asked for;
the engine's ClusterRole never grants a Node write."""

from __future__ import annotations

from nvcre_tui.engine.kube.install import SIMULATOR_NAME, install_objects
from nvcre_tui.engine.kube.rbac import rbac_allows


def rules_of(objects: list[dict], name: str) -> list[dict]:
    return [rule for obj in objects if obj["kind"] == "ClusterRole" and obj["metadata"]["name"] == name for rule in obj["rules"]]


def test_the_simulator_role_is_only_there_when_asked_for() -> None:
    assert not rules_of(install_objects(), SIMULATOR_NAME)
    with_sim = install_objects(simulator=True)
    assert rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "create", "", "nodes", "", None)
    assert rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "patch", "", "nodes", "status", None)
    assert not rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "delete", "", "nodes", "", None)
    # The scenario's NVSentinel ValidationRequests (sim/fleet.py creates them and sets their status); the engine only reads them.
    assert rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "create", "nvsentinel.nvidia.com", "validationrequests", "", None)
    assert rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "update", "nvsentinel.nvidia.com", "validationrequests", "status", None)
    assert not rbac_allows(rules_of(with_sim, SIMULATOR_NAME), "delete", "nvsentinel.nvidia.com", "validationrequests", "", None)
    assert not rbac_allows(rules_of(with_sim, "nvcre-engine"), "create", "nvsentinel.nvidia.com", "validationrequests", "", None)
    binding = next(o for o in with_sim if o["kind"] == "ClusterRoleBinding" and o["metadata"]["name"] == SIMULATOR_NAME)
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "nvcre-engine", "namespace": "nvcre-system"}]


def test_the_engine_role_never_writes_nodes_even_with_the_simulator() -> None:
    engine = rules_of(install_objects(simulator=True), "nvcre-engine")
    assert rbac_allows(engine, "watch", "", "nodes", "", None)
    for verb in ("create", "update", "patch", "delete"):
        assert not rbac_allows(engine, verb, "", "nodes", "", None)
        assert not rbac_allows(engine, verb, "", "nodes", "status", None)
