"""The simulated runner: plays kubelet and GPUs for WorkloadRuns on a SimulatedFleet.

Level-triggered: all state is in the WorkloadRun's status (Scheduling -> Running -> Succeeded / Failed,
pendingSince, startTime, completionTime ...). A run's plan is a pure function of (scenario, spec, run name,
startTime), recomputed whenever needed, so an engine restarted at any point sees the same run. Output is
regenerated from the plan in the real tool formats (sim/outputs) and read by the real parsers.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from nvcre_tui.engine.api.bodies import conditions_of, run_status
from nvcre_tui.engine.api.vocabulary import FAILED, INVALID_SPEC, LABEL_SIMULATED, SIMULATOR_AGENT, SUCCEEDED, WORKLOAD_NOT_CREATED
from nvcre_tui.engine.clock import Clock, format_time, parse_time
from nvcre_tui.engine.controllers.conditions import HOW_RUN, SIMULATED, is_true, with_condition
from nvcre_tui.engine.parsers.base import split_kubelet_prefix
from nvcre_tui.engine.runners.base import stopped_status
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB, delete_workload, owner_of
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.outputs import (
    LAYOUTS,
    NcclFormat,
    NcclRun,
    kubelet_prefix,
    write_dcgm_json,
    write_dcgm_table,
    write_megatron_log,
    write_nccl_log,
    write_nemo_log,
)
from nvcre_tui.engine.sim.physics import DCGMI_TIMEOUT_ERROR, XID_CUDA_ERRORS, PlanError, RunPlan, RunSpec, fleet_layout, plan_run
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.errors import Conflict, NotFound
from nvcre_tui.engine.store.protocol import BATCH_JOB, WORKLOADRUN, ResourceStore
from nvcre_tui.engine.units import listed

Obj = dict[str, Any]
Timed = list[tuple[float, str]]  # (seconds after the run's start, line without newline)
FINISHED = (SUCCEEDED, FAILED)
MEMO_LIMIT = 512
OUTPUT_MEMO_LIMIT = 16  # rendered logs kept (the runs being looked at)
RETRY_SECONDS = 1.0
OTHER_RUNNER = ("started on real pods by an engine without --sim-runner: the simulated fleet plays only the runs it "
                "started (its measurements would pass for a GPU's), and deleted its TrainJob or Job; run the certification "
                "again, all with or all without --sim-runner")  # another look at a run whose status write conflicted or found it gone


class SimulatedRunner:
    """Executes WorkloadRuns on a simulated fleet (the Runner protocol of runners/base.py)."""

    simulated = True

    def __init__(self, store: ResourceStore, clock: Clock, scenario: Scenario, fleet: SimulatedFleet | None = None,
                 *, fleet_only: bool = False) -> None:
        self.store, self.clock, self.scenario = store, clock, scenario
        # On a real API server (--sim-runner) other Nodes may be real GPUs: made-up measurements must never pass them.
        self.fleet_only = fleet_only
        self.fleet = fleet or SimulatedFleet(store, clock, scenario)
        self._own_writes = 0
        self._layout = fleet_layout(scenario)
        self._plans: dict[tuple[str, str, float], RunPlan] = {}  # a memo: plans are pure, never state
        self._outputs: dict[tuple[str, str, datetime], tuple[RunPlan, list[float], list[str], bool]] = {}  # rendered logs
        choice = random.Random(f"{scenario.seed}:nccl-format")
        # One nccl-tests build per cluster: every run of a scenario prints the same table generation.
        self.nccl_layout, self.nccl_strip_hash = choice.choice(sorted(LAYOUTS)), choice.random() < 0.25

    @property
    def simulated_message(self) -> str:
        """What a run's Simulated condition says."""
        return (f"played by nvcre's simulated fleet (scenario {self.scenario.name}, seed {self.scenario.seed}): "
                "no GPU ran it, its measurements are made up")

    @property
    def writes(self) -> int:
        """Store writes by the runner and its fleet (the engine settles when this stops moving)."""
        return self._own_writes + self.fleet.writes

    # ----------------------------------------------------------------------- lifecycle

    async def reconcile_run(self, run: Obj) -> float | None:
        """Scheduling -> Running -> Succeeded / Failed as simulated time passes; seconds to the next change."""
        if run_status(run).get("phase") in FINISHED:
            return None
        if (self.fleet_only and run_status(run).get("phase") in ("Scheduling", "Running") and not is_true(run, SIMULATED)
                and played_by_the_fleet(run)):
            # An older nvcre's fleet started it, before runs said Simulated (the server records the simulator as a writer
            # of its status): this fleet plays it on, and says so on it first, so that no report passes it for a GPU's.
            updated = await self._patch(run, {"conditions": with_condition(conditions_of(run), SIMULATED, True, HOW_RUN[SIMULATED],
                                                                           self.simulated_message, format_time(self.clock.now()))})
            if updated is None:
                return RETRY_SECONDS
            run = updated
        if self.fleet_only and run_status(run).get("phase") in ("Scheduling", "Running") and not is_true(run, SIMULATED):
            # On a cluster (--sim-runner), an engine without it started this run on real pods: playing it here would
            # pass made-up numbers off as a real GPU's (no Simulated condition on what it started). Nobody is blamed:
            # no node was tested here. (The embedded simulator has no other runner: a run there is always its own.)
            # Its pods (if a Trainer controller made any) hold GPUs for a run that is over: the TrainJob or batch Job goes,
            # as when the Kubernetes runner fails a run.
            if await self._patch(run, {"phase": FAILED, "reason": WORKLOAD_NOT_CREATED, "completionTime": format_time(self.clock.now()),
                                       "message": OTHER_RUNNER}) is not None:
                await delete_workload(self.store, run, await owner_of(self.store, run), [TRAINJOB, BATCH_JOB])
            return None
        try:
            spec = RunSpec.from_run(run)
            if self.fleet_only and run_status(run).get("phase") not in ("Scheduling", "Running") and (strangers := self._strangers(spec)):
                await self._patch(run, {"phase": FAILED, "reason": WORKLOAD_NOT_CREATED, "completionTime": format_time(self.clock.now()),
                                        "message": strangers})
                return None
            return await self._reconcile(run, spec)
        except PlanError as error:  # a spec the simulator cannot run fails like a pod that cannot start: no exit code
            await self._patch(run, {"phase": FAILED, "reason": INVALID_SPEC, "message": str(error),
                                    "completionTime": format_time(self.clock.now())})
            return None

    def _strangers(self, spec: RunSpec) -> str | None:
        """Why a run on Nodes the scenario does not describe is not played, or None."""
        impostors = [name for name in spec.nodes if name in self.fleet.not_ours]
        if impostors:
            several = len(impostors) > 1
            return (f"{'Nodes' if several else 'Node'} {listed(impostors)} of the cluster {'carry' if several else 'carries'} "
                    f"the name of a node of the simulated fleet (scenario {self.scenario.name}) but {'were' if several else 'was'} "
                    f"not registered by it (no label {LABEL_SIMULATED}=true, or one another client set): --sim-runner plays only "
                    "the Nodes it registers, and would record made-up "
                    f"measurements as {'theirs' if several else 'its'}; use a scenario whose node names the cluster does not "
                    "have, or run without --sim-runner")
        strangers = [name for name in spec.nodes if name not in self._layout]
        if not strangers:
            return None
        several = len(strangers) > 1
        return (f"{'Nodes' if several else 'Node'} {listed(strangers)} {'are not nodes' if several else 'is no node'} of the "
                f"simulated fleet (scenario {self.scenario.name}): --sim-runner plays only the Nodes its scenario registers, "
                f"and would report made-up measurements for {'them' if several else 'it'}; target the scenario's Nodes, or "
                "run without --sim-runner")

    async def _reconcile(self, run: Obj, spec: RunSpec) -> float | None:
        state = run_status(run)
        now = self.clock.now()
        if state.get("phase") not in ("Scheduling", "Running"):
            plan = await self._plan(spec, run, now)
            patch: Obj = {"phase": "Scheduling", "pendingSince": format_time(now), "nodes": list(spec.nodes),
                          "message": f"scheduling {len(spec.nodes)} pod(s)",
                          # a report read apart from the console must not pass for one of a real GPU fleet
                          "conditions": with_condition(conditions_of(run), SIMULATED, True, HOW_RUN[SIMULATED],
                                                       self.simulated_message, format_time(now))}
            patch.update(_blocked(plan))
            updated = await self._patch(run, patch)
            if updated is None:
                return RETRY_SECONDS
            run, state = updated, updated["status"]
        if state["phase"] == "Scheduling":
            if state.get("blockedNodes"):
                return None  # never schedules; the Job gives up after its grace period
            start = parse_time(state["pendingSince"]) + timedelta(seconds=self.scenario.physics.scheduling_sec)
            if now < start:
                return (start - now).total_seconds()
            plan = await self._plan(spec, run, start)
            if plan.outcome.kind == "unschedulable":
                return None if await self._patch(run, _blocked(plan)) is not None else RETRY_SECONDS
            updated = await self._patch(run, {"phase": "Running", "startTime": format_time(start),
                                              "message": f"running on {len(spec.nodes)} node(s)"})
            if updated is None:
                return RETRY_SECONDS
            run, state = updated, updated["status"]
        return await self._advance(run, spec, parse_time(state["startTime"]), now)

    async def _advance(self, run: Obj, spec: RunSpec, start: datetime, now: datetime) -> float | None:
        plan = await self._plan(spec, run, start)
        if plan.end is None:
            return None  # hangs: only the Job's timeout ends it
        end = start + timedelta(seconds=plan.end)
        if now < end:
            return (end - now).total_seconds()
        outcome = plan.outcome
        reason, message = outcome.reason, outcome.message
        if outcome.kind == "failed":
            # What kubelet reports of the launcher's container, as the Kubernetes runner words it: the fault behind
            # it (an Xid, a flaky rank) is the simulator's secret, and shows only in the output the engine reads.
            reason = "Error"
            message = f"a container of the workload exited with code {outcome.exit_code} ({reason})"
        patch: Obj = {"phase": SUCCEEDED if outcome.kind == "succeeded" else FAILED, "completionTime": format_time(end),
                      "exitCode": outcome.exit_code, "reason": reason, "message": message}
        # No failedNode: the engine finds the node at fault in the output, as on a cluster (engine/judging/blame.py).
        return None if await self._patch(run, patch) is not None else RETRY_SECONDS

    async def stop(self, run: Obj) -> None:
        """Mark an unfinished run Failed/Stopped (its logs stay readable up to now).

        A run that in fact ended before now (the engine had not looked yet) keeps its real end.
        """
        meta = run["metadata"]
        try:
            await self.reconcile_run(await self.store.get(WORKLOADRUN, meta["name"], meta.get("namespace")))
            current = await self.store.get(WORKLOADRUN, meta["name"], meta.get("namespace"))
        except NotFound:
            return
        if run_status(current).get("phase") in FINISHED:
            return
        await self._patch(current, stopped_status(run_status(current).get("phase"), format_time(self.clock.now())))

    async def tick(self) -> float | None:
        """Fleet-level events (timed cordons)."""
        return await self.fleet.tick()

    async def release(self, owner: Obj) -> None:
        """Nothing to delete: a simulated run makes no objects besides its WorkloadRun."""

    # ----------------------------------------------------------------------- output

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        """The launcher's log as kubelet serves it: up to now while running, up to the end once finished. Made, not
        read, so it never fails to be read: `required` changes nothing here."""
        state = run_status(run)
        if not state.get("startTime"):
            return []
        start = parse_time(state["startTime"])
        try:
            spec = RunSpec.from_run(run)
            plan = await self._plan(spec, run, start)
        except PlanError as error:
            return [f"simulator: {error}"]
        finished = state.get("phase") in FINISHED and state.get("completionTime")
        cutoff = ((parse_time(state["completionTime"]) if finished else self.clock.now()) - start).total_seconds()
        times, lines, in_order = self._output(spec, run, plan, start)
        if in_order:
            return lines[:bisect.bisect_right(times, cutoff)]
        return [line for t, line in zip(times, lines) if t <= cutoff]

    def _output(self, spec: RunSpec, run: Obj, plan: RunPlan, start: datetime) -> tuple[list[float], list[str], bool]:
        """The run's whole output (offsets, kubelet-prefixed lines, as rendered), rendered once per plan: a running
        training's log is read at every look (stall detection), and rendering it anew each time grew with the square
        of its length."""
        key = (spec.name, str(run["metadata"].get("uid") or ""), start)
        found = self._outputs.get(key)
        if found is None or found[0] is not plan:
            if len(self._outputs) >= OUTPUT_MEMO_LIMIT:
                self._outputs.pop(next(iter(self._outputs)))
            rng = random.Random(f"{self.scenario.seed}:{spec.name}:output")
            rendered = render_output(plan, start, rng, NcclFormat(self.nccl_layout, self.nccl_strip_hash))
            times = [t for t, _ in rendered]
            found = self._outputs[key] = (plan, times, [kubelet_prefix(start + timedelta(seconds=t)) + text for t, text in rendered],
                                          all(a <= b for a, b in zip(times, times[1:])))
        return found[1], found[2], found[3]

    # ----------------------------------------------------------------------- helpers

    async def _plan(self, spec: RunSpec, run: Obj, moment: datetime) -> RunPlan:
        offset = await self.fleet.offset(moment)
        key = (spec.name, run["metadata"].get("uid") or "", offset)
        if key not in self._plans:
            if len(self._plans) >= MEMO_LIMIT:
                self._plans.clear()
            self._plans[key] = plan_run(self.scenario, spec, offset, layout=self._layout)
        return self._plans[key]

    async def _patch(self, run: Obj, patch: Obj) -> Obj | None:
        """Merge-patch the run's status; None when it changed meanwhile or is gone: the caller asks for another look
        in RETRY_SECONDS (a conflict another writer caused wakes the run with its event, an injected one would not)."""
        meta = run["metadata"]
        try:
            updated = await self.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"), patch, meta.get("resourceVersion"))
        except (Conflict, NotFound):
            return None
        self._own_writes += 1
        return updated


