"""The simulated fleet's physics: what a WorkloadRun on some nodes measures, how long it takes, how it ends.

Pure and deterministic: (scenario, run spec, start time since the fleet epoch, seeded Random) -> RunPlan.
The runner turns a plan into WorkloadRun status and, through sim/outputs, into real tool output.

Bandwidth (GB/s of nccl-tests bus bandwidth):
- NVLink path (one node, P2P on): nvlinkBusGbps x the slowest GPU's factor x the node's link factor;
- network path: NICs x nicGbps x the worst NIC factor of the group, x rackFabricEfficiency when the group
  spans cliques. A multi-node group gets min(NVLink path, network path); a loopback with
  NCCL_P2P_DISABLE=1 gets the network path of its one node, capped by its slowest GPU (NVLink is off its path);
- per size: time = latency + size / peak algbw, busbw = algbw x 2(n-1)/n (all-reduce) or (n-1)/n.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from nvcre_tui.engine import dcgm_time
from nvcre_tui.engine.api.bodies import run_spec
from nvcre_tui.engine.sim.outputs.dcgm import LEVEL4_TESTS, GpuOutcome
from nvcre_tui.engine.sim.outputs.nccl import bus_factor
from nvcre_tui.engine.sim.outputs.training import StepSample
from nvcre_tui.engine.sim.scenario import NODE_ROOM, Fault, Scenario, build_pools
from nvcre_tui.engine.units import parse_duration, parse_max_bytes, parse_quantity

Obj = Mapping[str, Any]
FRAMEWORKS: tuple[Literal["mpi", "exec", "torch"], ...] = ("mpi", "exec", "torch")  # the order the simulator picks one in
MAX_SIZES = 4096  # a sweep longer than this is a mistake in the args, not a test
XID_TEXT = {79: "GPU has fallen off the bus", 48: "Double Bit ECC Error", 94: "Contained ECC error",
            95: "Uncontained ECC error", 74: "NVLink Error", 119: "Timeout waiting for RPC from GSP"}
# What CUDA returns to the application after each XID (cudaError_t and its text): all a pod's log can show of it.
XID_CUDA_ERRORS = {79: (999, "unknown error"), 48: (214, "uncorrectable ECC error encountered"),
                   94: (214, "uncorrectable ECC error encountered"), 95: (214, "uncorrectable ECC error encountered"),
                   74: (719, "unspecified launch failure"), 119: (999, "unknown error")}
EXIT_CODES = {"XidError": 134, "IntermittentFailure": 1}  # nccl-tests aborts on a CUDA error (SIGABRT)
DCGM_XID_TESTS = ("memory", "diagnostic")  # what a GPU lost to an XID fails in dcgmi diag


class PlanError(ValueError):
    """The run's spec cannot be simulated; the message names the field."""


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class NodeInfo:
    """What the physics needs to know about one node of the fleet."""

    gpus: int
    nics: int
    gpu_name: str
    clique: str
    allocatable: int | None = None  # GPUs a pod may request (None: all of them)
    room: Mapping[str, float] = field(default_factory=dict)  # cpu (cores) and memory (bytes) a pod may request


