"""`nvcre controller` without --sim-runner, end to end on the API-server emulator: a Certification becomes
Workflows, Jobs, batch/v1 Jobs (no Kubeflow Trainer here), pods the test kubelet plays, pod logs, and the
verdict the simulator gives for the same case, with the blamed node found in the pods' output. The
controller runs as the nvcre-engine ServiceAccount (the RBAC `setup init` grants) on a ManualClock the
test moves, the kubelet stepping in between."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import controller
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from tests.kube.cluster import installed, store_on
from tests.kubeapi.kubelet import TestKubelet
from tests.runner.harness import comparable, denied, register_gpu_nodes, simulator_report
from tests.scenarios.harness import CASES, NAMESPACE, report_from, snapshot, start_certification

MAX_STEPS = 2_000


async def quiet(server, polls: int = 4, step: float = 0.005, limit: int = 400) -> None:
    """Tiny real waits until the API server saw no new request for `polls` waits in a row (the controller
    has reacted to what the kubelet wrote)."""
    seen, calm = len(server.requests), 0
    for _ in range(limit):
        await asyncio.sleep(step)
        calm = calm + 1 if len(server.requests) == seen else 0
        seen = len(server.requests)
        if calm >= polls:
            return


async def run_under_controller(case: str, tmp_path: Path) -> tuple[bool, dict[str, Any], str, Any]:
    """Run a scenario case's certification under `nvcre controller` with real pods (the test kubelet plays them):
    whether it finished, the objects at the end, the certification's name and the server (its requests)."""
    clock = ManualClock(SIM_START)
    scenario = load_scenario(CASES / case / "scenario.yaml")
    async with installed(tmp_path, clock=clock, garbage_collector=True) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            await register_gpu_nodes(admin, clock, scenario)
            name = await start_certification(admin, CASES / case / "cert.yaml")
            token = server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)
            engine_config = server.write_kubeconfig(tmp_path / "engine", token=token)
            parser = argparse.ArgumentParser(prog="nvcre")
            controller.register(parser.add_subparsers())
            args = parser.parse_args(["controller", "--kubeconfig", str(engine_config), "--metrics-port", "0",
                                      "--identity", "ctl-real"])
            running = asyncio.create_task(controller.controller(args, clock=clock))
            kubelet = TestKubelet(admin, server, clock, scenario)
            finished = False
            for _ in range(MAX_STEPS):
                await quiet(server)
                assert not running.done(), f"the controller stopped: {running.result()}"
                if cond.is_terminal(await admin.get(CERTIFICATION, name, NAMESPACE)):
                    finished = True
                    break
                wait = await kubelet.step()
                await quiet(server)
                due = clock.next_deadline()
                until_due = (due - clock.now()).total_seconds() if due else wait
                clock.advance(max(min(wait, until_due), 0.001))
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            return finished, await snapshot(admin), name, server
        finally:
            await admin.close()


@pytest.mark.parametrize("case", ["threshold-pass-two-metrics", "xid-mid-run-full-scale", "diagnose-slow-gpu"])
async def test_the_controller_runs_real_pods_to_the_simulators_verdict(case: str, tmp_path: Path) -> None:
    finished, objects, name, server = await run_under_controller(case, tmp_path)
    assert finished, f"{case}: the certification never finished under the controller"
    report = report_from(objects, name)
    assert comparable(report) == comparable(await asyncio.to_thread(simulator_report, case))
    engine = [r for r in server.requests if r.user_agent.startswith("nvcre-engine")]
    assert any(r.verb == "create" and r.api_group == "batch" and r.resource == "jobs" for r in engine)
    assert any(r.verb == "get" and r.resource == "pods" and r.subresource == "log" for r in engine)
    assert not [r for r in engine if r.resource == "nodes" and r.verb not in ("get", "list", "watch")]
    assert denied(server.requests) == []
    pod_lists = [r for r in engine if r.resource == "pods" and not r.subresource and r.verb == "list"]
    # apart from the pods not nvcre's on each target node, listed as a Workflow starts (a busy node is left out)
    occupants = [r for r in pod_lists if r.query.get("labelSelector") == "!nvcre.nvidia.com/job"]
    assert occupants and all(r.query.get("fieldSelector", "").startswith("spec.nodeName=") for r in occupants)
    assert len(pod_lists) - len(occupants) == 1, "pods are watched: one list, then events"
    assert report["workloadFallback"]


async def test_a_gb200_run_on_a_cluster_without_compute_domains_fails_at_once_saying_what_to_install(tmp_path: Path) -> None:
    """MNNVL on GB200 needs a ComputeDomain (NVIDIA's DRA driver); the emulator serves none. The run used to retry
    its create until the Job timed out; now each group fails at once with the two ways out."""
    finished, objects, name, server = await run_under_controller("gb200-intra-rack-mnnvl", tmp_path)
    assert finished
    report = report_from(objects, name)
    assert report["result"] == "FAILED"
    runs = objects["WorkloadRun"]
    assert runs and all(r["status"]["reason"] == "WorkloadNotCreated" for r in runs)
    assert report["failedNodes"] == []  # a driver missing from the cluster is no node's fault
    assert all("ComputeDomain (resource.nvidia.com/v1beta1)" in r["status"]["message"] and "enableMNNVL: false" in r["status"]["message"]
               for r in runs)
    engine = [r for r in server.requests if r.user_agent.startswith("nvcre-engine")]
    assert not [r for r in engine if r.verb == "create" and r.resource in ("computedomains", "jobs") and r.api_group != "nvcre.nvidia.com"]
