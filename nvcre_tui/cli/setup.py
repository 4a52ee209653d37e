"""`nvcre setup ...`: what a cluster needs before nvcre runs there.

`crds` prints our CustomResourceDefinitions; `init` applies them with the namespace, the engine's
ServiceAccount and RBAC (server-side apply, field manager `nvcre`); `controller` the Deployment running `nvcre controller`
(engine/kube/deployment.py); `status` tells what is installed and what nvcre relies on; `reset` removes what init and
controller made.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from nvcre_tui.cli.kubeflags import add_kube_arguments, check_namespace, open_kube_store
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.reset_checks import reset_refusal
from nvcre_tui.cli.status_rows import status_rows, unreadable_summary
from nvcre_tui.engine.api.crd import crd_for
from nvcre_tui.engine.api.resources import RESOURCES, Resource
from nvcre_tui.engine.api.serialize import to_json, to_yaml
from nvcre_tui.engine.api.stamps import stamped
from nvcre_tui.engine.api.vocabulary import LABEL_SIMULATED
from nvcre_tui.engine.clock import Clock, SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.units import count, listed

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.kube.install import InstalledSchema
    from nvcre_tui.engine.kube.status import CrdState
    from nvcre_tui.engine.store.kube import KubeStore

Obj = dict[str, Any]
USER_AGENT = "nvcre-setup"
NAMESPACE_HELP = "the namespace nvcre is installed in: its engine's ServiceAccount, RBAC and Lease (default: nvcre-system)"
INSTALL_FLAGS = ("--install-namespace", "-n", "--namespace")  # the name every command uses; -n as `setup` always took it


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `setup` command group."""
    parser = groups.add_parser("setup", help="install nvcre on a cluster, check it, remove it")
    commands = parser.add_subparsers(title="setup commands", metavar="COMMAND", required=True)

    crds = commands.add_parser(
        "crds",
        help="print the CustomResourceDefinitions (pipe to `kubectl apply --server-side -f -`)",
        description="Print the nvcre.nvidia.com/v1alpha1 CustomResourceDefinitions, generated from the API models.",
    )
    crds.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml",
                      help="multi-document YAML (default) or a JSON v1 List")
    crds.add_argument("--kind", action="append", metavar="KIND",
                      help="only this kind (kind, plural or short name; repeatable)")
    add_kube_arguments(crds, namespace_help="accepted for symmetry: CRDs are cluster-scoped and printing them reads no cluster")
    crds.set_defaults(func=print_crds)

    init = commands.add_parser(
        "init", help="install the CRDs, the namespace, the engine's ServiceAccount and RBAC",
        description="Server-side apply (field manager nvcre) of the CRDs, the install namespace, the "
                    "nvcre-engine ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding; "
                    "waits until the CRDs are Established.")
    init.add_argument("--dry-run", action="store_true",
                      help="print what would be applied (validated by a server-side dry run when a cluster is configured)")
    init.add_argument("--sim-runner", action="store_true",
                      help="also let the engine's ServiceAccount write Nodes, for an in-cluster `nvcre controller "
                           "--sim-runner` on a cluster without GPUs (the simulated fleet registers and cordons Nodes)")
    init.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                      help="how long to wait for the CRDs to be Established (default 60)")
    init.add_argument("--force", action="store_true",
                      help="replace CRDs a newer nvcre installed with this version's older schema (a downgrade), or change "
                           "the CRDs' schema while an engine of another version holds the Lease: each refused without it")
    add_kube_arguments(init, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    init.set_defaults(func=init_command)

    controller = commands.add_parser(
        "controller", help="print or apply the Deployment running `nvcre controller` in the install namespace",
        description="Server-side apply (field manager nvcre) of the nvcre-engine Deployment in the install namespace: one "
                    "replica (the nvcre-engine Lease elects the one engine), the engine's ServiceAccount, metrics on the "
                    "port named metrics, a liveness probe on /healthz, non-root with a read-only root filesystem. "
                    "Run `setup init` first; `setup reset` deletes it.")
    controller.add_argument("--image", metavar="IMAGE",  # required: said by check_image, in the words of a bad one
                            help="(required) an image with this package installed and ENTRYPOINT nvcre (the repository's Dockerfile)")
    shown = controller.add_mutually_exclusive_group()  # -o yaml reads no cluster: a dry run beside it would validate nothing
    shown.add_argument("--dry-run", action="store_true",
                       help="print the Deployment, validated by a server-side dry run; nothing applied")
    shown.add_argument("-o", "--output", choices=("yaml",), default=None,
                       help="only print the Deployment as YAML, reading no cluster (for kubectl apply or GitOps)")
    add_kube_arguments(controller, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    controller.set_defaults(func=controller_command)

    status = commands.add_parser(
        "status", help="what is installed: CRDs, RBAC, engine lease, Kubeflow Trainer, GPU Operator, DCGM",
        description="Exit 0 when nvcre's part (CRDs, namespace, RBAC) is installed and current, 1 when not, 2 when that is "
                    "not known: a read of it this user is refused (RBAC; its rows say unknown), or the cluster unreachable.")
    status.add_argument("-o", "--output", choices=("table", "json"), default="table")
    add_kube_arguments(status, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    status.set_defaults(func=status_command)

    reset = commands.add_parser(
        "reset", help="remove what init made (the CRDs, and with them every Certification)",
        description="Delete the controller's Deployment (setup controller), the CRDs (which deletes every Certification, "
                    "Workflow, Job and WorkloadRun), the engine's RBAC and ServiceAccount, and the install namespace.")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.add_argument("--force", action="store_true", help="even while certifications are still running or an engine holds the lease")
    reset.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                       help="how long to wait for the CRDs to be gone (default 120)")
    add_kube_arguments(reset, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    reset.set_defaults(func=reset_command)


# ----- crds -------------------------------------------------------------------------------------------


# The short names before they took the nv prefix (cert-manager owns cert, Argo wf): --kind still understands them,
# so scripts written against them keep working; the CRDs no longer declare them.
FORMER_SHORT_NAMES = {"cert": "Certification", "certs": "Certification", "wf": "Workflow", "wlr": "WorkloadRun"}


def kind_named(name: str) -> type[Resource]:
    """The resource a user means by `name`: its kind, plural or a short name (or a former one), any case."""
    wanted = name.strip().lower()
    wanted = FORMER_SHORT_NAMES.get(wanted, wanted).lower()
    for model in RESOURCES:
        if wanted in {model.KIND.lower(), model.PLURAL, *model.SHORT_NAMES}:
            return model
    known = ", ".join(model.KIND for model in RESOURCES)
    raise InputError(f"--kind: unknown kind {name!r}; known kinds: {known}")


def selected_crds(kinds: list[str] | None) -> list[dict[str, Any]]:
    """The CRDs of the named kinds (all, in API order, when none are named), stamped as `setup init` applies them: CRDs
    applied from this output read as this nvcre's to `setup status` and the engine."""
    models = RESOURCES if not kinds else tuple(dict.fromkeys(kind_named(kind) for kind in kinds))
    return [stamped(crd_for(model)) for model in models]


def print_crds(args: argparse.Namespace) -> int:
    """Print the CRDs as multi-document YAML or a JSON List."""
    crds = selected_crds(args.kind)
    if args.output == "json":
        print(to_json({"apiVersion": "v1", "kind": "List", "items": crds}))
    else:
        print(to_yaml(crds), end="")
    return 0


# ----- shared -----------------------------------------------------------------------------------------


MAX_WAIT_SECONDS = 86_400.0


def _seconds(text: str) -> float:
    """A --timeout value: seconds, >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number), got {text!r}") from None
    if not 0 <= value <= MAX_WAIT_SECONDS:  # also NaN and inf
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_WAIT_SECONDS:g} seconds (a day), got {text!r}")
    return value


def _namespace(args: argparse.Namespace) -> str:
    from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE

    return check_namespace(args.namespace, "--install-namespace") or INSTALL_NAMESPACE


def _say(text: str) -> None:
    say(text)


async def _on_cluster(args: argparse.Namespace, command: str,
                      body: Callable[[KubeStore, Clock], Awaitable[int]], clock: Clock | None = None) -> int:
    """Run `body` with a store on the cluster the flags name; a store error (refused, unreachable, unauthorized)
    is one line and exit 2, as for every other command."""
    from nvcre_tui.engine.store.errors import StoreError

    clock = clock or SystemClock()
    store = await open_kube_store(args, user_agent=USER_AGENT, clock=clock)
    try:
        return await body(store, clock)
    except StoreError as error:
        _say(f"nvcre setup {command}: {' '.join(error.message.split())}")
        return EXIT_BAD_INPUT
    finally:
        await store.close()


def resource_ref(obj: dict[str, Any]) -> str:
    """How kubectl names an object in its output: `customresourcedefinition.apiextensions.k8s.io/NAME`."""
    from nvcre_tui.engine.store.protocol import kind_of

    kind = kind_of(obj)
    return f"{kind.kind.lower()}{'.' + kind.group if kind.group else ''}/{obj['metadata']['name']}"


# ----- init -------------------------------------------------------------------------------------------


def init_command(args: argparse.Namespace) -> int:
    """Apply what nvcre needs; with --dry-run, print it."""
    from nvcre_tui.engine.kube.config import cluster_configured
    from nvcre_tui.engine.kube.install import install_objects

    objects = install_objects(_namespace(args), simulator=args.sim_runner)
    if args.dry_run and not cluster_configured(args.kubeconfig):
        _say("# no cluster configured: offline render, not validated by a server")
        print(to_yaml(objects), end="")
        return EXIT_OK
    return asyncio.run(_on_cluster(args, "init", lambda store, clock: apply_install(store, clock, objects, args)))


async def apply_install(store: KubeStore, clock: Clock, objects: list[dict[str, Any]], args: argparse.Namespace,
                        out: Callable[[str], None] = print, *, raising: bool = False) -> int:
    """Server-side apply of every object in order, then wait for the CRDs to be Established. Progress goes to
    `out` (stdout; `run --setup`, whose stdout is the report: stderr). A failure is one line and EXIT_FAILED, or with
    `raising` (`run --setup`, which stops on it) an InputError of that one line."""

    def failed(line: str) -> int:
        if raising:
            raise InputError(line)
        _say(line)
        return EXIT_FAILED

    from nvcre_tui.engine.kube.install import FIELD_MANAGER
    from nvcre_tui.engine.store.errors import NotFound, Timeout, Unavailable
    from nvcre_tui.engine.store.protocol import CRD, NAMESPACE, kind_of

    namespace = _namespace(args)
    namespace_exists = True
    try:
        found = await store.get(NAMESPACE, namespace)
    except NotFound:
        namespace_exists = False
    except (Unavailable, Timeout) as error:
        if not args.dry_run:
            raise
        # configured but not reachable (refused, or no answer): still show what would be applied
        _say(f"# cluster unreachable ({' '.join(error.message.split())}): offline render, not validated by a server")
        print(to_yaml(objects), end="")
        return EXIT_OK
    else:
        if found["metadata"].get("deletionTimestamp"):
            # Nothing can be created in it (403), so checked before the CRDs are applied: nothing half-installed.
            # The same words as every other command that meets it (setup status, run, the controller).
            from nvcre_tui.engine.kube.installs import install_namespaces, terminating

            return failed(f"nvcre setup init: {terminating(namespace, await install_namespaces(store))}")
    from nvcre_tui.engine.kube.install import made_by_init, namespace_object
    from nvcre_tui.engine.kube.installs import INSTALL_FLAG, install_namespaces

    # One install per cluster: the CRDs, ClusterRoles and the engine's ClusterRoleBinding are cluster-wide (applying them
    # for another namespace rebound the first install's engine out of its rights), and each install's Lease would elect
    # its own engine over the same certifications. Checked before anything is applied. Re-applying an install that is
    # there is an upgrade, allowed even where an older init left a second install beside it: that one's engine stays
    # bound (its subjects are kept in the cluster-wide bindings).
    installs = await install_namespaces(store) or []
    others = [name for name in installs if name != namespace]
    if others and namespace not in installs:
        # raised, not said: `run --setup` then ends on this one line too (exit 2)
        raise InputError(f"nvcre setup init: nvcre is installed in namespace {', '.join(others)}, and a cluster holds one "
                         f"install (its CRDs, ClusterRoles and the engine's ClusterRoleBinding are cluster-wide): pass "
                         f"{INSTALL_FLAG} {others[0]}, or move it with "
                         f"{' then '.join(f'`nvcre setup reset {INSTALL_FLAG} {name}`' for name in others)} first (nothing applied)")
    if others:
        objects = await _keep_other_subjects(store, objects, others)
    installed = await _installed_schema(store, objects)
    if installed is not None and installed.order == "newer" and not getattr(args, "force", False):
        from nvcre_tui.engine.kube.install import THIS_NVCRE

        raise InputError(f"nvcre setup init: the CRDs were installed by {installed.installed_by}, newer than this "
                         f"{THIS_NVCRE}: applying this version's would downgrade them (an engine of the newer version then "
                         f"refuses them); use nvcre {installed.newest_version or 'that version'} or later, or downgrade with "
                         "`nvcre setup init --force` (nothing applied)")
    if installed is not None and installed.order != "same":
        from nvcre_tui.cli.init_checks import change_under, engines_under, refusal

        # An engine holding the Lease runs on the CRDs this would change: said before anything is applied
        if engines := await engines_under(store, clock, [namespace, *installs], installed):
            if args.dry_run:
                _say(f"nvcre setup init: {change_under(engines, installed)} (a dry run: nothing applied)")
            elif not getattr(args, "force", False):
                raise InputError(refusal(engines, installed))
            else:
                _say(f"nvcre setup init: --force: {change_under(engines, installed)}")
    # A namespace that was there before (a team's) is used, never claimed: reset leaves it, and what else it holds
    made = made_by_init(found if namespace_exists else None)
    objects = [namespace_object(namespace, made=made) if obj["kind"] == NAMESPACE.kind else obj for obj in objects]
    if not args.dry_run and (refused := await _refused(store, objects, namespace_exists)) is not None:
        raise InputError(f"nvcre setup init: {refused}; setup init needs a cluster admin (nothing applied)")
    suffix = " (server dry run)" if args.dry_run else ""
    for obj in objects:
        kind = kind_of(obj)
        if args.dry_run and kind.namespaced and not namespace_exists:
            # a dry run creates nothing, so objects in the namespace it would create cannot be checked
            _say(f"{resource_ref(obj)} not validated (namespace {namespace} does not exist yet)")
            continue
        await store.apply(kind, obj, field_manager=FIELD_MANAGER, force=True, dry_run=args.dry_run)
        (_say if args.dry_run else out)(f"{resource_ref(obj)} serverside-applied{suffix}"
                                        + ("" if made or kind is not NAMESPACE else " (it existed before: `setup reset` will leave it)"))
    if not args.sim_runner:
        await _revoke_simulator(store, namespace, dry_run=args.dry_run, out=out)
    if args.dry_run:
        print(to_yaml(objects), end="")
        return EXIT_OK
    crds = [obj for obj in objects if obj["kind"] == CRD.kind]
    deadline = clock.monotonic() + args.timeout
    waiting = await wait_crds(store, clock, [crd["metadata"]["name"] for crd in crds], lambda crd: crd.established, args.timeout)
    if not waiting:
        # Established is not served yet: the server's handlers learn of it a moment later and answer 404 meanwhile,
        # so a `certification run` right after init would find nvcre "not installed".
        waiting = await wait_served(store, clock, crds, deadline - clock.monotonic())
    if waiting:
        return failed(f"nvcre setup init: CRDs not Established and served after {args.timeout:g}s: {', '.join(waiting)}")
    out(f"nvcre is installed in namespace {namespace}{_schema_change(installed)}")
    return EXIT_OK


async def _installed_schema(store: KubeStore, objects: list[dict[str, Any]]) -> InstalledSchema | None:
    """What the CRDs init would replace say of the nvcre that installed them (None: none there, or not readable:
    the dry run of each then says why)."""
    from nvcre_tui.engine.kube.install import installed_schema
    from nvcre_tui.engine.store.errors import Forbidden, NotFound
    from nvcre_tui.engine.store.protocol import CRD

    stored = []
    for crd in (obj for obj in objects if obj["kind"] == CRD.kind):
        try:
            stored.append(await store.get(CRD, crd["metadata"]["name"]))
        except NotFound:
            continue
        except Forbidden:
            return None
    return installed_schema(stored)


def _schema_change(installed: InstalledSchema | None) -> str:
    """What init did to the CRDs another version had installed (nothing said when they were this version's)."""
    from nvcre_tui.engine.kube.install import THIS_NVCRE

    if installed is None or installed.order == "same":
        return ""
    did = {"older": "upgraded", "newer": "downgraded (--force)", "other": "replaced"}[installed.order]
    return f" (CRDs {did} from {installed.installed_by} to {THIS_NVCRE})"


def _engine_subject(subject: Obj, namespaces: list[str]) -> bool:
    """Whether a binding subject is the engine ServiceAccount of one of `namespaces`."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME

    return (subject.get("kind") == "ServiceAccount" and subject.get("name") == ENGINE_NAME
            and subject.get("namespace") in namespaces)


async def _keep_other_subjects(store: KubeStore, objects: list[Obj], others: list[str]) -> list[Obj]:
    """`objects` with each cluster-wide binding's subjects extended by the other installs' engine ServiceAccounts the live
    binding names (an older init left a second install): re-applying one install does not unbind the other's engine."""
    from nvcre_tui.engine.store.errors import Forbidden, NotFound
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE_BINDING

    result = []
    for obj in objects:
        if obj["kind"] == CLUSTER_ROLE_BINDING.kind:
            try:
                live = await store.get(CLUSTER_ROLE_BINDING, obj["metadata"]["name"])
            except (NotFound, Forbidden):  # none yet, or not readable (the dry run then says why)
                live = {}
            kept = [subject for subject in live.get("subjects") or [] if _engine_subject(subject, others)]
            obj = {**obj, "subjects": [*obj.get("subjects", []), *(s for s in kept if s not in obj.get("subjects", []))]}
        result.append(obj)
    return result


async def _drop_subjects(store: KubeStore, name: str, namespace: str) -> str:
    """Take `namespace`'s engine ServiceAccount out of the cluster-wide binding `name`, which other installs' engines share:
    "deleted" (it named only this one), "updated", or "absent"."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE_BINDING

    try:
        live = await store.get(CLUSTER_ROLE_BINDING, name)
    except NotFound:
        return "absent"
    subjects = live.get("subjects") or []
    rest = [subject for subject in subjects if not _engine_subject(subject, [namespace])]
    if not rest:
        await store.delete(CLUSTER_ROLE_BINDING, name, None)
        return "deleted"
    if rest != subjects:
        live["subjects"] = rest
        await store.update(CLUSTER_ROLE_BINDING, live)
        return "updated"
    return "absent"


async def _revoke_simulator(store: KubeStore, namespace: str, *, dry_run: bool = False, out: Callable[[str], None] = print) -> None:
    """init without --sim-runner takes back the simulated fleet's Node rights an earlier `init --sim-runner`
    granted (binding first): the engine's own rules never write Nodes, and a re-init is how an SRE moves from
    the simulator to real GPUs."""
    from nvcre_tui.engine.kube.install import simulator_objects
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE_BINDING, kind_of

    for obj in reversed(simulator_objects(namespace)):
        kind, name = kind_of(obj), obj["metadata"]["name"]
        if kind == CLUSTER_ROLE_BINDING and not dry_run:
            try:
                live = await store.get(kind, name)
            except NotFound:
                continue
            if any(not _engine_subject(subject, [namespace]) for subject in live.get("subjects") or []):
                # another install's engine is bound too (an older init left two): only this one's rights go
                if await _drop_subjects(store, name, namespace) == "updated":
                    out(f"{resource_ref(obj)} updated: the engine of namespace {namespace} unbound (init without --sim-runner)")
                return
        try:
            await store.get(kind, name)  # a read first: a fresh install sends no delete
            if dry_run:
                _say(f"{resource_ref(obj)} would be deleted (init without --sim-runner takes the simulator's Node rights back)")
                continue
            await store.delete(kind, name, None)
        except NotFound:
            continue
        out(f"{resource_ref(obj)} deleted (init without --sim-runner takes the simulator's Node rights back)")


async def wait_crds(store: KubeStore, clock: Clock, names: list[str], done: Callable[[CrdState], bool],
                    timeout: float, poll: float = 0.5) -> list[str]:
    """Poll the named CRDs until `done` holds for each; the names still waiting at the timeout."""
    from nvcre_tui.engine.kube.status import crd_state
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CRD

    deadline = clock.monotonic() + timeout
    waiting = list(names)
    while True:
        still = []
        for name in waiting:
            try:
                crd = await store.get(CRD, name)
            except NotFound:
                crd = None
            if not done(crd_state(name, crd)):
                still.append(name)
        waiting = still
        if not waiting or clock.monotonic() >= deadline:
            return waiting
        await clock.sleep(poll)


async def wait_served(store: KubeStore, clock: Clock, crds: list[dict[str, Any]], timeout: float,
                      poll: float = 0.2) -> list[str]:
    """Poll discovery until each CRD's kind is served (listed under its group/version); the names still waiting."""
    deadline = clock.monotonic() + timeout
    while True:
        waiting = []
        for crd in crds:
            spec = crd["spec"]
            version = next(v["name"] for v in spec["versions"] if v.get("storage"))
            served = await store.served_resources(f"{spec['group']}/{version}") or []
            if not any(resource.get("name") == spec["names"]["plural"] for resource in served):
                waiting.append(crd["metadata"]["name"])
        if not waiting or clock.monotonic() >= deadline:
            return waiting
        await clock.sleep(poll)


# ----- controller -------------------------------------------------------------------------------------


def controller_command(args: argparse.Namespace) -> int:
    """Print (-o yaml), dry-run or apply the controller's Deployment; its flags checked before any cluster is read."""
    from nvcre_tui.engine.kube.deployment import check_image, controller_deployment

    deployment = controller_deployment(check_image(args.image), _namespace(args))
    if args.output == "yaml":
        print(to_yaml([deployment]), end="")
        return EXIT_OK
    return asyncio.run(_on_cluster(args, "controller", lambda store, clock: apply_controller(store, deployment, args)))


async def apply_controller(store: KubeStore, deployment: Obj, args: argparse.Namespace) -> int:
    """Server-side apply (or its dry run) of the Deployment into an install namespace; one line and exit 2 where
    nvcre is not installed there (its ServiceAccount would be missing: the pods would never be created)."""
    from nvcre_tui.engine.kube.install import FIELD_MANAGER
    from nvcre_tui.engine.kube.installs import INSTALL_FLAG, install_namespaces, require_install
    from nvcre_tui.engine.store.protocol import DEPLOYMENT

    namespace = deployment["metadata"]["namespace"]
    if (why := await require_install(store, namespace)) is not None:
        raise InputError(f"nvcre setup controller: {why[0]} (nothing applied)")
    installs = await install_namespaces(store)
    if installs is not None and namespace not in installs:  # a namespace, but not one setup init installed into
        where = f"pass {INSTALL_FLAG} {installs[0]}" if installs else f"run `nvcre setup init {INSTALL_FLAG} {namespace}` first"
        raise InputError(f"nvcre setup controller: nvcre is not installed in namespace {namespace} (no engine ServiceAccount "
                         f"there); {where} (nothing applied)")
    await store.apply(DEPLOYMENT, deployment, field_manager=FIELD_MANAGER, force=True, dry_run=args.dry_run)
    if args.dry_run:
        _say(f"{resource_ref(deployment)} serverside-applied (server dry run)")
        print(to_yaml([deployment]), end="")
        return EXIT_OK
    print(f"{resource_ref(deployment)} serverside-applied")
    print(f"nvcre controller runs from {args.image} in namespace {namespace} (one replica: the nvcre-engine Lease elects "
          f"the engine); its pod is made by the cluster's controller-manager: kubectl -n {namespace} get pods")
    return EXIT_OK


# ----- status -----------------------------------------------------------------------------------------


def status_command(args: argparse.Namespace) -> int:
    """Report what is installed; exit 0 when our part is, 1 when not, 2 when not known (a read of it refused)."""
    return asyncio.run(_on_cluster(args, "status", lambda store, clock: show_status(store, clock, args)))


async def show_status(store: KubeStore, clock: Clock, args: argparse.Namespace) -> int:
    from nvcre_tui.engine.kube.status import probe

    await store.served_groups()  # credentials the server refuses are one line, not a table of "unknown" rows
    status = await probe(store, clock, _namespace(args))
    if args.output == "json":
        print(to_json(status.to_json()))
    else:
        print_table(("CHECK", "STATE", "DETAIL"), status_rows(status))
    if (unread := unreadable_summary(status)) is not None:  # on stderr: stdout stays the table, or JSON
        _say(f"nvcre setup status: {unread}")
    if status.install_unknown:  # a read refused (RBAC) is exit 2, as a refused or unreachable read is for every command
        return EXIT_BAD_INPUT
    return EXIT_OK if status.installed else EXIT_FAILED


# ----- reset ------------------------------------------------------------------------------------------


def reset_command(args: argparse.Namespace) -> int:
    """Remove what init made, after checks and confirmation."""
    return asyncio.run(_on_cluster(args, "reset", lambda store, clock: remove_install(store, clock, args)))


def _confirm(question: str) -> bool:
    """Ask on the terminal; without one, refuse (a script must say --yes)."""
    if not sys.stdin or not sys.stdin.isatty():
        raise InputError("nvcre setup reset: refusing to delete without confirmation: stdin is not a terminal; pass --yes")
    _say(question)
    print("Continue? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


async def remove_install(store: KubeStore, clock: Clock, args: argparse.Namespace) -> int:
    """Delete, in this order: the engine's Lease and the fleet's ConfigMap, the Nodes --sim-runner registered, the
    CRDs (their objects go with them), the RBAC; then what only nvcre objects owned (no garbage collector may run),
    and last the namespace."""
    from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_objects, install_parts, made_by_init
    from nvcre_tui.engine.kube.leftovers import delete_leftovers, delete_own_events, deleted_lines
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CRD, NAMESPACE, kind_of

    namespace = _namespace(args)
    refusal, running = await reset_refusal(store, clock, namespace, force=args.force)
    if refusal is not None:
        _say(f"nvcre setup reset: {refusal}")
        return EXIT_BAD_INPUT
    try:
        existing: dict[str, Any] | None = await store.get(NAMESPACE, namespace)
    except NotFound:
        existing = None
    # A namespace init did not create (a team's, where nvcre was installed): what nvcre put there goes, the namespace
    # and whatever else it holds stay. Deleting it would have taken all of that along.
    keep = existing is not None and not made_by_init(existing)
    from nvcre_tui.engine.kube.installs import installs_with

    installs = await installs_with(store, namespace) or []
    others = [name for name in installs if name != namespace] if namespace in installs else []
    if others:  # one of two installs: only this namespace's own objects go, what is shared stays with the other
        return await _remove_one_of_two(store, clock, args, namespace, others, existing, keep=keep)
    if not args.yes and not _confirm(
            f"This deletes the nvcre CRDs and with them every Certification, Workflow, Job and WorkloadRun in "
            f"every namespace ({running} still running), the engine's RBAC, "
            f"{f'nvcre objects in the namespace {namespace} (which stays)' if keep else f'the namespace {namespace}'}, and the "
            "Nodes --sim-runner registered."):
        _say("nvcre setup reset: nothing deleted")
        return EXIT_FAILED
    objects = install_objects(namespace, simulator=True)  # the simulator's rights too, if init granted them
    if keep:
        objects = [obj for obj in objects if obj["kind"] != NAMESPACE.kind]
    # What `setup controller`, the engine and the simulated fleet made in the namespace, before it: a namespace that still holds objects
    # waits for kube-controller-manager to empty it, which a bare API server does not have.
    made = await _made_in(store, namespace)
    registered, strangers = await _simulated_nodes(store)
    # before the CRDs take every certification along, and before a Lease or a Node goes: nothing half-deleted
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": node["metadata"]["name"]}} for node in registered]
    if (refused := await _may_not_delete(store, [*made, *nodes, *objects])) is not None:
        _say(f"nvcre setup reset: this user may not delete {refused} (RBAC); setup reset needs a cluster admin (nothing deleted)")
        return EXIT_BAD_INPUT
    part_of = {resource_ref(obj): part for part, members in install_parts(namespace, simulator=True) for obj in members}
    absent: list[str] = []
    crds = [o for o in objects if o["kind"] == CRD.kind]
    rest = [o for o in reversed(objects) if o["kind"] != CRD.kind]  # bindings before roles, namespace last
    for leftover in made:
        try:
            await store.delete(kind_of(leftover), leftover["metadata"]["name"], namespace)
            print(f"{resource_ref(leftover)} deleted")
        except NotFound:
            pass
    await _remove_simulated_nodes(store, registered, strangers)
    await _complete_collector_deletions(store)
    for obj in [*crds, *rest]:
        meta = obj["metadata"]
        try:
            await store.delete(kind_of(obj), meta["name"], meta.get("namespace"))
            print(f"{resource_ref(obj)} deleted")
        except NotFound:
            absent.append(resource_ref(obj))
    _say_absent(absent, part_of, namespace, everything=len(absent) == len(objects) and existing is None)
    if keep:  # nvcre's label taken back (server-side apply releases what its manager no longer sets): no install there
        await store.apply(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                          field_manager=FIELD_MANAGER, force=True)
        print(f"namespace/{namespace} kept: setup init did not create it (nvcre's label removed)")
    remaining = await wait_crds(store, clock, [c["metadata"]["name"] for c in crds], lambda crd: not crd.present,
                                args.timeout)
    if remaining:  # said, and the rest is still removed: the namespace does not wait for the CRDs
        _say(f"nvcre setup reset: CRDs still being deleted after {args.timeout:g}s: {', '.join(remaining)} "
             f"({await _what_holds_the_crds(store)})")
    deleted, kept = await delete_leftovers(store)  # no garbage collector (an API server alone) leaves them
    for line in deleted_lines(deleted):
        print(line)
    if kept:
        _say(f"nvcre setup reset: {count(len(kept), 'object')} whose nvcre owners are gone could not be deleted: "
             f"{'; '.join(kept[:3])}{' ...' if len(kept) > 3 else ''}")
    code = EXIT_FAILED if remaining else EXIT_OK
    if keep:
        return code
    if events := await delete_own_events(store, namespace):
        print(f"deleted {count(events, 'Event')} nvcre wrote in namespace {namespace} about the objects reset removed")
    wait = min(args.timeout, NAMESPACE_WAIT_SECONDS)
    left = await _still_there(store, clock, namespace, wait)
    if left is None:
        return code
    if _controlled(left):  # kube-controller-manager is emptying it: pods may take their grace period
        if await _still_there(store, clock, namespace, max(args.timeout - wait, 0.0)) is not None:
            _say(f"nvcre setup reset: namespace {namespace} is still being removed by its namespace controller after "
                 f"{args.timeout:g}s (pods ending their grace period, finalizers); `setup init` waits for it to be gone")
        return code
    return max(code, await _finalize_empty_namespace(store, clock, namespace, wait))


async def _made_in(store: KubeStore, namespace: str) -> list[Obj]:
    """What nvcre made in the install namespace beside init's objects, in the order reset deletes them: `setup
    controller`'s Deployment first (its engine would take a Lease deleted before it again), the engine's Lease, the
    simulated fleet's ConfigMap. The Deployment only when it is there: a user who may reset an install without one need
    not be allowed to read or delete Deployments (one who may not read them leaves it to the namespace's deletion)."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME
    from nvcre_tui.engine.lease import LEASE_NAME
    from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP
    from nvcre_tui.engine.store.errors import Forbidden, NotFound
    from nvcre_tui.engine.store.protocol import CONFIGMAP, DEPLOYMENT, LEASE

    made = [(LEASE, LEASE_NAME), (CONFIGMAP, FLEET_CONFIGMAP)]
    try:
        await store.get(DEPLOYMENT, ENGINE_NAME, namespace)
        made.insert(0, (DEPLOYMENT, ENGINE_NAME))
    except (NotFound, Forbidden):
        pass
    return [{"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": name, "namespace": namespace}}
            for kind, name in made]


async def _complete_collector_deletions(store: KubeStore) -> None:
    """nvcre objects a foreground or orphan deletion left to a garbage collector (engine/kube/held.py): the CRDs'
    deletion waits for them, and an API server alone never removes them; deleted again in the background, they go."""
    from nvcre_tui.engine.kube.held import release_collector_holds

    completed, failed = await release_collector_holds(store)
    for what in completed:
        print(f"{what} deleted: only a garbage collector removes that finalizer, and the CRDs' deletion waits for it")
    for what in failed:
        _say(f"nvcre setup reset: could not complete the deletion of {what}")


async def _what_holds_the_crds(store: KubeStore) -> str:
    """Why the CRDs are still there: the objects finalizers hold (by whom they must be released), or that their
    objects are still being removed."""
    from nvcre_tui.engine.kube.held import describe, held

    holding = [describe(kind, obj) for kind, obj in await held(store)]
    if not holding:
        return "their objects are being removed"
    return (f"{count(len(holding), 'object')} held by finalizers nobody removed: {'; '.join(holding[:3])}"
            f"{' ...' if len(holding) > 3 else ''}; whoever set them removes them, then the CRDs go")


async def _remove_one_of_two(store: KubeStore, clock: Clock, args: argparse.Namespace, namespace: str, others: list[str],
                             existing: Obj | None, *, keep: bool) -> int:
    """Reset of one install where an older init left another beside it: the CRDs (every Certification with them), the
    ClusterRoles and the simulated Nodes are shared, and stay; this namespace's objects go (the namespace itself when init
    made it, else nvcre's label), and its engine leaves the cluster-wide bindings."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_objects
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE_BINDING, NAMESPACE, kind_of

    elsewhere = ", ".join(others)
    if not args.yes and not _confirm(
            f"nvcre is also installed in namespace {elsewhere}: this deletes only "
            f"{f'nvcre objects in the namespace {namespace} (which stays)' if keep else f'the namespace {namespace}'} and its "
            f"engine's place in the cluster-wide bindings; the CRDs, every Certification and the ClusterRoles stay for {elsewhere}."):
        _say("nvcre setup reset: nothing deleted")
        return EXIT_FAILED
    objects = [obj for obj in install_objects(namespace, simulator=True)
               if kind_of(obj).namespaced or (obj["kind"] == NAMESPACE.kind and existing is not None and not keep)]
    made = await _made_in(store, namespace)
    bindings = [obj["metadata"]["name"] for obj in install_objects(namespace, simulator=True) if obj["kind"] == CLUSTER_ROLE_BINDING.kind]
    refused = await _may_not_delete(store, [*made, *objects])
    refused = refused and f"delete {refused}"
    for name in bindings:
        if refused is None and await allowed(store, "update", CLUSTER_ROLE_BINDING, None, name) is False:
            refused = f"update ClusterRoleBinding {name}"
    if refused is not None:
        _say(f"nvcre setup reset: this user may not {refused} (RBAC); setup reset needs a cluster admin (nothing deleted)")
        return EXIT_BAD_INPUT
    for name in bindings:
        if await _drop_subjects(store, name, namespace) != "absent":
            print(f"clusterrolebinding.rbac.authorization.k8s.io/{name} updated: the engine of namespace {namespace} unbound")
    for obj in [*made, *reversed(objects)]:
        meta = obj["metadata"]
        try:
            await store.delete(kind_of(obj), meta["name"], meta.get("namespace"))
            print(f"{resource_ref(obj)} deleted")
        except NotFound:
            pass
    if keep:
        await store.apply(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                          field_manager=FIELD_MANAGER, force=True)
        print(f"namespace/{namespace} kept: setup init did not create it (nvcre's label removed)")
    print(f"left the CRDs (and every Certification) and the ClusterRoles: nvcre is also installed in namespace {elsewhere}")
    if keep or existing is None:
        return EXIT_OK
    wait = min(args.timeout, NAMESPACE_WAIT_SECONDS)
    left = await _still_there(store, clock, namespace, wait)
    if left is None or _controlled(left):
        return EXIT_OK
    return await _finalize_empty_namespace(store, clock, namespace, wait)


async def _refused(store: KubeStore, objects: list[dict[str, Any]], namespace_exists: bool) -> str | None:
    """Why the server would refuse one of `objects` (RBAC, its escalation check, validation), found before any is
    applied: a server-side dry run of each (RBAC's question where its namespace does not exist yet). A user who may
    apply CRDs but not ClusterRoles left the CRDs, the namespace and the ServiceAccount behind."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.kube.install import FIELD_MANAGER
    from nvcre_tui.engine.store.errors import Forbidden, Invalid, NotFound
    from nvcre_tui.engine.store.protocol import ROLE, ROLE_BINDING, kind_of

    for obj in objects:
        kind, meta = kind_of(obj), obj["metadata"]
        if kind.namespaced and not namespace_exists:
            if await allowed(store, "patch", kind, meta.get("namespace"), meta["name"]) is False:
                return f"{resource_ref(obj)}: this user may not patch {kind.plural} in namespace {meta.get('namespace')}"
            # RBAC's own check on a role or binding, which a dry run would have made: asked of it right by right
            role = obj if kind == ROLE else _applied_role(obj, objects) if kind == ROLE_BINDING else None
            if role is not None and (why := await (_may_not_grant(store, role) if role is obj else
                                                   _may_not_bind(store, obj, role))) is not None:
                return f"{resource_ref(obj)}: {why}"
            continue
        try:
            await store.apply(kind, obj, field_manager=FIELD_MANAGER, force=True, dry_run=True)
        except (Forbidden, Invalid) as error:
            return " ".join(str(error).split())  # it names the object
        except NotFound:
            # A binding's dry run before its role exists (a dry run creates none): RBAC admits a binding by one who may
            # `bind` its role, else reads the role to see whether that user holds every right it grants, and so answers
            # NotFound. Where init applies that role, asked of RBAC instead, as the server will judge it once it exists.
            role = _applied_role(obj, objects)
            if role is None:
                raise
            if (why := await _may_not_bind(store, obj, role)) is not None:
                return f"{resource_ref(obj)}: {why}"
    return None


def _applied_role(binding: Obj, objects: list[Obj]) -> Obj | None:
    """The role among `objects` that `binding` refers to (None: not a binding, or its role is not init's)."""
    ref = binding.get("roleRef")
    if not isinstance(ref, dict):
        return None
    namespace = binding["metadata"].get("namespace") if ref.get("kind") == "Role" else None
    return next((obj for obj in objects if obj["kind"] == ref.get("kind") and obj["metadata"]["name"] == ref.get("name")
                 and obj["metadata"].get("namespace") == namespace), None)


async def _may_not_bind(store: KubeStore, binding: Obj, role: Obj) -> str | None:
    """Why RBAC would refuse this identity `binding` to `role` once the role exists, or None: it may `bind` the role, or
    it holds every right the role grants where the binding applies (RBAC's escalation check, asked right by right)."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, ROLE

    namespace = binding["metadata"].get("namespace")
    role_kind = ROLE if role["kind"] == ROLE.kind else CLUSTER_ROLE
    if await allowed(store, "bind", role_kind, namespace, role["metadata"]["name"]) is not False:
        return None  # allowed, or the server would not say: the apply itself answers
    if (unheld := await _first_unheld(store, role, namespace)) is not None:
        return (f"this user may not bind {role['kind']} {role['metadata']['name']} (RBAC: no bind on it, and it does not "
                f"hold every right the role grants, such as {unheld})")
    return None


async def _may_not_grant(store: KubeStore, role: Obj) -> str | None:
    """Why RBAC would refuse this identity `role` (its escalation check: `escalate` on it, or every right it grants held
    where it applies), or None. For a Role in a namespace that does not exist yet, where no dry run can ask the server."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, ROLE

    namespace = role["metadata"].get("namespace")
    role_kind = ROLE if role["kind"] == ROLE.kind else CLUSTER_ROLE
    if await allowed(store, "escalate", role_kind, namespace, role["metadata"]["name"]) is not False:
        return None
    if (unheld := await _first_unheld(store, role, namespace)) is not None:
        return (f"this user may not grant the rights of {role['kind']} {role['metadata']['name']} (RBAC: no escalate on "
                f"it, and it does not hold every right the role grants, such as {unheld})")
    return None


async def _first_unheld(store: KubeStore, role: Obj, namespace: str | None) -> str | None:
    """The first right `role` grants that RBAC does not give this identity in `namespace` (cluster-wide: None), as
    "get pods/log"; None when it holds them all, or the server would not say."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import ResourceKind

    for rule in role.get("rules") or []:
        for verb in rule.get("verbs") or []:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    plural, _, sub = resource.partition("/")
                    for name in rule.get("resourceNames") or [None]:
                        if await allowed(store, verb, ResourceKind(group, "", "", plural), namespace, name, sub or None) is False:
                            return f"{verb} {resource}{'.' + group if group else ''}{' ' + name if name else ''}"
    return None


async def _may_not_delete(store: KubeStore, objects: list[dict[str, Any]]) -> str | None:
    """The first of `objects` RBAC would not let this identity delete ("ClusterRole nvcre-engine"), asked of the server
    before anything goes: a user who may delete the CRDs but not the RBAC took every certification and left the rest."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import kind_of

    for obj in objects:
        meta = obj["metadata"]
        if await allowed(store, "delete", kind_of(obj), meta.get("namespace"), meta["name"]) is False:
            return f"{obj['kind']} {meta['name']}" + (f" in namespace {meta['namespace']}" if meta.get("namespace") else "")
    return None


def _say_absent(absent: list[str], part_of: dict[str, str], namespace: str, *, everything: bool) -> None:
    """One line for what reset found already gone, none for a part of nvcre that install never had (an older version's
    init made no users' roles; only `--sim-runner` grants the simulator's rights): "not found" for each read as a fault."""
    from nvcre_tui.engine.kube.install import CORE_PART

    if everything:
        print(f"nvcre is not installed (namespace {namespace}): none of what setup init makes was there")
        return
    missing = set(absent)
    whole = {part for part in set(part_of.values()) - {CORE_PART}
             if all(ref in missing for ref, of in part_of.items() if of == part)}
    shown = [ref for ref in absent if part_of[ref] not in whole]
    if shown:
        print(f"already absent: {', '.join(shown)}")


async def _simulated_nodes(store: KubeStore) -> tuple[list[Obj], list[str]]:
    """The Nodes `--sim-runner` registered, and the names of those labelled simulated that it did not. Registered means
    the simulator itself set their simulated label (the server's managedFields say who set each field, on any API
    server, and for the Nodes an older nvcre registered too): a Node merely labelled simulated (a real one someone
    labelled, a copy of a simulated one) is never deleted."""
    from nvcre_tui.engine.sim.fleet import registered_by_simulator
    from nvcre_tui.engine.store.protocol import NODE

    # every Node, not those labelled simulated: an older simulator registered its Nodes without the label
    nodes = (await store.list(NODE)).items
    return ([node for node in nodes if registered_by_simulator(node)],
            [node["metadata"]["name"] for node in nodes
             if (node["metadata"].get("labels") or {}).get(LABEL_SIMULATED) == "true" and not registered_by_simulator(node)])


async def _remove_simulated_nodes(store: KubeStore, registered: list[Obj], strangers: list[str]) -> None:
    """Delete the Nodes `--sim-runner` registered (left behind they look like Ready GPU nodes that a later run targets),
    said in one line, not one per Node; one line names those labelled simulated that it did not register, which stay."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import NODE

    deleted = []
    for node in registered:
        try:
            await store.delete(NODE, node["metadata"]["name"])
            deleted.append(node["metadata"]["name"])
        except NotFound:
            pass
    if deleted:
        print(f"deleted the {count(len(deleted), 'simulated Node')} --sim-runner registered: {listed(deleted, 3)}")
    if strangers:
        _say(f"nvcre setup reset: left {count(len(strangers), 'Node')} labelled {LABEL_SIMULATED}=true that the simulator did not "
             f"register (another client set that label): {listed(strangers, 3)}; nvcre never deletes a Node it did not make")


def _controlled(namespace: Obj) -> bool:
    """Whether a namespace controller works on this Terminating namespace: it sets the Namespace*  conditions
    (NamespaceContentRemaining, ...) from its first pass; an API server alone never does."""
    return bool((namespace.get("status") or {}).get("conditions"))


NAMESPACE_WAIT_SECONDS = 5.0  # kube-controller-manager empties and removes a namespace in seconds; a bare API server never
def _no_namespace_controller(namespace: str) -> str:
    from nvcre_tui.engine.kube.installs import finalize_command

    return ("kube-controller-manager's namespace controller removes it; an API server without one never does: once it "
            f"holds nothing, remove its finalizer with `{finalize_command(namespace)}`")


async def _finalize_empty_namespace(store: KubeStore, clock: Clock, namespace: str, wait: float) -> int:
    """A namespace still Terminating: no namespace controller empties and removes it (an API server alone). When it
    holds nothing, nvcre does the controller's last step (it removes the `kubernetes` finalizer); else it says what
    holds it, and deletes none of that."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import NAMESPACE

    held = await _namespace_contents(store, namespace)
    if held:
        _say(f"nvcre setup reset: namespace {namespace} is still Terminating after {wait:g}s and holds {', '.join(held)}; "
             f"`setup init` cannot install into it until it is gone ({_no_namespace_controller(namespace)})")
        return EXIT_FAILED
    try:
        found = await store.get(NAMESPACE, namespace)
        found.setdefault("spec", {})["finalizers"] = [f for f in found["spec"].get("finalizers") or [] if f != "kubernetes"]
        await store.finalize(NAMESPACE, found)
        await store.delete(NAMESPACE, namespace)  # with no finalizer left, the delete completes it
    except NotFound:
        pass
    if await _still_there(store, clock, namespace, wait) is not None:
        _say(f"nvcre setup reset: namespace {namespace} is still Terminating ({_no_namespace_controller(namespace)})")
        return EXIT_FAILED
    print(f"namespace/{namespace} finalized: it held nothing, and this API server has no namespace controller to do it")
    return EXIT_OK


async def _namespace_contents(store: KubeStore, namespace: str) -> list[str]:
    """What the namespace still holds, by discovery over every namespaced resource the server lists ("pods (2)");
    a resource that cannot be read counts as holding something."""
    from nvcre_tui.engine.store.errors import StoreError
    from nvcre_tui.engine.store.protocol import ResourceKind

    held = []
    for group, versions in (await store.served_groups()).items():
        if not versions:
            continue
        for resource in await store.served_resources(f"{group}/{versions[0]}" if group else versions[0]) or []:
            name = str(resource.get("name") or "")
            if "/" in name or not resource.get("namespaced") or "list" not in (resource.get("verbs") or []):
                continue  # a subresource, cluster-wide, or not listable
            try:
                items = (await store.list(ResourceKind(group, versions[0], str(resource.get("kind")), name), namespace)).items
            except StoreError as error:
                held.append(f"{name} (unreadable: {type(error).__name__})")
                continue
            if items:
                held.append(f"{name} ({len(items)})")
    return held


async def _still_there(store: KubeStore, clock: Clock, namespace: str, timeout: float, poll: float = 0.5) -> Obj | None:
    """The namespace if it is still there (Terminating) after `timeout` seconds, else None."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import NAMESPACE

    deadline = clock.monotonic() + timeout
    while True:
        try:
            found = await store.get(NAMESPACE, namespace)
        except NotFound:
            return None
        if clock.monotonic() >= deadline:
            return found
        await clock.sleep(poll)