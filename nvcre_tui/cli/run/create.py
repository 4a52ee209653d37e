"""The certification created on the opened session (planned on its Nodes, its pull secret, what the cluster lacks
said), then followed with --wait (and --cleanup), or the way to follow it said without."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_OK, registry
from nvcre_tui.cli.interrupt import stop_on_interrupt
from nvcre_tui.cli.report import namespace_of
from nvcre_tui.cli.run.cleanup import cleanup_certification
from nvcre_tui.cli.run.flags import again_flags, gpu_product, source
from nvcre_tui.cli.run.follow import VIEWER_POLL_SECONDS, follow_to_report, still_there
from nvcre_tui.cli.run.progress import DeletedWhileFollowed
from nvcre_tui.cli.run.timeout import default_timeout
from nvcre_tui.cli.session import Told, where_of
from nvcre_tui.engine.api.nodes import NO_NODES
from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRODUCT
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import certifications_take, rbac_refused
from nvcre_tui.engine.planning.render import UNPLANNED, render_certification
from nvcre_tui.engine.planning.resolve import SHAPE_OPTIONS
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.created import made_by_this_create, stored_if_same_spec
from nvcre_tui.engine.store.errors import AlreadyExists, Invalid, NamespaceTerminating, NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, NAMESPACE, NODE, SECRET
from nvcre_tui.engine.units import format_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session


NODES_WAIT_SECONDS = 10.0


async def run_in(session: Session, args: argparse.Namespace, cert: Any, catalog: Any, timeout: float | None,
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
    product = gpu_product(nodes) if args.category and not unplanned else None
    if product is not None:  # --category: narrowed to the product found, as NVCRE does
        cert.spec.target.node_selector[LABEL_GPU_PRODUCT] = product
        console.print(f"Discovered GPU nodes with product: {escape(printable(product, newlines=False))}")
    pull_secret = registry.secret_name(cert.metadata.name) if login is not None else None
    if pull_secret is not None:
        registry.reference(cert, pull_secret)
    # fails with exit 2 before anything is created
    rendered = [] if unplanned else render_certification(cert, nodes, catalog, source(args))
    body = cert.to_wire()
    body["metadata"]["namespace"] = namespace_of(args, session, cert.metadata.namespace)
    body.pop("status", None)
    where = "the simulator" if simulated else session.title
    name, namespace = cert.metadata.name, body["metadata"]["namespace"]
    again = again_flags(args, simulated, namespace)
    if (otherwise := await session.runs_otherwise()) is not None:
        raise InputError(f"{where}: {otherwise}")  # before anything is created
    session.stamp(body)
    try:
        uid = str((await session.store.create(CERTIFICATION, body))["metadata"].get("uid") or "")
        console.print(f"Certification {name} created in namespace {namespace} ({escape(printable(where, newlines=False))}).")
        if not simulated and not args.sim_runner:
            for line in await _hostengines_missing(session, cert, catalog):
                console.print(f"[yellow]{escape(printable(line, newlines=False))}[/]", soft_wrap=True)
    except AlreadyExists as error:
        # The server's answer to our create lost after it was committed (a 5xx, a timeout, a cut connection), and the retry
        # met it: this command made it. It said "already exists; use another --name", and a second run of it was started.
        ours = await made_by_this_create(session.store, CERTIFICATION, body, error)
        if ours is not None:
            uid = str(ours["metadata"].get("uid") or "")
            console.print(f"Certification {name} created in namespace {namespace} ({escape(printable(where, newlines=False))}; "
                          "the server's answer was lost, its retry found it made).")
            if not simulated and not args.sim_runner:
                for line in await _hostengines_missing(session, cert, catalog):
                    console.print(f"[yellow]{escape(printable(line, newlines=False))}[/]", soft_wrap=True)
        followed = ours or (await _same_spec(session, body) if args.wait else None)
        if followed is None:
            # the name is blamed where it came from: --name overrides the file's metadata.name, which is not at fault then
            named = "--name" if args.name is not None else f"{source(args)}: metadata.name"
            raise InputError(f"{named}: certification {name!r} already exists in {where}; use {'another ' if args.name is not None else ''}"
                             f"--name or `nvcre certification report {name}{again}`") from None
        if ours is None:
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
        raise InputError(f"{source(args)}: {error}" if isinstance(error, Invalid) else str(error)) from None
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
                             + (f"; --wait follows it for {format_duration(default_timeout([], known))} (counted as one "
                                "round of groups: the nodes it finds may make more) unless --timeout"
                                if args.wait and timeout is None else "")), soft_wrap=True, style="yellow")
    viewer = session.viewer_reason
    if viewer:
        console.print(f"[yellow]{escape(printable(viewer, newlines=False))}[/]", soft_wrap=True)
    if not args.wait:
        if simulated:
            if session.engine is not None:
                await session.engine.settle()
            if session.engine is None:  # another process holds the store's engine: it runs the certification
                console.print(escape(f"Follow it in the console (`nvcre{again}`) or run `nvcre certification report {name}{again}`."), soft_wrap=True)
            else:  # this process was the store's engine: once it exits nothing reconciles the run (a report shows it standing still)
                console.print(escape(f"No engine keeps running it after this command: pass --wait, or open the console (`nvcre{again}`), "
                                     f"which runs the engine; `nvcre certification report {name}{again}` shows where it stands."),
                              soft_wrap=True, style="yellow")
        else:
            console.print(f"Follow it with `kubectl get certifications.nvcre.nvidia.com -n {namespace} -w` "
                          f"or `nvcre certification report {name}{escape(again)}`.")
            if session.engine is not None:
                # the fleet's runs need an engine that plays it: a plain controller would fail them
                played = (" --sim-runner" + (f" --scenario {shlex.quote(args.scenario)}" if args.scenario else "")) if args.sim_runner else ""
                console.print(f"[yellow]No engine keeps running it after this command: pass --wait, or run `nvcre controller{escape(played)}` (README).[/]")
        return EXIT_OK
    limit = timeout if timeout is not None else default_timeout(rendered, known if unplanned else ())
    # The handler stays through --cleanup: a second ctrl-c (wherever it lands: a KeyboardInterrupt here, or the
    # cancellation asyncio makes of it) stops at once, the cleanup included.
    with stop_on_interrupt() as stop:
        cleaned = False
        try:
            return await follow_to_report(session, args, name, namespace, limit, console, again, stop, told or Told())
        except DeletedWhileFollowed as deleted:
            if not (args.cleanup and not stop.forced and deleted.held):
                raise
            # Held by a finalizer: the cleanup's deletion completes it, after which "`nvcre certification delete`
            # completes the deletion" would send the user to do what is done.
            cleaned = True
            await cleanup_certification(session, name, namespace, uid, console)
            if await still_there(session, name, namespace, uid):
                raise
            raise InputError(printable(f"{deleted.said}; it was held by {', '.join(deleted.finalizers)}, and --cleanup "
                                       "completed the deletion", newlines=False)) from None
        finally:
            if args.cleanup and not stop.forced and not cleaned:
                await cleanup_certification(session, name, namespace, uid, console)


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
    return await stored_if_same_spec(session.store, CERTIFICATION, body)


async def _nodes_of_the_holder(session: Any) -> None:
    """A viewer on a store whose holder is still registering the fleet waits (briefly) for its Nodes."""
    for _ in range(int(NODES_WAIT_SECONDS / VIEWER_POLL_SECONDS)):
        if session.engine is not None or session.cache.list(NODE):
            return
        await asyncio.sleep(VIEWER_POLL_SECONDS)
