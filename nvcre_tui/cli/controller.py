"""`nvcre controller`: the engine headless, for an in-cluster Deployment, serving Prometheus metrics.

Only one engine reconciles at a time: the command queues for the `nvcre-engine` Lease, runs the engine
while it holds it, and exits (code 1) when it loses it, so the Deployment restarts it into the queue.
It exits 2 once its CRDs are given another nvcre's schema while it runs (KubeSession.guard_schema), or once nvcre was
uninstalled under it (`setup reset`: the Lease lost with its namespace, the CRDs gone, or, as the engine's
ServiceAccount, its RBAC gone with them).
SIGTERM stops the engine and releases the Lease.

Workloads are real pods (the Kubernetes runner: Kubeflow Trainer TrainJobs, or batch/v1 Jobs without the
Trainer); `--sim-runner` plays them with the simulated fleet instead. The engine is assembled by
KubeSession, as for the console and `run --wait` on a cluster; only the Lease is this command's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import os
import signal
from typing import TYPE_CHECKING

from nvcre_tui.cli.kubeflags import add_kube_arguments, check_namespace, load_kube_target
from nvcre_tui.cli.numbers import integer
from nvcre_tui.cli.oneline import say
from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.errors import InputError

if TYPE_CHECKING:
    from nvcre_tui.engine.kube.config import KubeTarget
    from nvcre_tui.engine.metrics import EngineMetrics


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `controller`."""
    parser = groups.add_parser(
        "controller", help="run the engine headless (in-cluster Deployment), with Prometheus metrics",
        description="Reconcile certifications on the cluster while holding the nvcre-engine Lease; "
                    "serve Prometheus metrics on --metrics-port.")
    parser.add_argument("--metrics-port", type=integer, default=9090, metavar="PORT",
                        help="port of /metrics (default 9090; 0 turns metrics off)")
    parser.add_argument("--metrics-addr", default="0.0.0.0", metavar="ADDR", help="address of /metrics")
    parser.add_argument("--identity", metavar="ID",
                        help="lease holder identity, printable text (default: $POD_NAME, else controller@host/pid)")
    parser.add_argument("--install-namespace", "--lease-namespace", dest="install_namespace", default=None, metavar="NS",
                        help="where `setup init` installed nvcre, and so the nvcre-engine Lease (default: nvcre-system; "
                             "--lease-namespace is its former name)")
    parser.add_argument("--lease-duration", type=float, default=15.0, metavar="SECONDS",
                        help="how long the Lease outlives a silent holder (3 to 3600; default 15)")
    parser.add_argument("--sim-runner", action="store_true",
                        help="play the workloads with the simulated fleet (registers its Nodes when absent) "
                             "instead of running real pods")
    parser.add_argument("--scenario", metavar="S.yaml", help="with --sim-runner: the simulated fleet")
    add_kube_arguments(parser)
    parser.set_defaults(func=controller_command)


MAX_LEASE_SECONDS = 3600.0  # a holder that went silent blocks the next engine this long at most
# The holder renews every third of the duration and gives up after two thirds: at 3 s a renewal a second, a
# deadline of 2 s. Shorter would flood the API server with renewals, under the whole seconds the Lease stores.
MIN_LEASE_SECONDS = 3.0


def _check_identity(identity: str | None, where: str) -> None:
    """The holder identity is shown on other users' terminals: printable text on one line."""
    if identity is not None and (not identity or not identity.isprintable()):
        raise InputError(f"{where}: the lease holder identity must be printable text on one line (no control "
                         f"characters or line breaks), got {identity!r}")


def _check_metrics_addr(addr: str) -> None:
    """An IP address, or a host name the resolver can be asked for: binding encodes a name as IDNA, whose
    UnicodeError (an empty or 64-character label, bytes that are no UTF-8) was an internal error, exit 70."""
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(addr)
        return
    try:
        addr.encode("idna")
    except UnicodeError:
        raise InputError(f"--metrics-addr: not an IP address or host name (labels of 1 to 63 letters, digits and '-', "
                         f"dot-separated), got {addr!r:.80}") from None


def _check(args: argparse.Namespace) -> None:
    if not 0 <= args.metrics_port <= 65535:
        raise InputError(f"--metrics-port: must be 0..65535, got {args.metrics_port}")
    _check_metrics_addr(args.metrics_addr)
    if not MIN_LEASE_SECONDS <= args.lease_duration <= MAX_LEASE_SECONDS:  # also NaN and inf (the Lease holds whole seconds, int32)
        raise InputError(f"--lease-duration: must be {MIN_LEASE_SECONDS:g} to {MAX_LEASE_SECONDS:g} seconds (an hour), "
                         f"got {args.lease_duration:g}")
    _check_identity(args.identity, "--identity")
    if args.identity is None:
        _check_identity(os.environ.get("POD_NAME") or None, "$POD_NAME")
    if args.scenario and not args.sim_runner:
        raise InputError("--scenario: only with --sim-runner")
    check_namespace(args.install_namespace, "--install-namespace")


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
    say(f"nvcre controller: {message}")


def _serve_metrics(metrics: EngineMetrics, port: int, addr: str) -> int:
    """Serve /metrics; the bound port. InputError naming the flags when it cannot be bound."""
    try:
        return metrics.serve(port, addr)
    except OSError as error:  # the port in use or privileged, no such address (socket.gaierror)
        raise InputError(f"--metrics-addr {addr} --metrics-port {port}: cannot serve /metrics: {error.strerror or error}") from None


