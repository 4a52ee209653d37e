"""Shared builders for the simulator tests: scenarios, WorkloadRuns as the Job controller makes them."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.sim.physics import NcclPlan, RunPlan, RunSpec, TrainingPlan, plan_run
from nvcre_tui.engine.sim.scenario import DEFAULT_SCENARIO, Scenario

Obj = dict[str, Any]
NCCL_ARGS = ["-b", "8", "-e", "16G", "-f", "2", "-n", "100", "-N", "10"]
ALL_NODES = [f"gpu-node-{index:02d}" for index in range(1, 33)]


def scenario(*, faults: list[Obj] | None = None, **changes: Any) -> Scenario:
    """The default scenario, with other faults or top-level fields when given."""
    data = {**DEFAULT_SCENARIO, **changes}
    if faults is not None:
        data["faults"] = faults
    return Scenario.model_validate(data)


def nccl_run(name: str, nodes: list[str], *, program: str = "all_reduce_perf", test_type: str = "all_reduce",
             args: list[str] | None = None, env: dict[str, str] | None = None, loopback: bool = False) -> Obj:
    """An nccl-tests WorkloadRun: mpirun across the nodes, or one process per node driving all GPUs (-g)."""
    binary = f"/opt/nccl-tests/build/{program}"
    args = list(NCCL_ARGS if args is None else args)
    framework = {"exec": {"command": [binary], "args": [*args, "-g", "8"]}} if loopback else {"mpi": {"binary": binary, "args": args}}
    return workload_run(name, nodes, framework, {"parser": "nccl", "testType": test_type}, env or {})


def dcgm_run(name: str, node: str, *, image: str = "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04", json: bool = True) -> Obj:
    """A dcgmi diag -r 4 WorkloadRun on one node."""
    args = ["--run", "4", *(["--json"] if json else []), "-p", "targeted_power.test_duration=1200s"]
    return workload_run(name, [node], {"exec": {"command": ["dcgmi", "diag"], "args": args}}, {"parser": "dcgm"}, {}, image=image)


def training_run(name: str, nodes: list[str], *, iters: int = 50, save_interval: int = 250, exit_mins: int | None = None) -> Obj:
    """A Megatron pretraining WorkloadRun (torchrun); `exit_mins`: its --exit-duration-in-mins."""
    env = {"TRAIN_ITERS": str(iters), "SAVE_INTERVAL": str(save_interval), "TENSOR_PARALLELISM": "2", "PIPELINE_PARALLELISM": "1"}
    if exit_mins is not None:
        env["EXIT_DURATION_MINS"] = str(exit_mins)
    return workload_run(name, nodes, {"torch": {"script": "/config/train.sh"}}, {"parser": "training"}, env,
                        config={"train.sh": "exec torchrun pretrain_gpt.py --log-interval 10"})


def workload_run(name: str, nodes: list[str], framework: Obj, measurement: Obj, env: dict[str, str], *,
                 image: str = "nvcr.io/nvidia/pytorch:25.08-py3", config: Obj | None = None) -> Obj:
    spec: Obj = {"image": image, "framework": framework, "numNodes": len(nodes), "gpusPerNode": 8,
                 "target": {"nodeNames": list(nodes)}, "measurement": measurement,
                 "env": [{"name": key, "value": value} for key, value in env.items()]}
    if config:
        spec["config"] = config
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def plan(scn: Scenario, run: Obj, start: float = 0.0) -> RunPlan:
    """The plan of `run` starting `start` seconds after the fleet epoch."""
    return plan_run(scn, RunSpec.from_run(run), start)


def nccl_plan(scn: Scenario, run: Obj, start: float = 0.0) -> NcclPlan:
    """The nccl-tests part of the plan of `run`."""
    result = plan(scn, run, start).nccl
    assert result is not None
    return result


def training_plan(scn: Scenario, run: Obj, start: float = 0.0) -> TrainingPlan:
    """The training part of the plan of `run`."""
    result = plan(scn, run, start).training
    assert result is not None
    return result
