"""`nvcre certification run`, on the embedded simulated fleet or a cluster: create a certification, and with --wait
follow it to its report (report.py).

Exit codes: 0 PASSED or INCOMPLETE, 1 FAILED, 2 bad input, 3 timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import shlex
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_OK, EXIT_TIMEOUT, registry
from nvcre_tui.cli.filepaths import file_path
from nvcre_tui.cli.stdout import verdict_output
from nvcre_tui.cli.delete import CLEANUP_WAIT_SECONDS, taking_over
from nvcre_tui.cli.interrupt import StopRequest, stop_on_interrupt
from nvcre_tui.cli.kubeflags import check_namespace, file_namespace_agrees
from nvcre_tui.cli.numbers import integer
from nvcre_tui.cli.report import (RESULT_EXIT, certification_report, check_results_file, close_session, namespace_of,
                                  refuse_damaged_rows, write_results)
from nvcre_tui.cli.session import Told, add_session_arguments, on_cluster, open_session, scenario_of, state_path_of, tell_notices, where_of
from nvcre_tui.engine.api.base import DNS_LABEL
from nvcre_tui.engine.api.bodies import certification_status, group_nodes, job_name_of_run, labels_of, orchestration_of
from nvcre_tui.engine.api.nodes import NO_NODES
from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.vocabulary import (FAILED, LABEL_CERTIFICATION, LABEL_DOMAIN, LABEL_GPU_PRODUCT, LABEL_GROUP,
                                             LABEL_VARIANT, LABEL_WORKFLOW, SUCCEEDED)
from nvcre_tui.engine.clock import ManualClock, SystemClock, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import held_by, is_held
from nvcre_tui.engine.controllers.job import pending_bound, pending_message
from nvcre_tui.engine.history.deletion import TAKE_OVER_SECONDS, delete_certification, left_message, wait_collected
from nvcre_tui.engine.grants import certifications_take, rbac_refused
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.db import check_history
from nvcre_tui.engine.kube.held import deletion_held
from nvcre_tui.engine.outfiles import check_writable
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.discovery import is_gpu_node, node_exclusion
from nvcre_tui.engine.planning.manifest import CATEGORY_FLAG, certification_for_categories, load_certification
from nvcre_tui.engine.planning.render import UNPLANNED, check_certification, render_certification
from nvcre_tui.engine.planning.resolve import SHAPE_OPTIONS
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.diagnose.summary import rounds_weighed
from nvcre_tui.engine.report.nodestates import diagnosis_open
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.sim.scenario import build_nodes
from nvcre_tui.engine.store.errors import AlreadyExists, Invalid, NamespaceTerminating, NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NAMESPACE, NODE, SECRET, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.names import natural_key
from nvcre_tui.engine.units import MAX_DURATION_SECONDS, count, format_duration, listed, parse_duration

if TYPE_CHECKING:  # the sessions (the controllers and the simulator behind them) load when a command opens one
    from nvcre_tui.engine.session import Session, SimSession

WATCH_POLL_SECONDS = 1.0
WAITING_NOTE_SECONDS = 30.0  # run --wait says why a group's pods are not running once they have waited this long
STILL_RUNNING_SECONDS = 120.0  # run --wait on a cluster says where each running category stands after this much silence
STILL_RUNNING_CHARS = 200  # of each category's message in that line
STILL_WAITING_SHOWN = 3  # groups waiting for their pods named in that line
VIEWER_POLL_SECONDS = 0.1  # a simulator viewer looks at its certification and the Lease this often (local reads)
NODES_WAIT_SECONDS = 10.0
SETUP_WAIT_SECONDS = 60.0  # --setup: how long the CRDs may take to be Established, as `setup init`'s default


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `run` to the certification group."""
    run = commands.add_parser("run", help="create a certification (and with --wait, follow it to its report)")
    what = run.add_mutually_exclusive_group(required=True)
    what.add_argument("--cert-file", metavar="F", help="Certification YAML")
    what.add_argument(CATEGORY_FLAG, action="append", metavar="D/V",
                      help="a catalog category (repeatable) on every GPU node of the one GPU product found")
    for flag, (option, kind, help_text) in CATEGORY_OPTION_FLAGS.items():
        # NVCRE's checkpoint flags are taken (so a script gets the refusal naming them) but not offered in --help
        shown = argparse.SUPPRESS if flag in REFUSED_OPTION_FLAGS else f"with --category: {help_text}"
        if kind is bool:
            run.add_argument(flag, dest=option, action=argparse.BooleanOptionalAction, default=None, help=shown)
        else:
            run.add_argument(flag, dest=option, type=integer if kind is int else kind, metavar="N" if kind is int else "NAME", default=None,
                             help=shown)
    add_session_arguments(run, namespace_help="namespace of the Certification (default: the file's, else the context's, else default)")
    run.add_argument("--name", help="certification name (default: metadata.name of the file; with --category nvcre-YYYYMMDD-HHMMSS)")
    run.add_argument("--wait", action="store_true", help="follow progress, then print the report")
    run.add_argument("--timeout", metavar="D", help="with --wait: give up after D (simulated time on the simulator; default: from the categories' budgets)")
    run.add_argument("--results-file", metavar="F", type=file_path, help="write the JSON report here")
    registry.add_arguments(run)
    run.add_argument("--setup", action="store_true",
                     help="on a cluster: first install or update what `nvcre setup init` installs (the CRDs, the install namespace, "
                          "RBAC), as NVCRE's --setup; left installed afterwards (`nvcre setup reset` removes it)")
    run.add_argument("--cleanup", action="store_true",
                     help="with --wait: delete the certification after its report, on every exit (timed out, ctrl-c); "
                          f"archived first; waits up to {format_duration(CLEANUP_WAIT_SECONDS)} for its Workflows, Jobs and runs to go")
    run.set_defaults(func=run_command)


DIAGNOSE_ROUNDS = 8  # the rounds --timeout's default allows a diagnosis (a bound to wait for, not a limit on it)