async def controller(args: argparse.Namespace, clock: Clock | None = None) -> int:
    """Open the session (stores, cache, runner, engine), then run the engine under the Lease with metrics.
    `clock`: tests pass a ManualClock; the command runs on real time (with --sim-runner, the fleet's simulated time
    at real speed, which goes on from where its runs were left: KubeSession.open). Exit 2 when it cannot start (the
    cluster unreachable, nvcre not installed, RBAC missing), as every command that cannot reach its cluster, or its CRDs
    were given another nvcre's schema while it ran; 1 when it stops after losing the Lease."""
    from nvcre_tui.engine.clock import ScaledClock, SystemClock
    from nvcre_tui.engine.controller import ControllerLoop
    from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
    from nvcre_tui.engine.kube.session import KubeSession
    from nvcre_tui.engine.lease import EngineLease, engine_identity
    from nvcre_tui.engine.metrics import EngineMetrics
    from nvcre_tui.engine.planning.catalog_load import default_catalog
    from nvcre_tui.engine.sim.scenario import default_scenario, load_scenario
    from nvcre_tui.engine.kube.installs import (install_namespaces, lease_namespace_closing, not_installed, terminating,
                                                 uninstalled)
    from nvcre_tui.engine.store.errors import Forbidden, NamespaceTerminating, NotFound, StoreError
    from nvcre_tui.engine.store.protocol import LEASE

    wall = clock or SystemClock()  # the Lease's and the loop's: other processes read the Lease's times
    clock = clock or (ScaledClock(1.0, start=wall.now()) if args.sim_runner else wall)
    target = await load_kube_target(args)
    scenario = (load_scenario(args.scenario) if args.scenario else default_scenario()) if args.sim_runner else None
    namespace = args.install_namespace or INSTALL_NAMESPACE
    metrics = EngineMetrics()
    # before the cluster is asked anything: a port in use or an unknown address is bad input
    port = _serve_metrics(metrics, args.metrics_port, args.metrics_addr) if args.metrics_port else 0
    session: KubeSession | None = None
    try:
        session = await KubeSession.open(target, default_catalog(), clock=clock, scenario=scenario, metrics=metrics,
                                         install_namespace=namespace, role="controller", history=None, elect=False)
        assert session.engine is not None
        session.engine.log = _log  # a runner tick that failed: one line in the pod's log
        if (why := await lease_namespace_closing(session.engine_kube, namespace)) is not None:
            raise InputError(f"{target.server}: {why}")
        identity = args.identity or os.environ.get("POD_NAME") or engine_identity("controller")
        kube = session.engine_kube
        lease = EngineLease(kube, wall, namespace, identity, args.lease_duration, runner=session.runner_kind)
        runs = f"simulated fleet {scenario.name}" if scenario else "real pods (Kubernetes runner)"
        _log(f"cluster {target.server} ({target.source}); workloads: {runs}")
        if port:  # said once started: a pod's log named where to scrape an engine its start checks refused
            _log(f"metrics on http://{args.metrics_addr}:{port}/metrics")
        try:
            return await ControllerLoop(session.engine, session.engine_kube, lease, metrics, wall, log=_log,
                                        on_acquired=session.go_on_from_the_fleet, cache=session.engine.cache,
                                        guard=session.guard_schema,
                                        gone=lambda: uninstalled(kube, namespace, lease.namespace_lost, refused=lease.refused,
                                                                 unauthorized=lease.unauthorized)).run()
        except NamespaceTerminating:  # a create there is refused (403) until it is gone: it was printed every 2 s for ever
            raise InputError(f"{target.server}: {terminating(namespace, await install_namespaces(session.kube))}") from None
        except NotFound as error:  # the Lease's namespace went away (setup reset): it was printed every 2 s for ever
            if error.kind != LEASE.kind:
                raise
            raise InputError(f"{target.server}: {not_installed(namespace, await install_namespaces(session.kube))}") from None
    except InputError as error:  # the cluster is not ready for us (CRDs missing, the fleet may not write Nodes)
        _log(" ".join(" ".join(error.messages).split()))
        return 2
    except Forbidden as error:  # the simulator writes Nodes, which the nvcre-engine ServiceAccount may not
        hint = ("the simulated fleet registers and cordons Nodes: install with `nvcre setup init --sim-runner`, "
                "or run with a kubeconfig allowed to") if scenario else "is the RBAC of `nvcre setup init` applied? nvcre setup status"
        # A user's kubeconfig (a team's nvcre-edit), not a ServiceAccount setup init left unbound: said as such, not as an
        # install to check.
        hint = await _not_the_engine(target, wall, namespace) or hint
        _log(f"{' '.join(error.message.split())} ({hint})")
        return 2
    except StoreError as error:  # e.g. not installed: the namespace is missing
        _log(f"{' '.join(error.message.split())} (is nvcre installed? nvcre setup status)")
        return 2
    finally:
        metrics.stop()
        if session is not None:
            await session.close()


async def _not_the_engine(target: KubeTarget, clock: Clock, namespace: str) -> str | None:
    """Why this identity may not run the engine at all (RBAC: no update on its Lease), or None (it may, or the server
    would not say)."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.api.vocabulary import ENGINE_NAME
    from nvcre_tui.engine.lease import LEASE_NAME
    from nvcre_tui.engine.store.kube import KubeStore
    from nvcre_tui.engine.store.protocol import LEASE

    store = KubeStore(target, clock, user_agent="nvcre")
    try:
        if await allowed(store, "update", LEASE, namespace, LEASE_NAME) is not False:
            return None
    finally:
        await store.close()
    return (f"this user may not run the engine (RBAC: no update on Lease {namespace}/{LEASE_NAME}): run `nvcre controller` as "
            f"setup init's ServiceAccount {namespace}/{ENGINE_NAME} (in the cluster), or with a kubeconfig holding its rights")