def played_by_the_fleet(run: Obj) -> bool:
    """Whether the simulated fleet wrote this run's status, as the API server's managedFields say (its client's user agent,
    SIMULATOR_AGENT, is the field manager): a run an engine started on real pods has its status written by the engine."""
    entries = (run.get("metadata") or {}).get("managedFields") or []
    return any(isinstance(entry, dict) and entry.get("subresource") == "status"
               and str(entry.get("manager") or "").split("/")[0] == SIMULATOR_AGENT for entry in entries)


def _blocked(plan: RunPlan) -> Obj:
    """Status fields of pods that cannot be placed (empty when they can)."""
    if plan.outcome.kind != "unschedulable":
        return {}
    return {"blockedNodes": list(plan.outcome.blocked), "reason": "Unschedulable", "message": plan.outcome.message}


# --------------------------------------------------------------------------- rendering


def render_output(plan: RunPlan, start: datetime, rng: random.Random, nccl_format: NcclFormat) -> Timed:
    """The whole story of a run's log, timed: normal output up to its end, failure lines at the failure."""
    render = _RENDERERS.get(plan.spec.parser, _render_plain)
    lines = render(plan, start, rng, nccl_format)
    outcome = plan.outcome
    if outcome.kind in ("failed", "hang"):
        lines = [(t, text) for t, text in lines if t <= outcome.at]
    if outcome.kind == "failed" and plan.spec.parser != "dcgm":  # dcgmi reports its failures in its document
        lines += [(outcome.at, text) for text in _error_lines(plan, start, rng)]
    return lines


