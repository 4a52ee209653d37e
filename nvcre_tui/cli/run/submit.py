"""`nvcre certification run` before anything is made: the flags and the file checked, --setup, a --sim-runner plan on
the cluster's Nodes, then the session opened."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from typing import Any

from nvcre_tui.cli import registry
from nvcre_tui.cli.kubeflags import check_namespace, file_namespace_agrees
from nvcre_tui.cli.report import check_results_file, close_session
from nvcre_tui.cli.run.create import run_in
from nvcre_tui.cli.run.flags import CATEGORY_OPTION_FLAGS, NEEDS_WAIT, category_options, check_name, gpu_product, source
from nvcre_tui.cli.session import Told, named_history, on_cluster, open_session, scenario_of, state_named_by, state_path_of, tell_notices
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRODUCT
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.db import check_history
from nvcre_tui.engine.outfiles import check_writable
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_for_categories, load_certification
from nvcre_tui.engine.planning.render import check_certification, render_certification
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.sim.scenario import build_nodes
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.protocol import NODE
from nvcre_tui.engine.units import parse_duration


SETUP_WAIT_SECONDS = 60.0  # --setup: how long the CRDs may take to be Established, as `setup init`'s default


def run_command(args: argparse.Namespace) -> int:
    """Validate, create, and with --wait follow to the report."""
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    def no_pull_secret_on_the_simulator() -> None:  # said before a password is read for nothing
        if not on_cluster(args):
            raise InputError("--workload-registry: the simulator pulls no image; a pull secret is for a cluster's workloads")

    login = registry.login_of(args, no_pull_secret_on_the_simulator)  # first: its password may be on stdin, which --cert-file - would read
    catalog = default_catalog()
    options = category_options(args)
    if args.category:
        flags = {option: flag for flag, (option, _, _) in CATEGORY_OPTION_FLAGS.items()}
        cert = certification_for_categories(args.category, datetime.now(UTC).strftime("nvcre-%Y%m%d-%H%M%S"), catalog, options, flags)
    else:
        cert = load_certification(args.cert_file, catalog)
    if args.name is not None:  # given: checked, never dropped (an empty value is the parser's to refuse)
        check_name("--name", args.name)
        cert.metadata.name = args.name
    for flag, value in (("--results-file", args.results_file), ("--timeout", args.timeout), ("--cleanup", args.cleanup or None)):
        if value is not None and not args.wait:
            raise InputError(f"{flag}: needs --wait ({NEEDS_WAIT[flag]})")
    check_results_file(args.results_file, args)
    if args.timeout:
        try:
            timeout = parse_duration(args.timeout)
        except ValueError as error:
            raise InputError(f"--timeout: {error}") from None
    file_namespace_agrees(args.namespace, cert.metadata.namespace, source(args))
    if (named := named_history(args)) is not None:
        check_history(*named)
    # What needs no Node is checked before anything is made (--setup too), and for a user who may not read the Nodes
    known = check_certification(cert, catalog, source(args))
    if not on_cluster(args):
        state = state_path_of(args)
        check_writable(state, state_named_by(args))  # run writes the simulator's store: find out now
        if not state.exists():  # a plan that cannot run on the scenario's fleet creates no store
            fleet = build_nodes(scenario_of(args))
            if args.category:
                gpu_product(fleet)
            render_certification(cert, fleet, catalog, source(args))
    if args.setup:
        await _set_up(args)
    if args.sim_runner:
        await _plan_before_the_fleet_registers(args, cert, catalog)
    session = await open_session(args, catalog, live=False, want_engine=True)
    told = Told(tell_notices(session))
    try:
        return await run_in(session, args, cert, catalog, timeout if args.timeout else None, login, told, known)
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
    planned = cert.model_copy(deep=True)  # as run_in narrows and plans it, on its own copy
    if args.category and (product := gpu_product(nodes)) is not None:
        planned.spec.target.node_selector[LABEL_GPU_PRODUCT] = product
    render_certification(planned, nodes, catalog, source(args))


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