@dataclass(frozen=True)
class RunSpec:
    """The parts of a WorkloadRun the physics reads."""

    name: str
    nodes: tuple[str, ...]
    gpus_per_node: int | None
    framework: str  # mpi | exec | torch
    program: str  # basename of the binary or command
    args: tuple[str, ...]
    env: Mapping[str, str]
    parser: str  # nccl | dcgm | training | none
    test_type: str | None
    image: str
    config: str  # the config files' text (training script)
    requests: Mapping[str, float] = field(default_factory=dict)  # cpu (cores) and memory (bytes) each pod requests

    @classmethod
    def from_run(cls, run: Obj) -> RunSpec:
        """Read a WorkloadRun (Kubernetes JSON); PlanError names what is missing."""
        name = run["metadata"]["name"]
        spec = run_spec(run)
        nodes = tuple((spec.get("target") or {}).get("nodeNames") or ())
        if not nodes:
            raise PlanError(f"WorkloadRun {name}: spec.target.nodeNames is empty: the simulator needs the nodes to run on")
        framework = spec.get("framework") or {}
        kind = next((k for k in FRAMEWORKS if framework.get(k)), None)
        if kind is None:
            raise PlanError(f"WorkloadRun {name}: spec.framework: set one of mpi, exec or torch")
        body = framework[kind]
        command = [body["binary"]] if kind == "mpi" else list(body.get("command") or ["torchrun"])
        measurement = spec.get("measurement") or {}
        return cls(
            name=name, nodes=nodes, gpus_per_node=spec.get("gpusPerNode"), framework=kind,
            program=command[0].rsplit("/", 1)[-1], args=tuple(str(a) for a in command[1:] + list(body.get("args") or [])),
            env={e["name"]: str(e.get("value", "")) for e in spec.get("env") or []},
            parser=measurement.get("parser") or "none", test_type=measurement.get("testType"),
            image=str(spec.get("image", "")), config="\n".join(str(v) for v in (spec.get("config") or {}).values()),
            requests=_requests(spec.get("resources") or {}),
        )


def _requests(resources: Mapping[str, Any]) -> dict[str, float]:
    """The cpu and memory a pod of the run requests (a limit alone stands for its request, as the API server sets it)."""
    asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: float(parse_quantity(asked[name])) for name in NODE_ROOM if asked.get(name) is not None}