def _render_nccl(plan: RunPlan, start: datetime, rng: random.Random, nccl_format: NcclFormat) -> Timed:
    nccl = plan.nccl
    assert nccl is not None
    run = NcclRun(nccl.program, nccl.ranks, nccl.sizes, busbw=lambda size, cycle: nccl.busbw[(size, cycle)],
                  algbw=lambda size, cycle: nccl.algbw[(size, cycle)], cycles=nccl.cycles, check=nccl.check,
                  dtype=nccl.dtype, redop=nccl.redop, gpus_per_process=nccl.gpus_per_process, iters=nccl.iters, warmup=nccl.warmup)
    info = 0.02 if plan.spec.env.get("NCCL_DEBUG", "").upper() == "INFO" else 0.0
    fmt = NcclFormat(nccl_format.layout, nccl_format.strip_hash, info_noise=info)
    lines, row, moment = [], 0, plan.startup
    for raw in write_nccl_log(run, rng, fmt):
        text = raw.rstrip("\n")
        if text[:1] == " " and text.lstrip()[:1].isdigit():  # a result row: printed when its size is done
            moment, row = nccl.row_end[row], row + 1
        elif row == len(nccl.row_end):
            moment = plan.duration - 0.5  # footer
        lines.append((moment, text))
    return lines


