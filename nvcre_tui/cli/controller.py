"""`nvcre controller`: the engine headless, for an in-cluster Deployment, serving Prometheus metrics.

Only one engine reconciles at a time: the command queues for the `nvcre-engine` Lease, runs the engine
while it holds it, and exits (code 1) when it loses it, so the Deployment restarts it into the queue.
SIGTERM stops the engine and releases the Lease.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys

from nvcre_tui.cli.kubeflags import add_kube_arguments, check_namespace, load_kube_target
from nvcre_tui.engine.errors import InputError

USER_AGENT = "nvcre-engine"
SIM_USER_AGENT = "nvcre-sim"


def register(groups: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `controller`."""
    parser = groups.add_parser(
        "controller", help="run the engine headless (in-cluster Deployment), with Prometheus metrics",
        description="Reconcile certifications on the cluster while holding the nvcre-engine Lease; "
                    "serve Prometheus metrics on --metrics-port.")
    parser.add_argument("--metrics-port", type=int, default=9090, metavar="PORT",
                        help="port of /metrics (default 9090; 0 turns metrics off)")
    parser.add_argument("--metrics-addr", default="0.0.0.0", metavar="ADDR", help="address of /metrics")
    parser.add_argument("--identity", metavar="ID",
                        help="lease holder identity (default: $POD_NAME, else controller@host/pid)")
    parser.add_argument("--lease-namespace", default=None, metavar="NS",
                        help="namespace of the nvcre-engine Lease (default: nvcre-system)")
    parser.add_argument("--lease-duration", type=float, default=15.0, metavar="SECONDS",
                        help="how long the Lease outlives a silent holder (default 15)")
    parser.add_argument("--sim-runner", action="store_true",
                        help="play the workloads with the simulated fleet (registers its Nodes when absent)")
    parser.add_argument("--scenario", metavar="S.yaml", help="with --sim-runner: the simulated fleet")
    add_kube_arguments(parser)
    parser.set_defaults(func=controller_command)


def _check(args: argparse.Namespace) -> None:
    if not 0 <= args.metrics_port <= 65535:
        raise InputError(f"--metrics-port: must be 0..65535, got {args.metrics_port}")
    if not args.lease_duration > 0:
        raise InputError(f"--lease-duration: must be > 0 seconds, got {args.lease_duration:g}")
    if args.scenario and not args.sim_runner:
        raise InputError("--scenario: only with --sim-runner")
    if not args.sim_runner:
        raise InputError("nvcre controller: real workloads are not run on the cluster yet (issue 8 part 2); "
                         "pass --sim-runner to play them with the simulated fleet")
    check_namespace(args.lease_namespace, "--lease-namespace")


def controller_command(args: argparse.Namespace) -> int:
    """Run until the Lease is lost (1) or SIGTERM/SIGINT (0)."""
    _check(args)
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    assert main is not None
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on this platform / thread
            loop.add_signal_handler(signum, main.cancel)
    try:
        return await controller(args)
    except asyncio.CancelledError:
        return 0


def _log(message: str) -> None:
    print(f"nvcre controller: {message}", file=sys.stderr, flush=True)


async def controller(args: argparse.Namespace) -> int:
    """Wire the stores, the runner, the engine, the Lease and the metrics; run the loop."""
    from nvcre_tui.engine.catalog import default_catalog
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.controller import ControllerLoop
    from nvcre_tui.engine.engine import Engine
    from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
    from nvcre_tui.engine.lease import EngineLease, engine_identity
    from nvcre_tui.engine.metrics import EngineMetrics
    from nvcre_tui.engine.runners.simulated import SimulatedRunner
    from nvcre_tui.engine.sim.fleet import FleetError, SimulatedFleet
    from nvcre_tui.engine.sim.scenario import default_scenario, load_scenario
    from nvcre_tui.engine.store.errors import Forbidden, StoreError
    from nvcre_tui.engine.store.kube import KubeStore

    clock = SystemClock()
    target = await load_kube_target(args)
    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    store = KubeStore(target, clock, user_agent=USER_AGENT)
    sim_store = KubeStore(target, clock, user_agent=SIM_USER_AGENT)  # the simulator plays the cluster: its own client
    metrics = EngineMetrics()
    try:
        fleet = SimulatedFleet(sim_store, clock, scenario)
        await fleet.ensure_nodes()
        engine = Engine(store, clock, default_catalog(), SimulatedRunner(sim_store, clock, scenario, fleet), metrics=metrics)
        identity = args.identity or os.environ.get("POD_NAME") or engine_identity("controller")
        lease = EngineLease(store, clock, args.lease_namespace or INSTALL_NAMESPACE, identity, args.lease_duration)
        if args.metrics_port:
            port = metrics.serve(args.metrics_port, args.metrics_addr)
            _log(f"metrics on http://{args.metrics_addr}:{port}/metrics")
        _log(f"cluster {target.server} ({target.source})")
        return await ControllerLoop(engine, store, lease, metrics, clock, log=_log).run()
    except Forbidden as error:  # the simulator writes Nodes, which the nvcre-engine ServiceAccount may not
        _log(f"{' '.join(error.message.split())} (the simulated fleet registers and cordons Nodes: install with "
             "`nvcre setup init --sim-runner`, or run with a kubeconfig allowed to)")
        return 1
    except FleetError as error:
        _log(" ".join(str(error).split()))
        return 1
    except StoreError as error:  # e.g. not installed: the namespace or the CRDs are missing
        _log(f"{' '.join(error.message.split())} (is nvcre installed? nvcre setup status)")
        return 1
    finally:
        metrics.stop()
        await sim_store.close()
        await store.close()