def fleet_layout(scenario: Scenario) -> dict[str, NodeInfo]:
    """Every node of the scenario with its GPUs, NICs and clique (as build_nodes labels them)."""
    layout = {}
    for pool, names in zip(scenario.nodes, build_pools(scenario), strict=True):
        per_clique = -(-pool.count // pool.cliques)
        for position, name in enumerate(names):
            room = {"cpu": pool.allocatable_cpu or NODE_ROOM["cpu"], "memory": pool.allocatable_memory or NODE_ROOM["memory"]}
            layout[name] = NodeInfo(pool.gpus_per_node, pool.nics_per_node, pool.gpu_product.replace("-", " "),
                                    f"{pool.clique_prefix}{position // per_clique}", pool.allocatable_gpus,
                                    {resource: float(parse_quantity(amount)) for resource, amount in room.items()})
    return layout


def node_info(layout: Mapping[str, NodeInfo], name: str) -> NodeInfo:
    """A node's figures; a node the scenario does not describe (added by hand) is taken as the first one."""
    return layout.get(name) or next(iter(layout.values()))


def _noise(rng: random.Random, sigma: float) -> float:
    """A multiplicative gaussian factor, clipped at 4 sigma so no draw is absurd."""
    return min(max(rng.gauss(1.0, sigma), 1 - 4 * sigma), 1 + 4 * sigma)


def run_rng(scenario: Scenario, run_name: str, purpose: str = "physics") -> random.Random:
    """The Random of one run: seeded from (scenario seed, run name, purpose), so a replay draws the same."""
    return random.Random(f"{scenario.seed}:{run_name}:{purpose}")


def fault_time(fault: Fault) -> float | None:
    """Seconds since the fleet epoch at which the fault begins; None: from the start."""
    return None if fault.at is None else parse_duration(fault.at)


def faults_in_effect(scenario: Scenario, nodes: Sequence[str], offset: float) -> list[Fault]:
    """Faults on these nodes that have begun by `offset` (xid faults are returned whatever their time)."""
    members = set(nodes)
    return [f for f in scenario.faults if (f.node in members or f.type == "degraded-fabric")
            and (f.type == "xid" or (fault_time(f) or 0.0) <= offset)]


def fabric_hits(fault: Fault, cliques: set[str]) -> bool:
    """Whether a run over these cliques crosses a degraded-fabric fault: it spans both of a pair, or it leaves the
    one clique named."""
    named = set(fault.cliques or ())
    if len(named) == 2:
        return named <= cliques
    return bool(named & cliques) and len(cliques) >= 2


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class Outcome:
    """How a run ends: `at` seconds after its start (hang: when it stops printing)."""

    kind: Literal["succeeded", "failed", "hang", "unschedulable"]
    at: float = 0.0
    node: str | None = None
    gpu: int | None = None
    reason: str = ""
    message: str = ""
    exit_code: int | None = None
    cause: str = ""  # the fault type behind a failure: xid | flaky | hang | timeout (a hang dcgmi's --timeout stopped)
    xid: int | None = None
    blocked: tuple[str, ...] = ()


@dataclass(frozen=True)
class NcclPlan:
    """One nccl-tests invocation: placement, sweep and the out-of-place numbers of every row."""

    program: str
    ranks: tuple[tuple[str, int, str], ...]
    sizes: tuple[int, ...]
    cycles: int
    iters: int
    warmup: int
    dtype: str
    redop: str | None
    gpus_per_process: int
    check: bool
    busbw: Mapping[tuple[int, int], float]  # (size, cycle) -> GB/s
    algbw: Mapping[tuple[int, int], float]
    row_end: tuple[float, ...]  # seconds after start each row is printed, cycle-major
    peak_gbps: float  # the model's plateau before the size curve and noise
    path: str  # nvlink | network | loopback
    limiter: str | None  # the node that sets the peak

    @property
    def measured_busbw(self) -> float:
        """What the parser reports: max over sizes of the mean over cycles."""
        return max(sum(self.busbw[(s, c)] for c in range(self.cycles)) / self.cycles for s in self.sizes)


@dataclass(frozen=True)
class DcgmPlan:
    """A `dcgmi diag` run on one node: per (test, GPU) outcomes and the output form."""

    node: str
    gpus: tuple[int, ...]
    outcomes: Mapping[tuple[str, int], GpuOutcome]
    version: str  # "3" | "4" | "hybrid"
    json: bool


@dataclass(frozen=True)
class TrainingPlan:
    """A training run: one sample per logged line (Megatron: every log_interval steps)."""

    style: str  # megatron | nemo
    samples: tuple[StepSample, ...]
    log_interval: int
    total_steps: int
    world_size: int
    tensor_parallel: int
    pipeline_parallel: int
    checkpoints: Mapping[int, float]
    exit_after: float | None = None  # seconds from the last logged line to Megatron's --exit-duration-in-mins stop
    exit_minutes: float | None = None  # the training time it then prints ("exiting program after ... minutes")


@dataclass(frozen=True)
class RunPlan:
    """Everything the simulator will show for one run."""

    spec: RunSpec
    start_offset: float  # seconds since the fleet epoch
    startup: float
    duration: float  # whole seconds a healthy run takes, start to last line
    outcome: Outcome
    nccl: NcclPlan | None = None
    dcgm: DcgmPlan | None = None
    training: TrainingPlan | None = None

    @property
    def end(self) -> float | None:
        """Seconds after start when the run finishes; None when it never does."""
        return None if self.outcome.kind in ("hang", "unschedulable") else self.outcome.at


# --------------------------------------------------------------------------- bandwidth


def _factor(faults: Sequence[Fault], kind: str, node: str) -> float:
    return min((f.factor for f in faults if f.type == kind and f.node == node), default=1.0)


def nccl_peak(scenario: Scenario, layout: Mapping[str, NodeInfo], nodes: Sequence[str], faults: Sequence[Fault],
              network: bool) -> tuple[float, str | None]:
    """(peak busbw GB/s, the node that limits it) for a group; `network` (P2P disabled) takes NVLink off the path."""
    phys = scenario.physics
    # A slow GPU caps every path; a degraded NVLink only the paths that cross it.
    nvlink = {n: phys.nvlink_bus_gbps * _factor(faults, "slow-gpu", n) * (1.0 if network else _factor(faults, "degraded-link", n))
              for n in nodes}
    if len(nodes) == 1 and not network:
        return nvlink[nodes[0]], nodes[0]
    info = {n: node_info(layout, n) for n in nodes}
    cliques = {info[n].clique for n in nodes}
    fabric = phys.rack_fabric_efficiency if len(cliques) > 1 else 1.0
    fabric *= min((f.factor for f in faults if f.type == "degraded-fabric" and fabric_hits(f, cliques)), default=1.0)
    nic = {n: (info[n].nics * phys.nic_gbps if info[n].nics else phys.socket_gbps) * _factor(faults, "degraded-nic", n) * fabric
           for n in nodes}
    # The slowest GPU and the worst NIC both cap the ring; report whichever binds.
    candidates = [(nvlink[n], n) for n in nodes] + [(nic[n], n) for n in nodes]
    return min(candidates)


def _bytes(text: str, flag: str) -> int:
    try:
        return parse_max_bytes(text.upper())  # nccl-tests reads 1g as 1G
    except ValueError:
        raise ValueError(f"{flag} {text!r} is not a byte size (e.g. 8, 1M, 16G)") from None


def _integer(text: str, flag: str) -> int:
    if not text.isdigit():
        raise ValueError(f"{flag} {text!r} is not a whole number")
    return int(text)


def _sweep(args: Sequence[str], name: str) -> tuple[list[int], dict[str, str], dict[str, int]]:
    """The message sizes of an nccl-tests sweep (-b -e -f / -i), its flags, and the integer ones."""
    flags = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("-")}
    try:
        low, high, step = (_bytes(flags.get(k, d), k) for k, d in (("-b", "32M"), ("-e", "32M"), ("-i", "1M")))
        numbers = {k: _integer(flags.get(k, d), k) for k, d in (("-f", "1"), ("-g", "1"), ("-t", "1"), ("-N", "1"), ("-n", "20"), ("-w", "5"))}
    except ValueError as error:
        raise PlanError(f"WorkloadRun {name}: nccl-tests args: {error}") from None
    sizes: list[int] = []
    size, factor = low, numbers["-f"]
    while size <= high and len(sizes) <= MAX_SIZES:
        sizes.append(size)
        size = max(size, 1) * factor if factor > 1 else size + max(step, 1)
    if not sizes or len(sizes) > MAX_SIZES:
        raise PlanError(f"WorkloadRun {name}: nccl-tests args -b/-e/-f/-i sweep {'no' if not sizes else f'more than {MAX_SIZES}'} sizes")
    return sizes, flags, numbers