def _render_dcgm(plan: RunPlan, start: datetime, rng: random.Random, nccl_format: NcclFormat) -> Timed:
    dcgm = plan.dcgm
    assert dcgm is not None
    outcome = plan.outcome
    moment = outcome.at if outcome.kind == "failed" else plan.duration - 1.0
    if outcome.cause == "timeout" and not dcgm.json:  # dcgmi's plain output: the error line alone
        text = DCGMI_TIMEOUT_ERROR
    elif dcgm.json:
        runtime_error = DCGMI_TIMEOUT_ERROR if outcome.cause == "timeout" else None
        text = write_dcgm_json(dcgm.gpus, dcgm.outcomes, rng, version=dcgm.version, runtime_error=runtime_error)
    else:
        text = write_dcgm_table(dcgm.gpus, dcgm.outcomes, version="3" if dcgm.version == "3" else "4")
    lines = [(moment, line) for line in text.splitlines()]
    if outcome.cause == "xid":
        # The kernel's line reaches the pod log through the privileged dcgm container; it follows the document.
        lines.append((moment, f"NVRM: Xid (PCI:0000:{_bus(outcome.gpu)}:00): {outcome.xid}, pid=<unknown>, name=<unknown>, "
                              f"{outcome.message.split(': ', 1)[-1]}"))
    return lines


