"""`nvcre setup init`: the server-side apply of what nvcre needs, refused before anything is applied where it would
break an install (another namespace's, a newer schema, an engine of another version on the Lease)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli import EXIT_FAILED, EXIT_OK
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.setup.bindings import drop_subjects, is_engine_subject
from nvcre_tui.cli.setup.crdwait import wait_crds, wait_served
from nvcre_tui.cli.setup.preflight import apply_refusal
from nvcre_tui.cli.setup.shared import Obj, install_namespace, on_cluster, resource_ref
from nvcre_tui.engine.api.serialize import to_yaml
from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.errors import InputError

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.kube.install import InstalledSchema
    from nvcre_tui.engine.store.kube import KubeStore


def init_command(args: argparse.Namespace) -> int:
    """Apply what nvcre needs; with --dry-run, print it."""
    from nvcre_tui.engine.kube.config import cluster_configured
    from nvcre_tui.engine.kube.install import install_objects

    objects = install_objects(install_namespace(args), simulator=args.sim_runner)
    if args.dry_run and not cluster_configured(args.kubeconfig):
        say("# no cluster configured: offline render, not validated by a server")
        print(to_yaml(objects), end="")
        return EXIT_OK
    return asyncio.run(on_cluster(args, "init", lambda store, clock: apply_install(store, clock, objects, args)))


async def apply_install(store: KubeStore, clock: Clock, objects: list[dict[str, Any]], args: argparse.Namespace,
                        out: Callable[[str], None] = print, *, raising: bool = False) -> int:
    """Server-side apply of every object in order, then wait for the CRDs to be Established. Progress goes to
    `out` (stdout; `run --setup`, whose stdout is the report: stderr). A failure is one line and EXIT_FAILED, or with
    `raising` (`run --setup`, which stops on it) an InputError of that one line."""

    def failed(line: str) -> int:
        if raising:
            raise InputError(line)
        say(line)
        return EXIT_FAILED

    from nvcre_tui.engine.kube.install import FIELD_MANAGER
    from nvcre_tui.engine.store.errors import NotFound, Timeout, Unavailable
    from nvcre_tui.engine.store.protocol import CRD, NAMESPACE, kind_of

    namespace = install_namespace(args)
    namespace_exists = True
    try:
        found = await store.get(NAMESPACE, namespace)
    except NotFound:
        namespace_exists = False
    except (Unavailable, Timeout) as error:
        if not args.dry_run:
            raise
        # configured but not reachable (refused, or no answer): still show what would be applied
        say(f"# cluster unreachable ({' '.join(error.message.split())}): offline render, not validated by a server")
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
                say(f"nvcre setup init: {change_under(engines, installed)} (a dry run: nothing applied)")
            elif not getattr(args, "force", False):
                raise InputError(refusal(engines, installed))
            else:
                say(f"nvcre setup init: --force: {change_under(engines, installed)}")
    # A namespace that was there before (a team's) is used, never claimed: reset leaves it, and what else it holds
    made = made_by_init(found if namespace_exists else None)
    objects = [namespace_object(namespace, made=made) if obj["kind"] == NAMESPACE.kind else obj for obj in objects]
    if not args.dry_run and (refused := await apply_refusal(store, objects, namespace_exists)) is not None:
        raise InputError(f"nvcre setup init: {refused}; setup init needs a cluster admin (nothing applied)")
    suffix = " (server dry run)" if args.dry_run else ""
    for obj in objects:
        kind = kind_of(obj)
        if args.dry_run and kind.namespaced and not namespace_exists:
            # a dry run creates nothing, so objects in the namespace it would create cannot be checked
            say(f"{resource_ref(obj)} not validated (namespace {namespace} does not exist yet)")
            continue
        await store.apply(kind, obj, field_manager=FIELD_MANAGER, force=True, dry_run=args.dry_run)
        (say if args.dry_run else out)(f"{resource_ref(obj)} serverside-applied{suffix}"
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
            kept = [subject for subject in live.get("subjects") or [] if is_engine_subject(subject, others)]
            obj = {**obj, "subjects": [*obj.get("subjects", []), *(s for s in kept if s not in obj.get("subjects", []))]}
        result.append(obj)
    return result


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
            if any(not is_engine_subject(subject, [namespace]) for subject in live.get("subjects") or []):
                # another install's engine is bound too (an older init left two): only this one's rights go
                if await drop_subjects(store, name, namespace) == "updated":
                    out(f"{resource_ref(obj)} updated: the engine of namespace {namespace} unbound (init without --sim-runner)")
                return
        try:
            await store.get(kind, name)  # a read first: a fresh install sends no delete
            if dry_run:
                say(f"{resource_ref(obj)} would be deleted (init without --sim-runner takes the simulator's Node rights back)")
                continue
            await store.delete(kind, name, None)
        except NotFound:
            continue
        out(f"{resource_ref(obj)} deleted (init without --sim-runner takes the simulator's Node rights back)")