def plan_nccl(scenario: Scenario, layout: Mapping[str, NodeInfo], spec: RunSpec, faults: Sequence[Fault],
              rng: random.Random) -> tuple[NcclPlan, float]:
    """The nccl-tests numbers and the healthy duration (seconds after start of the last row)."""
    phys = scenario.physics
    sizes, flags, numbers = _sweep(spec.args, spec.name)
    gpus = spec.gpus_per_node or node_info(layout, spec.nodes[0]).gpus
    collective = (spec.test_type or spec.program).removeprefix("loopback_")
    program = spec.program if spec.program.endswith(("_perf", "_perf_mpi")) else f"{collective.split('_perf')[0]}_perf"
    network = spec.env.get("NCCL_P2P_DISABLE") == "1"
    peak, limiter = nccl_peak(scenario, layout, spec.nodes, faults, network)
    path = "nvlink" if len(spec.nodes) == 1 and not network else "loopback" if len(spec.nodes) == 1 else "network"
    ranks = tuple((node, device, node_info(layout, node).gpu_name) for node in spec.nodes for device in range(gpus))
    factor = bus_factor(program, len(ranks))
    latency = (phys.nvlink_latency_us if path == "nvlink" else phys.network_latency_us) * 1e-6
    peak_alg = peak / factor if factor > 0 else peak
    cycles, iters, warmup = max(numbers["-N"], 1), max(numbers["-n"], 1), max(numbers["-w"], 0)
    busbw, algbw, row_end = {}, {}, []
    clock = phys.startup_sec + warmup * (latency + max(sizes) / (peak_alg * 1e9))
    for cycle in range(cycles):
        for size in sizes:
            alg = size / 1e9 / (latency + size / (peak_alg * 1e9)) * _noise(rng, phys.noise)
            algbw[(size, cycle)], busbw[(size, cycle)] = alg, alg * factor
            clock += 2 * iters * size / 1e9 / alg  # out-of-place and in-place
            row_end.append(clock)
    plan = NcclPlan(program, ranks, tuple(sizes), cycles, iters, warmup, flags.get("-d", "float"),
                    "sum" if "reduce" in program else None, numbers["-g"] * numbers["-t"], flags.get("-c", "1") != "0",
                    busbw, algbw, tuple(row_end), peak, path, limiter)
    return plan, clock + 1.0


