"""Scenario fields are checked where they are read: a fault field its type does not take, a node change's labels,
annotations and taints, and NVSentinel ValidationRequests are refused with the entry and field named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.sim.scenario import FAULT_FIELDS, FaultType, Scenario, build_nodes, load_scenario, same_fleet

Obj = dict[str, Any]
FLEET: Obj = {"name": "checks", "nodes": [{"count": 2}]}
OPTIONAL = ("gpu", "factor", "xid", "probability")
VALUES: Obj = {"gpu": 3, "factor": 0.9, "xid": 13, "probability": 0.01}


def _load(tmp_path: Path, **fields: Any) -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**FLEET, **fields}))
    return load_scenario(path)


def _refused(tmp_path: Path, **fields: Any) -> list[str]:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, **fields)
    return [message.removeprefix(f"{tmp_path / 's.yaml'}: ") for message in caught.value.messages]


def _fault(kind: str, **fields: Any) -> Obj:
    target: Obj = {"cliques": ["clique-0"]} if kind == "degraded-fabric" else {"node": "gpu-node-01"}
    return {"type": kind, **target, **fields}


# ------------------------------------------------------------------------------------------- faults


def test_every_fault_type_says_which_fields_it_takes() -> None:
    assert set(FAULT_FIELDS) == set(get_args(FaultType))
    assert all(fields <= set(OPTIONAL) for fields in FAULT_FIELDS.values())


@pytest.mark.parametrize(("kind", "field"), [(kind, field) for kind in get_args(FaultType) for field in OPTIONAL])
def test_a_fault_field_is_taken_by_the_types_that_read_it_and_refused_by_the_others(tmp_path: Path, kind: str, field: str) -> None:
    fault = _fault(kind, **{field: VALUES[field]})
    if field in FAULT_FIELDS[kind]:
        assert getattr(_load(tmp_path, faults=[fault]).faults[0], field) == VALUES[field]
    else:
        [message] = _refused(tmp_path, faults=[fault])
        assert message.startswith(f"faults[0].{field}: a {kind} fault does not take {field} (it takes ")


def test_the_reviewers_faults_are_refused_naming_index_type_and_field(tmp_path: Path) -> None:
    faults = [{"type": "slow-gpu", "node": "gpu-node-01", "probability": 0.01, "xid": 13},
              {"type": "hang", "node": "gpu-node-01", "factor": 0.9, "gpu": 3},
              {"type": "degraded-nic", "node": "gpu-node-02", "gpu": 5}]
    assert _refused(tmp_path, faults=faults) == [
        "faults[0].xid: a slow-gpu fault does not take xid (it takes node, at, factor, gpu and probability)",
        "faults[1].gpu: a hang fault does not take gpu (it takes node, at and probability)",
        "faults[1].factor: a hang fault does not take factor (it takes node, at and probability)",
        "faults[2].gpu: a degraded-nic fault does not take gpu (it takes node, at, factor and probability)",
    ]


def test_a_scenarios_dump_holds_only_its_faults_own_fields_and_loads_back_as_a_file(tmp_path: Path) -> None:
    every = Scenario.model_validate({**FLEET, "faults": [_fault(kind, at="1m") for kind in get_args(FaultType)]})
    for fault in every.to_wire()["faults"]:
        assert set(fault) - {"type", "node", "cliques", "at"} <= FAULT_FIELDS[fault["type"]], fault
    assert _load(tmp_path, **every.to_wire()) == every
    assert _load(tmp_path, **every.model_dump(by_alias=True, exclude_none=True, mode="json")) == every


def test_a_state_an_earlier_nvcre_wrote_is_the_same_fleet() -> None:
    """It wrote factor 0.5 and xid 79 on every fault: that form still reads as this scenario, not another fleet."""
    every = Scenario.model_validate({**FLEET, "faults": [_fault(kind, at="1m") for kind in get_args(FaultType)]})
    earlier = {**every.to_wire(), "faults": [{**fault, "factor": fault.get("factor", 0.5), "xid": fault.get("xid", 79)}
                                             for fault in every.to_wire()["faults"]]}
    assert earlier != every.to_wire() and same_fleet(earlier, every)
    assert not same_fleet({**earlier, "seed": 8}, every) and not same_fleet({"faults": "damaged"}, every)


@pytest.mark.parametrize(("kind", "field", "default"), [("hang", "factor", 0.5), ("hang", "xid", 79), ("cordon", "factor", 0.5),
                                                         ("degraded-fabric", "xid", 79), ("flaky", "factor", 0.5)])
def test_a_field_its_type_does_not_take_is_refused_in_a_file_even_at_its_default(tmp_path: Path, kind: str, field: str,
                                                                                 default: object) -> None:
    # A user who writes `factor: 0.5` on a hang expects it to do something; it would do nothing.
    [message] = _refused(tmp_path, faults=[_fault(kind, **{field: default})])
    assert message.startswith(f"faults[0].{field}: a {kind} fault does not take {field} (it takes ")


# ------------------------------------------------------------------------------------------- node changes


@pytest.mark.parametrize(("change", "message"), [
    ({"labels": {"bad key with spaces": "x"}}, "nodeChanges[0].labels: 'bad key with spaces' is not a valid label key"),
    ({"labels": {"example.com/ok": "\x1b[2Jyes"}}, "nodeChanges[0].labels.example.com/ok: must be a label value"),
    ({"labels": {"ok": "a" * 64}}, "nodeChanges[0].labels.ok: must be at most 63 characters"),
    ({"annotations": {"not/a/key": "x"}}, "nodeChanges[0].annotations: 'not/a/key' is not a valid label key"),
    ({"annotations": {"example.com/note": "\x1b]0;owned\x07"}}, "nodeChanges[0].annotations.example.com/note: must be text without control characters"),
    ({"taints": [{"effect": "Bogus"}]}, "nodeChanges[0].taints[0].key: required field is missing"),
    ({"taints": [{"key": "a", "effect": "Bogus"}]}, "nodeChanges[0].taints[0].effect: must be one of 'NoSchedule'"),
    ({"taints": [{"key": "a"}]}, "nodeChanges[0].taints[0].effect: required field is missing"),
    ({"taints": [{}]}, "nodeChanges[0].taints[0].key: required field is missing"),
    ({"taints": [{"key": "bad key", "effect": "NoSchedule"}]}, "nodeChanges[0].taints[0].key: 'bad key' is not a valid label key"),
    ({"taints": [{"key": "a", "value": "\x1b[2J", "effect": "NoSchedule"}]}, "nodeChanges[0].taints[0].value: must be a label value"),
    ({"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "v", "effect": "NoSchedule"}]},
     "nodeChanges[0].taints: must be unique by key and effect: a:NoSchedule is given twice"),
    ({"taints": [{"key": "a", "effect": "NoSchedule", "operator": "Exists"}]}, "nodeChanges[0].taints[0].operator: unknown field"),
    ({"driverVersion": "570 124"}, "nodeChanges[0].driverVersion: must be a version such as 570.124.06"),
    ({"cudaRuntimeVersion": "12._8"}, "nodeChanges[0].cudaRuntimeVersion: must be a version such as 570.124.06"),
    ({"migStrategy": "\x1b[2J"}, "nodeChanges[0].migStrategy: must be a label value"),
    ({"kernelVersion": "6.8\x1b[2J"}, "nodeChanges[0].kernelVersion: must be text without control characters"),
])
def test_a_node_change_the_api_server_would_refuse_is_refused(tmp_path: Path, change: Obj, message: str) -> None:
    messages = _refused(tmp_path, nodeChanges=[{"node": "gpu-node-01", **change}])
    assert messages[0].startswith(message), messages


def test_a_pool_label_key_is_a_label_key(tmp_path: Path) -> None:
    assert _refused(tmp_path, nodes=[{"count": 2, "labels": {"rack name": "r1"}}])[0].startswith("nodes[0].labels: 'rack name' is not a valid label key")


def test_the_gpu_present_label_is_the_pools_field_not_a_label(tmp_path: Path) -> None:
    """gpuPresent writes it: a pool label would be dropped without a word (it used to be)."""
    [said] = _refused(tmp_path, nodes=[{"count": 4, "labels": {"nvidia.com/gpu.present": "false"}}])
    assert "nvidia.com/gpu.present is the pool's gpuPresent (true or false)" in said


def test_clique_numbers_go_on_from_pool_to_pool() -> None:
    """Two pools (two GPU products) never share a clique: the second's numbers follow the first's."""
    scenario = Scenario.model_validate({"name": "two pools", "nodes": [
        {"count": 4, "cliques": 2}, {"count": 2, "namePrefix": "a100-", "gpuProduct": "NVIDIA-A100-SXM4-80GB"},
        {"count": 2, "namePrefix": "b-", "cliquePrefix": "rack-"}]})
    cliques = {n["metadata"]["name"]: n["metadata"]["labels"]["nvidia.com/gpu.clique"] for n in build_nodes(scenario)}
    assert cliques == {"gpu-node-01": "clique-0", "gpu-node-02": "clique-0", "gpu-node-03": "clique-1", "gpu-node-04": "clique-1",
                       "a100-01": "clique-2", "a100-02": "clique-2", "b-01": "rack-0", "b-02": "rack-0"}


def test_a_valid_node_change_applies_as_written(tmp_path: Path) -> None:
    change = {"node": "gpu-node-01", "labels": {"example.com/rack": "r-1", "nvidia.com/gpu.present": None},
              "annotations": {"example.com/note": "line one\nline two\twith a tab"},
              "taints": [{"key": "example.com/broken", "effect": "NoSchedule"}, {"key": "example.com/broken", "value": "yes", "effect": "NoExecute"}]}
    [node, _] = build_nodes(_load(tmp_path, nodeChanges=[change]))
    assert node["metadata"]["labels"]["example.com/rack"] == "r-1" and "nvidia.com/gpu.present" not in node["metadata"]["labels"]
    assert node["metadata"]["annotations"] == {"example.com/note": "line one\nline two\twith a tab"}
    assert node["spec"]["taints"] == [{"key": "example.com/broken", "effect": "NoSchedule"},
                                      {"key": "example.com/broken", "value": "yes", "effect": "NoExecute"}]


# ------------------------------------------------------------------------------------------- ValidationRequests

REQUEST: Obj = {
    "metadata": {"name": "vr-weekly"},
    "spec": {"nodes": [{"name": "gpu-node-01"}, {"name": "gpu-node-02"}], "tests": ["nccl-loopback"]},
    "status": {"phase": "Failed", "startTime": "2026-09-28T23:32:09Z",
               "testGroups": [{"name": "nccl-loopback", "provider": "nvcre-provider", "phase": "Failed", "nodes": ["gpu-node-01", "gpu-node-02"],
                               "attempts": [{"objectName": "vr-weekly-nccl-loopback", "phase": "Failed", "failureReason": "TestFailed",
                                             "failedNodes": ["gpu-node-02"]}]}]},
}


def test_a_validation_request_as_nvsentinel_writes_it_loads(tmp_path: Path) -> None:
    [request] = _load(tmp_path, validationRequests=[REQUEST]).validation_requests or []
    assert request.to_wire() == REQUEST


@pytest.mark.parametrize(("written", "taken"), [("2026-09-28T23:32:09Z", "2026-09-28T23:32:09Z"),
                                                ("2026-09-28T23:32:09.25Z", "2026-09-28T23:32:09.250000Z"),
                                                ("2026-09-28T23:32:09+02:00", "2026-09-28T23:32:09+02:00")])
def test_an_unquoted_time_yaml_reads_as_a_date_is_taken_as_written(tmp_path: Path, written: str, taken: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("nodes: [{count: 2}]\nvalidationRequests:\n  - metadata: {name: vr-1}\n    spec: {nodes: [{name: gpu-node-01}]}\n"
                    f"    status: {{phase: Running, startTime: {written}, conditions: [{{type: Ready, status: 'True', reason: Started, "
                    f"lastTransitionTime: {written}}}]}}\n")
    [request] = load_scenario(path).validation_requests or []
    assert request.status is not None and request.status.start_time == taken
    assert request.status.conditions and request.status.conditions[0].last_transition_time == taken  # read as every time is


def test_a_date_without_a_time_is_no_time(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("nodes: [{count: 2}]\nvalidationRequests:\n  - metadata: {name: vr-1}\n    spec: {nodes: [{name: gpu-node-01}]}\n"
                    "    status: {phase: Running, startTime: 2026-09-28}\n")
    with pytest.raises(InputError, match=r"validationRequests\[0\]\.status\.startTime: must be an RFC 3339 time such as 2026-11-29T10:00:00Z, got '2026-09-28'"):
        load_scenario(path)


def _with(path: str, value: Any) -> Obj:
    """REQUEST with the dotted `path` set to `value` (a number picks a list item)."""
    request: Any = copy.deepcopy(REQUEST)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = request
    for part in parents:
        target = target[part]
    target[last] = value
    return request


@pytest.mark.parametrize(("request_body", "message"), [
    ({"metadata": {"name": "vr-1"}, "spec": "a string"}, "validationRequests[0].spec: must be a mapping, got 'a string'"),
    ({}, "validationRequests[0].metadata: required field is missing"),
    ("vr-1", "validationRequests[0]: must be a mapping, got 'vr-1'"),
    (_with("status.testGroups", ["notadict"]), "validationRequests[0].status.testGroups[0]: must be a mapping, got 'notadict'"),
    (_with("status.testGroups.0.attempts", [7]), "validationRequests[0].status.testGroups[0].attempts[0]: must be a mapping, got 7"),
    (_with("status.testGroups.0.attempts.0.failedNodes", "gpu-node-02"), "validationRequests[0].status.testGroups[0].attempts[0].failedNodes: must be a list"),
    (_with("status.testGroups.0.attempts.0.objectName", 12), "validationRequests[0].status.testGroups[0].attempts[0].objectName: must be a string"),
    (_with("status.phase", "Done"), "validationRequests[0].status.phase: must be one of 'Pending', 'Running', 'Succeeded' or 'Failed'"),
    (_with("status.startTime", "yesterday"), "validationRequests[0].status.startTime: must be an RFC 3339 time"),
    (_with("spec.nodes", []), "validationRequests[0].spec.nodes: must have at least 1 item(s)"),
    (_with("spec.nodes", ["gpu-node-01"]), "validationRequests[0].spec.nodes[0]: must be a mapping, got 'gpu-node-01'"),
    (_with("spec.nodes.0", {}), "validationRequests[0].spec.nodes[0].name: required field is missing"),
    ({"metadata": {"name": "vr-1"}, "spec": {"nodes": [{"name": "gpu-node-09"}]}}, "validationRequests[0].spec.nodes[0].name: no node named 'gpu-node-09'"),
    (_with("metadata.name", "VR 1"), "validationRequests[0].metadata.name: must be a lowercase DNS name"),
    (_with("spec.node", []), "validationRequests[0].spec.node: unknown field"),
    (_with("status.testGroups.0.attempts.0.failedNodes", ["gpu-node-03"]),
     "validationRequests[0]: status.testGroups[0].attempts[0].failedNodes names gpu-node-03, which spec.nodes does not"),
])
def test_a_malformed_validation_request_is_refused_naming_entry_and_field(tmp_path: Path, request_body: Any, message: str) -> None:
    messages = _refused(tmp_path, validationRequests=[request_body])
    assert messages[0].startswith(message), messages


def test_two_validation_requests_of_one_name_are_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, validationRequests=[REQUEST, copy.deepcopy(REQUEST)]) == [
        "validationRequests: two ValidationRequests are named vr-weekly: each needs a name of its own"]