def _default_timeout(rendered: list[Any], unplanned: Sequence[CategoryOptions] = ()) -> float:
    """Sum of each category's budget × iterations × rounds of groups, × 1.5, at least 30 minutes. A diagnosis (testScale
    diagnose, or onFailure after the iterations) counts as DIAGNOSE_ROUNDS rounds. A category not planned here (Nodes
    unread: its options as known without them) counts one round of groups: the least its nodes may take."""
    budgets = []  # (timeoutPerJob, iterations, a diagnose run, onFailure: diagnose, rounds of groups)
    for item in rendered:
        orch = item.workflow.spec.orchestration
        groups = max(1, len(item.groups))
        concurrent = orch.execution.max_concurrent or groups
        budgets.append((orch.execution.timeout_per_job, orch.iterations, orch.diagnose is not None,
                        orch.on_failure is not None and orch.on_failure.diagnose is not None, -(-groups // concurrent)))
    budgets += [(options.timeout_per_job, options.repeat_count or 1, options.test_scale == "diagnose", options.on_failure == "diagnose", 1)
                for options in unplanned]
    total = 0.0
    for timeout_per_job, iterations, diagnosing, on_failure, waves in budgets:
        rounds = iterations * (DIAGNOSE_ROUNDS if diagnosing else 1) + (DIAGNOSE_ROUNDS if on_failure else 0)
        total += parse_duration(timeout_per_job or "1h") * rounds * max(waves, 1)
    return min(max(total * 1.5, 1800.0), 100 * MAX_DURATION_SECONDS)  # the cap keeps the clock a date


def run_command(args: argparse.Namespace) -> int:
    """Validate, create, and with --wait follow to the report."""
    return asyncio.run(_run(args))


def _check_name(option: str, value: str) -> None:
    if not re.fullmatch(DNS_LABEL, value) or len(value) > 63:
        raise InputError(f"{option}: must be a lowercase DNS label (a-z, 0-9, '-', at most 63 characters), got {value!r}")


# NVCRE's `run` category option flags (each --category category takes those it reads): flag -> (option, type, help).
CATEGORY_OPTION_FLAGS: dict[str, tuple[str, type, str]] = {
    "--nodes-per-job": ("nodesPerJob", int, "nodes in each job"),
    "--gpus-per-node": ("gpusPerNode", int, "GPUs each pod asks for"),
    "--enable-checkpoint": ("enableCheckpoint", bool, "NVCRE's checkpoint restarts: not implemented, refused"),
    "--enable-mnnvl": ("enableMNNVL", bool, "multi-node NVLink (GB200/GB300 ComputeDomains); unset: from the nodes"),
    "--max-steps": ("maxSteps", int, "training steps (-1: no step limit, --exit-duration-mins ends the run)"),
    "--exit-duration-mins": ("exitDurationMins", int, "training stops after this many minutes"),
    "--repeat-count": ("repeatCount", int, "run each group this many times"),
    "--max-restarts": ("maxRestarts", int, "checkpoint restarts a workload may take: not implemented, refused"),
    "--storage-class": ("storageClassName", str, "storage class of checkpoint volumes: not implemented, refused"),
}
# Taken for NVCRE CLI compatibility and always refused (checkpoint restarts are not implemented): hidden from --help.
REFUSED_OPTION_FLAGS = frozenset({"--enable-checkpoint", "--max-restarts", "--storage-class"})
_NEEDS_WAIT = {"--results-file": "the report is written when the run ends", "--timeout": "it bounds how long the run is followed",
               "--cleanup": "it deletes the certification once it is followed to its report"}


async def _run(args: argparse.Namespace) -> int:
    def no_pull_secret_on_the_simulator() -> None:  # said before a password is read for nothing
        if not on_cluster(args):
            raise InputError("--workload-registry: the simulator pulls no image; a pull secret is for a cluster's workloads")

    login = registry.login_of(args, no_pull_secret_on_the_simulator)  # first: its password may be on stdin, which --cert-file - would read
    catalog = default_catalog()
    options = _category_options(args)
    if args.category:
        flags = {option: flag for flag, (option, _, _) in CATEGORY_OPTION_FLAGS.items()}
        cert = certification_for_categories(args.category, datetime.now(UTC).strftime("nvcre-%Y%m%d-%H%M%S"), catalog, options, flags)
    else:
        cert = load_certification(args.cert_file, catalog)
    if args.name is not None:  # given: checked, never dropped (an empty value is the parser's to refuse)
        _check_name("--name", args.name)
        cert.metadata.name = args.name
    for flag, value in (("--results-file", args.results_file), ("--timeout", args.timeout), ("--cleanup", args.cleanup or None)):
        if value is not None and not args.wait:
            raise InputError(f"{flag}: needs --wait ({_NEEDS_WAIT[flag]})")
    check_results_file(args.results_file, args)
    if args.timeout:
        try:
            timeout = parse_duration(args.timeout)
        except ValueError as error:
            raise InputError(f"--timeout: {error}") from None
    file_namespace_agrees(args.namespace, cert.metadata.namespace, _source(args))
    if getattr(args, "history", None):
        check_history(Path(args.history))
    # What needs no Node is checked before anything is made (--setup too), and for a user who may not read the Nodes
    known = check_certification(cert, catalog, _source(args))
    if not on_cluster(args):
        state = state_path_of(args)
        check_writable(state, "--state")  # run writes the simulator's store: find out now
        if not state.exists():  # a plan that cannot run on the scenario's fleet creates no store
            fleet = build_nodes(scenario_of(args))
            if args.category:
                _gpu_product(fleet)
            render_certification(cert, fleet, catalog, _source(args))
    if args.setup:
        await _set_up(args)
    if args.sim_runner:
        await _plan_before_the_fleet_registers(args, cert, catalog)
    session = await open_session(args, catalog, live=False, want_engine=True)
    told = Told(tell_notices(session))
    try:
        return await _run_in(session, args, cert, catalog, timeout if args.timeout else None, login, told, known)
    finally:
        await close_session(session, told.count)


async def _plan_before_the_fleet_registers(args: argparse.Namespace, cert: Any, catalog: Any) -> None:
    """--sim-runner: the session registers the fleet's Nodes as it opens (its engine plays them), before the
    certification is planned on them: a plan refused then (heterogeneous platforms, a product the --category flags
    cannot narrow) left 32 simulated Nodes on the cluster for bad input. Planned first on the cluster's Nodes and those
    the fleet would add (ensure_nodes leaves a Node of the same name as it is), InputError before anything is written.
    A user who may not list Nodes, or a read that fails, is left to the session, which says so."""
    from nvcre_tui.cli.kubeflags import open_kube_store
    from nvcre_tui.engine.kube.session import COMMAND_AGENT

    store = await open_kube_store(args, user_agent=COMMAND_AGENT)
    try:
        present = (await store.list(NODE)).items
    except StoreError:
        return
    finally:
        await store.close()
    names = {node["metadata"]["name"] for node in present}
    nodes = [*present, *(node for node in build_nodes(scenario_of(args)) if node["metadata"]["name"] not in names)]
    planned = cert.model_copy(deep=True)  # as _run_in narrows and plans it, on its own copy
    if args.category and (product := _gpu_product(nodes)) is not None:
        planned.spec.target.node_selector[LABEL_GPU_PRODUCT] = product
    render_certification(planned, nodes, catalog, _source(args))


async def _set_up(args: argparse.Namespace) -> None:
    """--setup: `setup init` on the cluster the flags name (its progress on stderr: stdout is the report), before
    the certification is created. Not on the simulator, which needs nothing installed; a failure stops the run."""
    from nvcre_tui.cli.setup.install import apply_install
    from nvcre_tui.cli.setup.shared import USER_AGENT
    from nvcre_tui.engine.kube.install import install_objects
    from nvcre_tui.cli.kubeflags import open_kube_store
    from nvcre_tui.engine.kube.session import DEFAULT_INSTALL_NAMESPACE

    if not on_cluster(args):
        raise InputError("--setup: installs nvcre on a cluster (setup init); the simulator needs nothing installed: "
                         "drop --setup, or name the cluster (--kubeconfig, --context)")
    namespace = check_namespace(args.install_namespace, "--install-namespace") or DEFAULT_INSTALL_NAMESPACE
    setup = argparse.Namespace(dry_run=False, namespace=namespace, timeout=SETUP_WAIT_SECONDS, sim_runner=args.sim_runner, force=False)
    clock = SystemClock()
    store = await open_kube_store(args, user_agent=USER_AGENT, clock=clock)
    try:
        # a failure (a namespace being deleted, CRDs not Established in time) is raised as its one line, said once
        await apply_install(store, clock, install_objects(namespace, simulator=args.sim_runner), setup,
                            out=lambda line: print(printable(line), file=sys.stderr), raising=True)
    except StoreError as error:
        raise InputError(f"--setup: {' '.join(error.message.split())}") from None
    finally:
        await store.close()


def _category_options(args: argparse.Namespace) -> dict[str, Any]:
    """The category options the flags set (wire names); InputError when they come without --category (a file's
    categories carry their own options)."""
    given = {flag: getattr(args, option) for flag, (option, _, _) in CATEGORY_OPTION_FLAGS.items() if getattr(args, option) is not None}
    if given and not args.category:
        raise InputError(f"{next(iter(given))}: goes with --category; a file sets it in spec.categories[].options")
    return {CATEGORY_OPTION_FLAGS[flag][0]: value for flag, value in given.items()}


def _again(args: argparse.Namespace, simulated: bool, namespace: str) -> str:
    """The flags that find this certification again (`--state S`, `-n NS` ...), for the commands we advise."""
    flags: list[tuple[str, Any]] = [("--sim", None)] if simulated and getattr(args, "sim", False) else []
    names = ("scenario", "state") if simulated else ("kubeconfig", "context", "install_namespace")
    flags += [(f"--{name.replace('_', '-')}", getattr(args, name, None)) for name in names if getattr(args, name, None)]
    if namespace != "default":
        flags.append(("-n", namespace))
    shown = "".join(f" {flag}" + (f" {shlex.quote(str(value))}" if value is not None else "") for flag, value in flags)
    return printable(shown, newlines=False)  # advice lines stay one line each


def _source(args: argparse.Namespace) -> str:
    """Where the Certification came from, for messages: its file, or --category."""
    return str(args.cert_file or CATEGORY_FLAG)


def _gpu_product(nodes: list[Any]) -> str | None:
    """The one GPU product the GPU nodes hold, as NVCRE's `run --category` finds it (None: no GPU node); InputError
    naming them when there are several (a certification compares nodes of one kind)."""
    gpu = [node for node in nodes if is_gpu_node(node)]
    usable = [node for node in gpu if node_exclusion(node) is None] or gpu  # discovery leaves a cordoned one out anyway
    products = sorted({str(labels_of(node).get(LABEL_GPU_PRODUCT)) for node in usable if labels_of(node).get(LABEL_GPU_PRODUCT)})
    if len(products) > 1:
        raise InputError(f"{CATEGORY_FLAG}: the GPU nodes hold {len(products)} products ({', '.join(products)}): "
                         f"certify one at a time with --cert-file and a nodeSelector on {LABEL_GPU_PRODUCT}")
    return products[0] if products else None


async def _run_in(session: Session, args: argparse.Namespace, cert: Any, catalog: Any, timeout: float | None,
                  login: registry.Login | None = None, told: Told | None = None, known: Sequence[CategoryOptions] = ()) -> int:
    from nvcre_tui.engine.session import SimSession

    simulated = isinstance(session, SimSession)
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if isinstance(session, SimSession):
        await session.catch_up()
        await _nodes_of_the_holder(session)
    nodes = session.cache.list(NODE)
    if not nodes and not simulated and NODE not in session.cache.withheld:  # (withheld: this user may not list them)
        # --sim-runner registers its fleet's Nodes only in a process that runs the engine: a viewer's reason is the cause
        why = (f"; --sim-runner registers its fleet's Nodes only where it runs the engine, and this process is a "
               f"{session.viewer_reason}" if args.sim_runner and session.engine is None and session.viewer_reason else "")
        raise InputError(f"{session.title}: {NO_NODES}{why}")
    # A user who may not list Nodes (a team's nvcre-edit binding: no namespaced role grants them) cannot plan here; the
    # engine, which reads them, plans it as it plans every certification (one that cannot run fails, saying why).
    unplanned = not simulated and NODE in session.cache.withheld
    product = _gpu_product(nodes) if args.category and not unplanned else None
    if product is not None:  # --category: narrowed to the product found, as NVCRE does
        cert.spec.target.node_selector[LABEL_GPU_PRODUCT] = product
        console.print(f"Discovered GPU nodes with product: {escape(printable(product, newlines=False))}")
    pull_secret = registry.secret_name(cert.metadata.name) if login is not None else None
    if pull_secret is not None:
        registry.reference(cert, pull_secret)
    # fails with exit 2 before anything is created
    rendered = [] if unplanned else render_certification(cert, nodes, catalog, _source(args))
    body = cert.to_wire()
    body["metadata"]["namespace"] = namespace_of(args, session, cert.metadata.namespace)
    body.pop("status", None)
    where = "the simulator" if simulated else session.title
    name, namespace = cert.metadata.name, body["metadata"]["namespace"]
    again = _again(args, simulated, namespace)
    if (otherwise := await session.runs_otherwise()) is not None:
        raise InputError(f"{where}: {otherwise}")  # before anything is created
    session.stamp(body)
    try:
        uid = str((await session.store.create(CERTIFICATION, body))["metadata"].get("uid") or "")
        console.print(f"Certification {name} created in namespace {namespace} ({escape(printable(where, newlines=False))}).")
        if not simulated and not args.sim_runner:
            for line in await _hostengines_missing(session, cert, catalog):
                console.print(f"[yellow]{escape(printable(line, newlines=False))}[/]", soft_wrap=True)
    except AlreadyExists:
        followed = await _same_spec(session, body) if args.wait else None
        if followed is None:
            raise InputError(f"{_source(args)}: metadata.name: certification {name!r} already exists in {where}; use --name or "
                             f"`nvcre certification report {name}{again}`") from None
        uid = str(followed["metadata"].get("uid") or "")
        console.print(f"Certification {name} already exists in namespace {namespace} with this spec: following it.", soft_wrap=True)
    except StoreError as error:
        if isinstance(error, NotFound) and not simulated and not await _namespace_exists(session, namespace):
            raise InputError(f"namespace {namespace} not found on {where_of(session)} (nothing was created: kubectl create namespace "
                             f"{namespace}, or another -n)") from None
        if isinstance(error, NamespaceTerminating):  # never admitted again: the server's 403 said neither what was made nor what to do
            raise InputError(f"namespace {namespace} on {where_of(session)} is being deleted (Terminating) and admits no new object "
                             f"(certification {name} was not created: wait until it is gone and create it again, or another -n)") from None
        if rbac_refused(error) and not simulated:  # which role grants it, as README's "Users' roles" says
            raise InputError(f"{' '.join(str(error).split())}; {certifications_take('creating', namespace)} (nothing was created)") from None
        # the server refused the certification itself: its file is named; a store that failed (locked, a damaged row) is not its
        raise InputError(f"{_source(args)}: {error}" if isinstance(error, Invalid) else str(error)) from None
    if pull_secret is not None and login is not None:
        await _create_pull_secret(session, pull_secret, namespace, name, uid, login)
        console.print(f"Pull secret {pull_secret} for {escape(printable(login.registry, newlines=False))} created, owned by the certification.")
    console.print("Categories:\n" + "\n".join(f"  - {c.key}" for c in cert.spec.categories))
    if unplanned:
        from_the_nodes = _from_the_nodes(cert, catalog, known)
        shape = "; checked here: what needs no Node" + (
            f"; {_listed(from_the_nodes)} {'come' if len(from_the_nodes) > 1 else 'comes'} from the nodes' GPU architecture and platform"
            if from_the_nodes else "")
        console.print(escape(UNPLANNED + shape + (" (GPU product not narrowed, as --category does with Nodes readable)" if args.category else "")
                             + (f"; --wait follows it for {format_duration(_default_timeout([], known))} (counted as one "
                                "round of groups: the nodes it finds may make more) unless --timeout"
                                if args.wait and timeout is None else "")), soft_wrap=True, style="yellow")
    viewer = session.viewer_reason
    if viewer:
        console.print(f"[yellow]{escape(printable(viewer, newlines=False))}[/]", soft_wrap=True)
    if not args.wait:
        if simulated:
            if session.engine is not None:
                await session.engine.settle()
            console.print(escape(f"Follow it in the console (`nvcre{again}`) or run `nvcre certification report {name}{again}`."), soft_wrap=True)
        else:
            console.print(f"Follow it with `kubectl get certifications.nvcre.nvidia.com -n {namespace} -w` "
                          f"or `nvcre certification report {name}{escape(again)}`.")
            if session.engine is not None:
                # the fleet's runs need an engine that plays it: a plain controller would fail them
                played = (" --sim-runner" + (f" --scenario {shlex.quote(args.scenario)}" if args.scenario else "")) if args.sim_runner else ""
                console.print(f"[yellow]No engine keeps running it after this command: pass --wait, or run `nvcre controller{escape(played)}` (README).[/]")
        return EXIT_OK
    limit = timeout if timeout is not None else _default_timeout(rendered, known if unplanned else ())
    # The handler stays through --cleanup: a second ctrl-c (wherever it lands: a KeyboardInterrupt here, or the
    # cancellation asyncio makes of it) stops at once, the cleanup included.
    with stop_on_interrupt() as stop:
        cleaned = False
        try:
            return await _follow_to_report(session, args, name, namespace, limit, console, again, stop, told or Told())
        except DeletedWhileFollowed as deleted:
            if not (args.cleanup and not stop.forced and deleted.held):
                raise
            # Held by a finalizer: the cleanup's deletion completes it, after which "`nvcre certification delete`
            # completes the deletion" would send the user to do what is done.
            cleaned = True
            await _cleanup(session, name, namespace, uid, console)
            if await _still_there(session, name, namespace, uid):
                raise
            raise InputError(printable(f"{deleted.said}; it was held by {', '.join(deleted.finalizers)}, and --cleanup "
                                       "completed the deletion", newlines=False)) from None
        finally:
            if args.cleanup and not stop.forced and not cleaned:
                await _cleanup(session, name, namespace, uid, console)


class DeletedWhileFollowed(InputError):
    """The certification `run --wait` follows was deleted (`said`), or is being deleted and a finalizer holds it
    (`held`: what holds it and the way out, as deletion_held says it; `finalizers`: those holding it)."""

    def __init__(self, said: str, held: str | None, finalizers: Sequence[str]) -> None:
        super().__init__(printable(said + (f"; {held}" if held else ""), newlines=False))
        self.said, self.held, self.finalizers = said, held, list(finalizers)


async def _still_there(session: Session, name: str, namespace: str, uid: str) -> bool:
    """The certification of this uid is still on the store (a namesake made since is another)."""
    try:
        cert = await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        return False
    return not uid or cert["metadata"].get("uid") == uid


# On a cluster, once the process that ran the engine exits nothing reconciles the certification (an API server alone
# has no other engine): said instead of "goes on", which was true only where `nvcre controller` runs.
NO_ENGINE_AFTER = ("this command was its engine: nothing advances it until another nvcre engine takes the lease "
                   "(`nvcre controller`, or the console `nvcre`)")



def _from_the_nodes(cert: Any, catalog: Any, known: Sequence[CategoryOptions]) -> list[str]:
    """The options of the GPU node shape (gpu-defaults.yaml) some category leaves unset and reads (every run spec
    carries gpusPerNode, mlnxPerNode and enableMNNVL; maxBytes only where a template reads it): where Nodes cannot be
    read, they are the engine's to fill, from the nodes it finds."""
    entries = [catalog.find(category.domain, category.variant) for category in cert.spec.categories]
    wire = {name: CategoryOptions.model_fields[name].alias or name for name in CategoryOptions.model_fields if name in SHAPE_OPTIONS}
    return [shown for name, shown in wire.items()
            if any(getattr(options, name) is None and (name != "max_bytes" or shown in entry.template_options)
                   for options, entry in zip(known, entries, strict=True))]


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _was_its_engine(session: Session) -> bool:
    """This process runs the cluster's engine (the simulator's time goes on without a process: it catches up)."""
    from nvcre_tui.engine.session import SimSession

    return not isinstance(session, SimSession) and session.engine is not None


async def _follow_to_report(session: Session, args: argparse.Namespace, name: str, namespace: str, limit: float,
                            console: Console, again: str, stop: StopRequest, told: Told) -> int:
    """Follow the certification to its end (or `limit`, or ctrl-c), print its report; the exit code."""
    from nvcre_tui.engine.session import SimSession

    goes_on = "--cleanup deletes it now" if args.cleanup else "the certification goes on"
    if not args.cleanup and _was_its_engine(session):
        goes_on = f"the certification stays, but {NO_ENGINE_AFTER}"
    started, started_real = session.clock.now(), time.monotonic()  # a viewer's clock stands still: real time then
    if isinstance(session, SimSession):
        finished = await _follow_simulated(session, name, namespace, limit, console, stop, told)
    else:  # a cluster: this process's engine while it holds the Lease, else another's (taken over once it is gone)
        finished = await _watch(session, name, namespace, limit, console, stop, told)
    if stop.requested:
        where = f"the simulator state is saved in {escape(printable(str(session.path), newlines=False))}" if isinstance(session, SimSession) and session.path else \
            f"it stays on {escape(printable(session.title, newlines=False))}"
        if args.cleanup:
            console.print(f"[yellow]{stop.said}; --cleanup deletes the certification now.[/]", soft_wrap=True)
        elif _was_its_engine(session):
            console.print(f"[yellow]{stop.said}; the certification stays on {escape(printable(session.title, newlines=False))}, but {NO_ENGINE_AFTER}.[/]\n"
                          f"  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}", soft_wrap=True)
        else:
            console.print(f"[yellow]{stop.said}; the certification goes on and {where}.[/]\n"
                          f"  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}", soft_wrap=True)
        return stop.exit_code
    report = await certification_report(session, name, namespace, console)
    try:  # the file first: a stdout that cannot be written must not cost it, nor a file that cannot, the report
        write_results(args.results_file, report)
    finally:
        with verdict_output():  # a reader gone (`| head`): the exit code is still the certification's
            print(printable(render_text(report)), end="", flush=True)  # before the lines stderr says after it
    refuse_damaged_rows(session)
    if not finished:
        waited = max((session.clock.now() - started).total_seconds(), time.monotonic() - started_real)
        time_kind = " of simulated time" if isinstance(session.clock, ManualClock) else ""
        why = f"Timed out after {format_duration(limit)}{time_kind}" if waited >= limit else \
            f"The engine went idle after {format_duration(waited)} with the certification unfinished"
        advice = "" if args.cleanup else f"\n  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}"
        console.print(f"[yellow]{why}; {goes_on}.[/]{advice}", soft_wrap=True)
        return EXIT_TIMEOUT
    return RESULT_EXIT[report["result"]]


async def _create_pull_secret(session: Session, secret: str, namespace: str, cert_name: str, uid: str, login: registry.Login) -> None:
    """The registry's pull secret, owned by the certification just created; if the server refuses it, the certification
    goes again (by its uid) rather than run workloads that cannot pull their images."""
    try:
        await session.store.create(SECRET, registry.secret_body(secret, namespace, cert_name, uid, login))
    except StoreError as error:
        with contextlib.suppress(StoreError):
            await session.store.delete(CERTIFICATION, cert_name, namespace, uid=uid)
        raise InputError(printable(f"--workload-registry: the pull secret {secret} was not created: {error}; the certification "
                                   f"{cert_name} was deleted again", newlines=False)) from None


async def _cleanup(session: Session, name: str, namespace: str, uid: str, console: Console) -> None:
    """--cleanup: delete the certification this run created or followed (by its uid: a namesake made since stays),
    archived first (its pull secret with it), and wait for its children to go. A failure is told in one line and
    leaves the run's exit code."""
    try:
        cert = await session.store.get(CERTIFICATION, name, namespace)
        if uid and cert["metadata"].get("uid") != uid:
            console.print(f"[yellow]cleanup: certification {escape(name)} was replaced by a new one meanwhile: left as it is[/]", soft_wrap=True)
            return
        from nvcre_tui.engine.kube.session import authorizer_of

        deletion = await delete_certification(session.store, session.cache, session.archiver, cert, authorizer=authorizer_of(session))
        console.print(escape(printable(deletion.said, newlines=False)), soft_wrap=True)
        left = await wait_collected(session.cache, session.engine, deletion.known, CLEANUP_WAIT_SECONDS,
                                    take_over=taking_over(session, console))
    except NotFound:
        return
    except (InputError, StoreError) as error:
        console.print(f"[yellow]cleanup: {escape(printable(str(error), newlines=False))}[/]", soft_wrap=True)
        return
    except Exception as error:  # noqa: BLE001 - the engine died while collecting: the run's exit code stands
        console.print(f"[yellow]cleanup: {escape(printable(f'{type(error).__name__}: {error}', newlines=False))}[/]", soft_wrap=True)
        return
    if left:
        console.print(f"[yellow]cleanup: {escape(left_message(left, format_duration(CLEANUP_WAIT_SECONDS)))}[/]", soft_wrap=True)


async def _namespace_exists(session: Session, namespace: str) -> bool:
    """Whether the namespace is there (a user who may not read Namespaces is taken at their word)."""
    try:
        await session.store.get(NAMESPACE, namespace)
    except NotFound:
        return False
    except StoreError:
        return True
    return True


async def _hostengines_missing(session: Session, cert: Any, catalog: Any) -> list[str]:
    """A line for each DCGM hostengine Service the certification's categories connect to (`dcgmi diag --host`) that the
    cluster does not serve: its pods were made, started and failed one by one (ServiceUnavailable), where `setup status`
    knew beforehand. Said, not refused (the Service may be installed meanwhile); nothing when the Service may not be read."""
    from nvcre_tui.engine.kube.hostengine import hostengine_found, hostengine_targets
    from nvcre_tui.engine.store.protocol import SERVICE

    keys = {category.key for category in cert.spec.categories}
    lines = []
    for target in hostengine_targets(catalog.entries):
        using = sorted(keys & set(target.entries))
        if not using:
            continue
        try:
            services = [await session.store.get(SERVICE, target.service, target.namespace)]
        except NotFound:
            services = []
        except StoreError:  # RBAC (a team's user reads no Service there), or the server: not known, not said
            continue
        if not hostengine_found(target, services):
            lines.append(f"nvcre: {', '.join(using)} connects to the DCGM hostengine {target.address}, which this cluster does not "
                         f"serve (no Service {target.namespace}/{target.service} on port {target.port}): each node's run will fail "
                         "ServiceUnavailable, blaming none; install the GPU Operator with dcgm.enabled=true (`nvcre setup status` "
                         "checks it)")
    return lines


async def _same_spec(session: Session, body: dict[str, Any]) -> dict[str, Any] | None:
    """The stored certification when it is this one (a `run --wait` started again after a kill follows it), else None."""
    metadata = body["metadata"]
    try:
        stored = await session.store.get(CERTIFICATION, metadata["name"], metadata["namespace"])
    except StoreError:
        return None
    return stored if stored.get("spec") == body.get("spec") else None


async def _nodes_of_the_holder(session: Any) -> None:
    """A viewer on a store whose holder is still registering the fleet waits (briefly) for its Nodes."""
    for _ in range(int(NODES_WAIT_SECONDS / VIEWER_POLL_SECONDS)):
        if session.engine is not None or session.cache.list(NODE):
            return
        await asyncio.sleep(VIEWER_POLL_SECONDS)


def _waiting(session: Session, name: str, namespace: str, told: set[str]) -> list[str]:
    """A line for each run of the certification whose pods have not run for WAITING_NOTE_SECONDS, once: why it waits
    (the runner says: no pods made, which nodes the scheduler cannot use) and how long until it fails. An API server
    with no controller makes no pod: the user learns it now, not when the grace ends."""
    now = session.clock.now()
    categories = {wf["metadata"]["name"]: f"{labels_of(wf).get(LABEL_DOMAIN)}/{labels_of(wf).get(LABEL_VARIANT)}"
                  for wf in session.cache.list(WORKFLOW, namespace) if labels_of(wf).get(LABEL_CERTIFICATION) == name}
    # Groups of a category waiting for the same reason and bound make one line: a per-node category (DCGM on 500 nodes)
    # on a cluster with no controller printed 500 identical lines at once.
    waiting: dict[tuple[str, str, float, bool], list[tuple[str, float]]] = {}
    for run in session.cache.list(WORKLOADRUN, namespace):
        status, uid = run.get("status") or {}, str(run["metadata"].get("uid") or run["metadata"]["name"])
        category = categories.get(labels_of(run).get(LABEL_WORKFLOW, ""))
        if category is None or uid in told or status.get("phase") not in ("Pending", "Scheduling") or not status.get("pendingSince"):
            continue
        waited = (now - parse_time(status["pendingSince"])).total_seconds()
        if waited < WAITING_NOTE_SECONDS:
            continue
        told.add(uid)
        group = labels_of(run).get(LABEL_GROUP, run["metadata"]["name"])
        job = session.cache.get(JOB, job_name_of_run(run["metadata"]["name"]), namespace) or {}
        grace, per_job = pending_bound(job.get("spec") or {}, status)  # as controllers/job.py waits
        waiting.setdefault((category, str(status.get("message") or "no reason given"), grace, per_job), []).append((group, waited))
    lines = []
    for (category, message, grace, per_job), groups in waiting.items():
        waited = max(seconds for _, seconds in groups)  # the longest waiting: the first to fail
        why = pending_message(message, grace, per_job=per_job, waited=waited)
        names = sorted((group for group, _ in groups), key=natural_key)  # group-2 before group-10
        who = names[0] if len(names) == 1 else f"{len(names)} groups ({listed(names, STILL_WAITING_SHOWN)})"
        lines.append(f"{category} {who}: pods not running after {format_duration(waited)}: {why}")
    return lines


def _holders_waiting(session: Session, cert: Mapping[str, Any], namespace: str, told: set[str]) -> list[str]:
    """`_waiting`'s lines of the certifications this one's held categories wait for, each after the category it holds:
    a category that waits for a certification whose pods never come (no Job controller, no scheduler) said only that it
    waits, for the minutes until that one failed, and the user could not tell it would."""
    statuses = certification_status(cert).get("categoryStatuses") or []
    lines = []
    for key, status in zip(category_titles(statuses), statuses):
        if (holder := held_by(status)) is None:
            continue
        lines += [f"{key}: waits for certification {holder[0]}, whose {line}" for line in _waiting(session, holder[0], holder[1] or namespace, told)]
    return lines


def _running(session: Session, name: str, namespace: str) -> list[str]:
    """A line for each run of the certification whose pods run: on how many nodes, for how long, and its bound
    (timeoutPerJob), for the long-silence line: the category's own message ("partitioned into 1 group") is older news
    and does not tell a run that goes on from one that stopped moving."""
    now = session.clock.now()
    categories = {wf["metadata"]["name"]: f"{labels_of(wf).get(LABEL_DOMAIN)}/{labels_of(wf).get(LABEL_VARIANT)}"
                  for wf in session.cache.list(WORKFLOW, namespace) if labels_of(wf).get(LABEL_CERTIFICATION) == name}
    lines = []
    for run in session.cache.list(WORKLOADRUN, namespace):
        status = run.get("status") or {}
        category = categories.get(labels_of(run).get(LABEL_WORKFLOW, ""))
        if category is None or status.get("phase") != "Running" or not status.get("startTime"):
            continue
        try:
            ran = format_duration(max((now - parse_time(status["startTime"])).total_seconds(), 0.0))
        except ValueError:
            continue
        group = labels_of(run).get(LABEL_GROUP, run["metadata"]["name"])
        job = session.cache.get(JOB, job_name_of_run(run["metadata"]["name"]), namespace) or {}
        bound = (job.get("spec") or {}).get("timeout")
        nodes = len(status.get("nodes") or []) or len(group_nodes(job))
        lines.append(f"{category} {group}: running" + (f" on {nodes} node(s)" if nodes else "") + f" for {ran}"
                     + (f" (timeoutPerJob {bound})" if bound else ""))
    return lines


# A running diagnosis's counts, in the order `run --wait` says them.
DIAGNOSIS_COUNTS = (("suspectNodes", "suspect"), ("faultyNodes", "faulty"), ("intermittentNodes", "intermittent"))


def _diagnosing(session: Session, status: Mapping[str, Any], namespace: str) -> str | None:
    """Where a category's open diagnosis stands, as `run --wait` says it when it changes ("diagnose round 3, stage
    confirmation: 4 suspects, 1 faulty, 1 link fault"); None when the category does not diagnose now."""
    name = (status.get("workflowRef") or {}).get("name")
    wf = session.cache.get(WORKFLOW, name, namespace) if name else None
    if wf is None or not diagnosis_open(wf):
        return None
    state: Mapping[str, Any] = orchestration_of(wf).get("diagnose") or {}
    sizes = {word: len(state.get(key) or []) for key, word in DIAGNOSIS_COUNTS}
    said = [f"{n} {word}{'s' if word == 'suspect' and n != 1 else ''}" for word, n in sizes.items() if n]
    said += [count(len(state.get("infrastructureFaults") or []), "link fault")] if state.get("infrastructureFaults") else []
    return f"diagnose round {rounds_weighed(state)}, stage {state.get('stage')}: {', '.join(said) or 'no suspect yet'}"


def _standing(cert: dict[str, Any]) -> str:
    """Where each unfinished category of the certification stands, as its status says (`run --wait`'s periodic line)."""
    unfinished = [status for status in certification_status(cert).get("categoryStatuses") or []
                  if status.get("status") not in (SUCCEEDED, FAILED)]
    return "; ".join(f"{status['domain']}/{status['variant']}: {_cut(str(status.get('message') or status.get('status')))}"
                     for status in unfinished) or "its categories are done; the certification is being finished"


def _cut(text: str, most: int = STILL_RUNNING_CHARS) -> str:
    return text if len(text) <= most else f"{text[:most - 3]}..."


def _progress(session: Session, name: str, namespace: str, console: Console, stop: StopRequest, told_notices: Told | None = None) -> Any:
    """A check that prints each category's status change and says whether the certification finished; and the
    session's notices as they come (`told_notices`: those told so far), e.g. the engine's runner tick that fails, said
    once: only `nvcre controller`'s log said it."""
    start = session.clock.now()
    seen: dict[str, str] = {}
    diagnosing: dict[str, str] = {}
    held_said: dict[str, str] = {}
    told: set[str] = set()
    from nvcre_tui.engine.session import SimSession

    simulated = isinstance(session, SimSession) or isinstance(session.clock, ManualClock)  # time there runs ahead of ours
    began = time.monotonic()  # a viewer's manual clock stands still (no engine of its own moves it): real time then
    watching = simulated and session.engine is None  # for the whole follow: a take-over would jump the clock ahead
    said_at = time.monotonic()  # real time: minutes without a line on a cluster read as a hang
    silence_said: str | None = None

    async def finished() -> bool:
        nonlocal said_at, silence_said
        if stop.requested:
            return True
        # An API server gone away said "viewer: lost the engine lease", then nothing: what follows is the last known
        # state (as the console's header says), and the user could not tell a dead server from a slow run.
        silence = session.cache.silence()
        if silence != silence_said:
            if silence is not None:
                error = f" ({session.cache.last_error})" if session.cache.last_error else ""
                console.print(f"[yellow]\\[watch] {escape(printable(f'{silence}{error}: following the last known state; retried meanwhile', newlines=False))}[/]",
                              soft_wrap=True)
            elif silence_said is not None:
                console.print("\\[watch] the store answers again", soft_wrap=True)
            silence_said, said_at = silence, time.monotonic()
        try:
            cert = session.cache.get(CERTIFICATION, name, namespace) or await session.store.get(CERTIFICATION, name, namespace)
        except NotFound:
            cert = None
        # One being deleted is never reconciled again: held by a finalizer (kubectl's --cascade=foreground, whose
        # collector an API server alone lacks) it stood RUNNING until the timeout, said to go on.
        if cert is None or ((cert.get("metadata") or {}).get("deletionTimestamp") and not cond.is_terminal(cert)):
            held = deletion_held(name, cert) if cert is not None else None
            raise DeletedWhileFollowed(f"certification {name!r} was deleted while it was followed (`nvcre certification delete`, "
                                       "the console's x or kubectl); it has no report", held,
                                       [str(f) for f in (cert or {}).get("metadata", {}).get("finalizers") or []])
        if told_notices is not None and not cond.is_terminal(cert):  # once it ended (its archive), after its report
            told_notices.count = tell_notices(session, told_notices.count)
        elapsed = format_duration(time.monotonic() - began if watching else (session.clock.now() - start).total_seconds())
        # A viewer's time is ours, not the simulated time of the engine it follows (its report's Runtime): said apart
        shown = f"followed {elapsed}" if watching else elapsed
        said = False
        statuses = certification_status(cert).get("categoryStatuses") or []
        for key, status in zip(category_titles(statuses), statuses):  # `#2` for a category run twice: one line each
            if seen.get(key) != status["status"]:
                seen[key], said = status["status"], True
                colour = {SUCCEEDED: "green", FAILED: "red"}.get(status["status"], "cyan")
                console.print(f"\\[watch] {escape(printable(key))}: [{colour}]{escape(printable(str(status['status'])))}[/] ({shown})")
            held = str(status.get("message") or "") if is_held(status) else ""
            if held and held_said.get(key) != held:  # another certification's Workflow on its nodes
                held_said[key], said = held, True
                console.print(f"\\[watch] {escape(printable(key))}: {escape(printable(held, newlines=False))} ({shown})")
            standing = _diagnosing(session, status, namespace)
            if standing is not None and diagnosing.get(key) != standing:  # a round a minute: said as it narrows
                diagnosing[key], said = standing, True
                console.print(f"\\[watch] {escape(printable(key))}: {escape(printable(standing))} ({shown})")
        for line in _waiting(session, name, namespace, told) + _holders_waiting(session, cert, namespace, told):
            said = True
            console.print(f"[yellow]\\[watch] {escape(printable(line, newlines=False))}[/]", soft_wrap=True)
        if said:
            said_at = time.monotonic()
        elif (not simulated or watching) and not cond.is_terminal(cert) and time.monotonic() - said_at >= STILL_RUNNING_SECONDS:
            said_at = time.monotonic()
            # why groups wait for their pods, when some do (the categories' own messages are older news), else where
            # each category stands
            stuck = (_waiting(session, name, namespace, set()) + _running(session, name, namespace)
                     + _holders_waiting(session, cert, namespace, set()))
            standing = "; ".join(stuck[:STILL_WAITING_SHOWN]) + (f" (+{len(stuck) - STILL_WAITING_SHOWN} more groups)"
                                                              if len(stuck) > STILL_WAITING_SHOWN else "") if stuck else _standing(cert)
            console.print(f"\\[watch] still running (followed for {elapsed}): {escape(printable(standing, newlines=False))}", soft_wrap=True)
        if cond.is_terminal(cert):
            verdict = "succeeded" if cond.phase(cert) == SUCCEEDED else "failed"
            console.print(f"\\[watch] Certification {verdict}. ({shown})")
            return True
        return False

    return finished


async def _follow_simulated(session: SimSession, name: str, namespace: str, limit: float, console: Console,
                            stop: StopRequest, told: Told | None = None) -> bool:
    """On the simulator: run this process's engine while it holds the Lease; as a viewer, follow the holder's
    progress through the store, and take the Lease over when the holder releases it or dies."""
    finished = _progress(session, name, namespace, console, stop, told)
    console.print("\\[watch] Watching certification progress...")
    deadline = session.clock.now() + timedelta(seconds=limit)

    async def done_or_lost() -> bool:
        return session.engine is None or await finished()

    while True:
        if session.engine is not None:
            remaining = max((deadline - session.clock.now()).total_seconds(), 0.0)
            met = await session.engine.run_until_settled(until=done_or_lost, max_seconds=remaining)
            if session.engine is not None:
                return met
            console.print(f"[yellow]\\[watch] {escape(printable(session.viewer_reason or 'lost the engine lease', newlines=False))}[/]", soft_wrap=True)
            continue
        if await finished():
            return True
        if session.clock.now() >= deadline:
            return False
        if await session.take_over():
            console.print("\\[watch] No engine holds the lease any more: this process took it over and runs the engine.", soft_wrap=True)
            continue
        session.follow_store_clock()
        await asyncio.sleep(VIEWER_POLL_SECONDS)


async def _watch(session: Session, name: str, namespace: str, limit: float, console: Console, stop: StopRequest,
                 told: Told | None = None) -> bool:
    """Follow the cache until the certification finishes, `limit` passes or ctrl-c. This process's engine reconciles
    meanwhile, else another engine does; when that one stops renewing the Lease (its process was killed), this process
    takes it over, as on the simulator. A viewer's deadline is real time: its clock moves only with an engine."""
    finished = _progress(session, name, namespace, console, stop, told)
    console.print("\\[watch] Watching certification progress...")
    deadline = time.monotonic() + limit
    next_try = 0.0

    async def done_or_lost() -> bool:
        return session.engine is None or await finished()

    while True:
        if session.engine is not None:
            met: bool | None
            if isinstance(session.clock, ManualClock):  # --sim-runner: the engine plays simulated time as fast as it can
                met = await session.engine.run_until_settled(until=done_or_lost, max_seconds=limit)
            else:
                met = await _run_engine(session, finished, deadline)
            if session.engine is not None:
                return bool(met)
            console.print(f"[yellow]\\[watch] {escape(printable(session.viewer_reason or 'lost the engine lease', newlines=False))}[/]", soft_wrap=True)
            continue
        if await finished():
            return True
        if time.monotonic() >= deadline:
            return False
        if time.monotonic() >= next_try:
            next_try = time.monotonic() + TAKE_OVER_SECONDS
            if await session.take_over():
                console.print("\\[watch] No engine holds the lease any more: this process took it over and runs the engine.", soft_wrap=True)
                continue
        await asyncio.sleep(WATCH_POLL_SECONDS)


async def _run_engine(session: Session, finished: Callable[[], Awaitable[bool]], deadline: float) -> bool | None:
    """Run this process's engine (a running clock) until the certification finishes (True), the deadline passes
    (False), or the engine stops because the session lost the Lease (None)."""
    assert session.engine is not None
    engine = asyncio.create_task(session.engine.run(), name="engine")
    try:
        while time.monotonic() < deadline:
            if await finished():
                return True
            if engine.done():
                engine.result()  # the engine died: say why rather than wait for nothing
                return None  # it returned: stopped, the Lease lost
            await asyncio.sleep(WATCH_POLL_SECONDS)
        return await finished()
    finally:
        engine.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await engine