# --------------------------------------------------------------------------- dcgm and training


def plan_dcgm(scenario: Scenario, layout: Mapping[str, NodeInfo], spec: RunSpec) -> tuple[DcgmPlan, float]:
    """A healthy dcgmi diag run (faults set outcomes later) and its duration: dcgm_time's phases of its --run level
    with its -p test durations (the table planning's least timeoutPerJob reads), unless the scenario sets its own."""
    node = spec.nodes[0]
    gpus = spec.gpus_per_node or node_info(layout, node).gpus
    base = scenario.physics.dcgm_base_sec
    runs = (base + sum(_seconds(a.split("=", 1)[1]) for a in spec.args if ".test_duration=" in a) if base is not None
            else dcgm_time.run_seconds(spec.args))
    tag = spec.image.rsplit(":", 1)[-1]
    version = "3" if tag.startswith("3.") else "hybrid" if tag.startswith("4.2") else "4"
    json_output = any(a in ("-j", "--json") for a in spec.args)
    plan = DcgmPlan(node, tuple(range(gpus)), {}, version, json_output)
    return plan, scenario.physics.startup_sec + runs


def _seconds(text: str) -> float:
    """dcgmi takes test durations in seconds ("1200"); a Go duration ("1200s") is read too; junk counts 0."""
    if text.isdigit():
        return float(text)
    try:
        return parse_duration(text)
    except ValueError:
        return 0.0


MEGATRON_LOG_INTERVAL = 10  # the catalog's --log-interval (catalog/_lib/megatron-pretrain.yaml)
UNLIMITED_STEPS = 1_000_000_000  # what the catalog's train.sh passes as --train-iters for maxSteps -1


def plan_training(scenario: Scenario, layout: Mapping[str, NodeInfo], spec: RunSpec, faults: Sequence[Fault],
                  rng: random.Random) -> tuple[TrainingPlan, float]:
    """Step time slowed by the slowest GPU (compute) and the group's bandwidth (communication)."""
    phys = scenario.physics
    env = spec.env
    gpus = spec.gpus_per_node or node_info(layout, spec.nodes[0]).gpus
    try:
        total = int(env.get("TRAIN_ITERS", "50"))
        exit_seconds = float(env.get("EXIT_DURATION_MINS", "0") or 0) * 60.0
        save = int(env.get("SAVE_INTERVAL", "0") or 0)
        tp, pp = int(env.get("TENSOR_PARALLELISM", "1")), int(env.get("PIPELINE_PARALLELISM", "1"))
    except ValueError as error:
        raise PlanError(f"WorkloadRun {spec.name}: env: {error}") from None
    style = "nemo" if "nemo" in (spec.config + spec.image).lower() and "pretrain_gpt" not in spec.config else "megatron"
    if style == "megatron":
        return _plan_megatron(scenario, layout, spec, faults, rng, total, exit_seconds, save, tp, pp, gpus)
    step = _step_seconds(scenario, layout, spec, faults)
    samples, clock, checkpoints = [], phys.startup_sec, {}
    for number in range(max(total, 1)):  # NeMo 2 logs every step
        seconds = step * (phys.training_warmup_factor if number == 0 else 1.0) * _noise(rng, phys.noise)
        samples.append(StepSample(seconds, phys.tflops_per_gpu * phys.step_time_sec / seconds, _loss(rng, number)))
        clock += seconds
        if save and number and number % save == 0:
            checkpoints[number] = round(rng.uniform(8.0, 20.0), 3)
            clock += checkpoints[number]
    return TrainingPlan(style, tuple(samples), 1, total, gpus * len(spec.nodes), tp, pp, checkpoints), clock + 1.0