def _render_training(plan: RunPlan, start: datetime, rng: random.Random, nccl_format: NcclFormat) -> Timed:
    training = plan.training
    assert training is not None
    if training.style == "megatron":
        raw = write_megatron_log(training.samples, rng, start=start, log_interval=training.log_interval,
                                 total_steps=training.total_steps, world_size=training.world_size,
                                 tensor_parallel=training.tensor_parallel, pipeline_parallel=training.pipeline_parallel,
                                 checkpoints=training.checkpoints, startup_sec=plan.startup,
                                 exit_after=training.exit_after, exit_minutes=training.exit_minutes)
    else:
        raw = write_nemo_log(training.samples, rng, start=start, total_steps=training.total_steps,
                             checkpoints=training.checkpoints, startup_sec=plan.startup)
    lines = []
    for line in raw:
        moment, text = split_kubelet_prefix(line.rstrip("\n"))
        lines.append((((moment or start) - start).total_seconds(), text))
    return lines


def _render_plain(plan: RunPlan, start: datetime, rng: random.Random, nccl_format: NcclFormat) -> Timed:
    return [(plan.startup, f"+ {plan.spec.program} {' '.join(plan.spec.args)}".rstrip()), (plan.duration - 1.0, "done")]


_RENDERERS: dict[str, Callable[[RunPlan, datetime, random.Random, NcclFormat], Timed]] = {
    "nccl": _render_nccl, "dcgm": _render_dcgm, "training": _render_training,
}


def _bus(gpu: int | None) -> str:
    return ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")[(gpu or 0) % 8]


def _error_lines(plan: RunPlan, start: datetime, rng: random.Random) -> list[str]:
    """What the failing rank and its launcher print: NCCL WARN naming the host, a CUDA or network error."""
    outcome, spec = plan.outcome, plan.spec
    host, gpu, pid = outcome.node or spec.nodes[0], outcome.gpu or 0, rng.randint(1000, 99999)
    gpus = len(plan.nccl.ranks) // len(spec.nodes) if plan.nccl else (plan.training.world_size // len(spec.nodes) if plan.training else 8)
    rank = spec.nodes.index(host) * gpus + gpu if host in spec.nodes else 0
    peer = f"10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}<{rng.randint(30000, 60000)}>"
    code, words = XID_CUDA_ERRORS.get(outcome.xid or 0, (999, "unknown error"))
    cuda = f"Cuda failure {code} '{words}'"
    network = f"NET/IB : Got completion from peer {peer} with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1"
    cause = cuda if outcome.cause == "xid" else network
    if spec.parser == "training":
        when = start + timedelta(seconds=outcome.at)
        nccl_error = (f"CUDA error: {words}" if outcome.cause == "xid"
                      else "NCCL error: remote process exited or there was a network error, NCCL version 2.27.7")
        return [
            f"{host}:{pid}:{pid + 11} [{gpu}] NCCL WARN {cause}",
            f"[rank{rank}]: torch.distributed.DistBackendError: {nccl_error}",
            f"E{when:%m%d %H:%M:%S} {pid} torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
            f"local_rank: {gpu} (pid: {pid}) of binary: /usr/bin/python",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
            "Root Cause (first observed failure):",
            f"  time      : {when:%Y-%m-%d_%H:%M:%S}",
            f"  host      : {host}",
            f"  rank      : {rank} (local_rank: {gpu})",
            f"  exitcode  : 1 (pid: {pid})",
        ]
    test_error = f"Test CUDA failure common.cu:1153 '{words}'" if outcome.cause == "xid" else \
        "Test NCCL failure common.cu:1153 'remote process exited or there was a network error'"
    lines = [f"{host}:{pid}:{pid + 7} [{gpu}] NCCL WARN {cause}", f"{host}: {test_error}", f" .. {host} pid {pid}: Test failure common.cu:1206"]
    if spec.framework == "mpi":
        lines += ["-" * 74, "mpirun detected that one or more processes exited with non-zero status, thus causing",
                  "the job to be terminated. The first process to do so was:", "",
                  f"  Process name: [[{rng.randint(1000, 65000)},1],{rank}]", f"  Exit code:    {outcome.exit_code}", "-" * 74]
    return lines


__all__ = ["SimulatedRunner", "render_output"]
