"""The API models: wire format, both forms of global options, merge rules, validation rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.resources import Certification, Job, Workflow, WorkloadRun

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def cert(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "c"}, "spec": spec}


BASE = {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}


@pytest.mark.parametrize("name", ["certification.yaml", "diagnose.yaml"])
def test_examples_round_trip(name: str) -> None:
    data = yaml.safe_load((EXAMPLES / name).read_text())
    model = Certification.model_validate(data)
    assert model.to_wire() == data


def test_inline_and_spec_options_are_equivalent() -> None:
    inline = Certification.model_validate(cert({**BASE, "maxConcurrent": 4, "thresholds": {"busBandwidthGBps": "value >= 1"}}))
    nested = Certification.model_validate(cert({**BASE, "options": {"maxConcurrent": 4, "thresholds": {"busBandwidthGBps": "value >= 1"}}}))
    assert inline.spec.global_options() == nested.spec.global_options()
    assert inline.spec.category_options(0).max_concurrent == 4


def test_category_options_override_field_by_field_and_replace_thresholds() -> None:
    spec = {**BASE, "options": {"maxConcurrent": 4, "repeatCount": 2, "thresholds": {"busBandwidthGBps": "value >= 1", "algBandwidthGBps": "value >= 1"},
                                "workloadMetadata": {"labels": {"a": "1", "b": "1"}}}}
    spec["categories"] = [{"domain": "communication", "variant": "nccl-all-reduce", "options": {
        "maxConcurrent": 8, "thresholds": {"busBandwidthGBps": "value >= 9"}, "workloadMetadata": {"labels": {"b": "2"}}}}]
    options = Certification.model_validate(cert(spec)).spec.category_options(0)
    assert options.max_concurrent == 8 and options.repeat_count == 2
    assert options.thresholds == {"busBandwidthGBps": "value >= 9"}  # replaced whole
    assert options.workload_metadata is not None
    assert options.workload_metadata.labels == {"a": "1", "b": "2"}  # merged per key


@given(st.integers(min_value=-5, max_value=5))
def test_min_group_size_bound(value: int) -> None:
    spec = {**BASE, "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"minGroupSize": value}}]}
    if value >= 1:
        options = Certification.model_validate(cert(spec)).spec.categories[0].options
        assert options is not None and options.min_group_size == value
    else:
        with pytest.raises(ValidationError):
            Certification.model_validate(cert(spec))


def test_strict_types_refuse_strings_for_numbers() -> None:
    with pytest.raises(ValidationError):
        CategoryOptions.model_validate({"repeatCount": "3"})


def test_workload_run_framework_is_exactly_one() -> None:
    body: dict[str, Any] = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": "r"},
            "spec": {"image": "x", "numNodes": 1, "framework": {"exec": {"command": ["true"]}, "torch": {"script": "a.py"}}}}
    with pytest.raises(ValidationError, match="exactly one of torch, mpi or exec"):
        WorkloadRun.model_validate(body)
    body["spec"]["framework"] = {"torch": {"script": "a.py"}}
    assert WorkloadRun.model_validate(body).spec.framework.kind == "torch"


def test_job_workload_union_and_node_health_limit() -> None:
    spec = {"workload": {"workloadRun": {"image": "x", "numNodes": 1, "framework": {"exec": {"command": ["true"]}}}},
            "nodeHealthMonitor": {"cel": {"expression": "x" * 2049}}}
    with pytest.raises(ValidationError):
        Job.model_validate({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "j"}, "spec": spec})


def test_workflow_defaults() -> None:
    wf = Workflow.model_validate({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": {
        "jobTemplate": {"spec": {"workload": {"trainJob": {"spec": {}}}}}, "orchestration": {}}})
    assert wf.spec.orchestration.iterations == 1
    assert wf.spec.orchestration.execution.max_concurrent == 0
    assert wf.spec.job_template.spec.measurement_timeout == "5m"