def _step_seconds(scenario: Scenario, layout: Mapping[str, NodeInfo], spec: RunSpec, faults: Sequence[Fault]) -> float:
    """One step: slowed by the slowest GPU (compute) and the group's bandwidth (communication)."""
    phys = scenario.physics
    slowest = min((_factor(faults, "slow-gpu", n) for n in spec.nodes), default=1.0)
    healthy, _ = nccl_peak(scenario, layout, spec.nodes, [], False)
    actual, _ = nccl_peak(scenario, layout, spec.nodes, faults, False)
    share = phys.training_comm_share
    return phys.step_time_sec * ((1 - share) / slowest + share * healthy / actual)


def _loss(rng: random.Random, step: int) -> float:
    return 2.1 + 9.7 * math.exp(-step / 150) + rng.gauss(0, 0.02)


def _plan_megatron(scenario: Scenario, layout: Mapping[str, NodeInfo], spec: RunSpec, faults: Sequence[Fault], rng: random.Random,
                   total: int, exit_seconds: float, save: int, tp: int, pp: int, gpus: int) -> tuple[TrainingPlan, float]:
    """Megatron's `pretrain_gpt.py` as the catalog runs it: a line every MEGATRON_LOG_INTERVAL steps up to --train-iters
    (none below it), and a stop of its own once --exit-duration-in-mins of run time (startup included) has passed,
    checked after every step. --train-iters -1 (maxSteps -1) is the catalog's "no step limit": the duration ends it."""
    phys, interval = scenario.physics, MEGATRON_LOG_INTERVAL
    if total < 0:
        if exit_seconds <= 0:
            raise PlanError(f"WorkloadRun {spec.name}: TRAIN_ITERS {total} (no step limit) needs EXIT_DURATION_MINS to end the run")
        total = UNLIMITED_STEPS
    step = _step_seconds(scenario, layout, spec, faults)
    samples, clock, checkpoints = [], phys.startup_sec, {}
    exit_after = None
    for index, number in enumerate(range(interval, total + 1, interval)):
        if exit_seconds > 0 and clock > exit_seconds:  # a checkpoint save ran past the limit: the check after it stops the run
            exit_after = 0.0
            break
        seconds = step * (phys.training_warmup_factor if index == 0 else 1.0) * _noise(rng, phys.noise)
        steps_left = math.ceil((exit_seconds - clock) / seconds) if exit_seconds > 0 else interval + 1
        if steps_left < interval:  # the step that passes the limit ends the run before the next line is logged
            exit_after = seconds * max(steps_left, 1)
            break
        samples.append(StepSample(seconds, phys.tflops_per_gpu * phys.step_time_sec / seconds, _loss(rng, number)))
        clock += seconds * interval
        if save and number % save == 0:
            checkpoints[number] = round(rng.uniform(8.0, 20.0), 3)
            clock += checkpoints[number]
        if steps_left == interval:  # the limit passed during the logged step itself: its line is out, then the run stops
            exit_after = 0.0
            break
    exit_minutes = None if exit_after is None else (clock + exit_after) / 60.0
    plan = TrainingPlan("megatron", tuple(samples), interval, total, gpus * len(spec.nodes), tp, pp, checkpoints,
                        exit_after, exit_minutes)
    return plan, clock + (exit_after or 0.0) + 1.0


# --------------------------------------------------------------------------- faults -> outcome


def _xid_events(faults: Sequence[Fault], start: float, duration: float, early: float) -> list[tuple[float, Fault]]:
    """(seconds after start, fault) of XIDs that hit this run: during it, or before it (the GPU is gone)."""
    events = []
    for fault in (f for f in faults if f.type == "xid"):
        at = fault_time(fault)
        if at is None or at <= start:
            events.append((min(early, duration), fault))
        elif at < start + duration:
            events.append((at - start, fault))
    return events


def plan_outcome(scenario: Scenario, spec: RunSpec, faults: Sequence[Fault], start: float, duration: float,
                 layout: Mapping[str, NodeInfo] | None = None) -> Outcome:
    """The first thing that ends the run: pods no node can take, an XID, a flaky failure, a hang; else success at
    `duration`. A node allocating fewer GPUs than a pod asks (`allocatableGpus`, as discovery keeps a 0) never takes
    it, as the scheduler would not place it."""
    blocked = tuple(sorted({f.node for f in faults if f.type == "unschedulable"}))
    if blocked:
        return Outcome("unschedulable", blocked=blocked, reason="Unschedulable",
                       message=f"pods for {', '.join(blocked)} pending: Insufficient nvidia.com/gpu (held by other pods)")
    wanted = spec.gpus_per_node or 1
    short = tuple(sorted(name for name in spec.nodes if layout is not None and name in layout
                         and (allocatable := layout[name].allocatable) is not None and allocatable < wanted))
    if short:
        return Outcome("unschedulable", blocked=short, reason="Unschedulable",
                       message=f"pods for {', '.join(short)} pending: Insufficient nvidia.com/gpu (the node allocates fewer than {wanted})")
    cramped = {name: [resource for resource, amount in spec.requests.items() if amount > layout[name].room.get(resource, math.inf)]
               for name in spec.nodes if layout is not None and name in layout}
    if blocked := tuple(sorted(name for name, resources in cramped.items() if resources)):
        scarce = sorted({resource for name in blocked for resource in cramped[name]})
        return Outcome("unschedulable", blocked=blocked, reason="Unschedulable",
                       message=f"pods for {', '.join(blocked)} pending: Insufficient {' and '.join(scarce)} (the node allocates less than a pod requests)")
    early = scenario.physics.startup_sec + 3.0
    events: list[tuple[float, str, Fault]] = [(t, "xid", f) for t, f in _xid_events(faults, start, duration, early)]
    for fault in faults:
        draw = run_rng(scenario, spec.name, f"{fault.type}:{fault.node}")
        if fault.type == "flaky" and draw.random() < (0.5 if fault.probability is None else fault.probability):
            events.append((draw.uniform(0.25, 0.9) * duration, "flaky", fault))
        elif fault.type == "hang":
            events.append((draw.uniform(0.3, 0.8) * duration, "hang", fault))
    if not events:
        return Outcome("succeeded", at=float(math.ceil(duration)), exit_code=0, reason="Completed", message="workload completed")
    at, cause, fault = min(events, key=lambda e: (e[0], e[2].node))
    if cause == "hang":
        return Outcome("hang", at=at, node=fault.node, cause="hang", message=f"no progress on {fault.node}")
    gpu = fault.gpu if fault.gpu is not None else 0
    reason = "XidError" if cause == "xid" else "IntermittentFailure"
    message = (f"Xid {fault.xid} on {fault.node} GPU {gpu}: {XID_TEXT.get(fault.xid, 'GPU error')}" if cause == "xid"
               else f"rank on {fault.node} failed: remote process exited or there was a network error")
    exit_code = 1 if spec.parser != "nccl" else EXIT_CODES[reason]
    return Outcome("failed", at=float(math.ceil(at)), node=fault.node, gpu=gpu, reason=reason, message=message,
                   exit_code=exit_code, cause=cause, xid=fault.xid if cause == "xid" else None)


DCGMI_TIMEOUT_ERROR = "Error: Unable to complete diagnostic. Return: (-11) : Timeout\n"  # dcgmi 4.x's text


def _dcgmi_timeout(spec: RunSpec, outcome: Outcome, startup: float) -> Outcome:
    """A hung diagnostic that dcgmi's own `--timeout N` stops: N seconds after dcgmi starts it fails with a runtime
    error (the host engine stops the diagnostic), as the real one does, instead of running until the Job's timeout."""
    args = list(spec.args)
    if outcome.kind != "hang" or spec.program != "dcgmi" or "--timeout" not in args[:-1]:
        return outcome
    seconds = args[args.index("--timeout") + 1]
    if not seconds.isdigit() or int(seconds) == 0:  # dcgmi's 0: no timeout
        return outcome
    return Outcome("failed", at=float(math.ceil(startup + int(seconds))), node=outcome.node, reason="DcgmTimeout",
                   message=f"dcgmi diag stopped the diagnostic on {outcome.node} after its --timeout of {seconds} s",
                   exit_code=1, cause="timeout")


def _dcgm_skips(plan: DcgmPlan, faults: Sequence[Fault]) -> DcgmPlan:
    """A diag-skipped fault on the node: every test but the software checks is skipped on every GPU."""
    if not any(f.type == "diag-skipped" and f.node == plan.node for f in faults):
        return plan
    skipped = {(test, gpu): GpuOutcome("Skip") for _, test in LEVEL4_TESTS if test != "software" for gpu in plan.gpus}
    return DcgmPlan(plan.node, plan.gpus, {**skipped, **plan.outcomes}, plan.version, plan.json)


def _dcgm_outcomes(plan: DcgmPlan, outcome: Outcome) -> DcgmPlan:
    """Failing tests on the faulted GPU: XID fails memory and diagnostic, a flaky node fails pcie."""
    if outcome.kind != "failed" or outcome.gpu is None:
        return plan
    if outcome.cause == "xid":
        warning = f"Xid {outcome.xid} ({XID_TEXT.get(outcome.xid or 0, 'GPU error')}) detected; the GPU is not accessible"
        failed = {(test, outcome.gpu): GpuOutcome("Fail", warning, 95) for test in DCGM_XID_TESTS}
    else:
        failed = {("pcie", outcome.gpu): GpuOutcome("Fail", f"GPU {outcome.gpu} PCIe replay rate exceeded the limit", 26)}
    return DcgmPlan(plan.node, plan.gpus, {**plan.outcomes, **failed}, plan.version, plan.json)


def _draw_purpose(fault: Fault) -> str:
    """The seed part of one fault's draw in one run: its own, so adding a fault changes no other fault's draws."""
    if fault.type == "degraded-fabric":
        return f"fabric:{','.join(fault.cliques or ())}"
    return f"{fault.type}:{fault.node}:{fault.gpu}"


def plan_run(scenario: Scenario, spec: RunSpec, start_offset: float, *, layout: Mapping[str, NodeInfo] | None = None,
             faults: Sequence[Fault] | None = None, rng: random.Random | None = None) -> RunPlan:
    """The plan of one run starting `start_offset` seconds after the fleet epoch (PlanError: bad spec)."""
    layout = layout or fleet_layout(scenario)
    faults = faults_in_effect(scenario, spec.nodes, start_offset) if faults is None else faults
    # A fault with a probability acts on a run only when this run's draw says so (a flaky node draws per failure,
    # in plan_outcome): "persistent unless probability is given", for every fault a run meets.
    faults = [f for f in faults if f.type == "flaky" or f.probability is None
              or run_rng(scenario, spec.name, _draw_purpose(f)).random() < f.probability]
    rng = rng or run_rng(scenario, spec.name)
    nccl = dcgm = training = None
    if spec.parser == "nccl":
        nccl, duration = plan_nccl(scenario, layout, spec, faults, rng)
    elif spec.parser == "dcgm":
        dcgm, duration = plan_dcgm(scenario, layout, spec)
    elif spec.parser == "training":
        training, duration = plan_training(scenario, layout, spec, faults, rng)
    else:
        duration = scenario.physics.startup_sec + 60.0
    duration = float(math.ceil(duration))
    outcome = plan_outcome(scenario, spec, faults, start_offset, duration, layout)
    if dcgm is not None:
        outcome = _dcgmi_timeout(spec, outcome, scenario.physics.startup_sec)
        dcgm = _dcgm_outcomes(_dcgm_skips(dcgm, faults), outcome)
    return RunPlan(spec, start_offset, scenario.physics.startup_sec, duration, outcome, nccl, dcgm, training)


__all__ = [
    "DCGMI_TIMEOUT_ERROR", "DcgmPlan", "NcclPlan", "NodeInfo", "Outcome", "PlanError", "RunPlan", "RunSpec", "TrainingPlan",
    "fabric_hits", "fault_time", "faults_in_effect", "fleet_layout", "nccl_peak", "node_info", "plan_outcome", "plan_run", "run_rng",
]
