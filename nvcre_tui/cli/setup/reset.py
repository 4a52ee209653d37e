"""`nvcre setup reset`: removes what init, controller, the engine and the simulated fleet made, after its checks
and a confirmation; with a second install beside it, only this namespace's part."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.reset_checks import reset_refusal
from nvcre_tui.cli.setup.bindings import drop_subjects
from nvcre_tui.cli.setup.crdwait import wait_crds
from nvcre_tui.cli.setup.namespace import controlled, finalize_empty_namespace, still_there
from nvcre_tui.cli.setup.nodes import remove_simulated_nodes, simulated_nodes
from nvcre_tui.cli.setup.preflight import may_not_delete
from nvcre_tui.cli.setup.shared import Obj, install_namespace, on_cluster, resource_ref
from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.units import count

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


def reset_command(args: argparse.Namespace) -> int:
    """Remove what init made, after checks and confirmation."""
    return asyncio.run(on_cluster(args, "reset", lambda store, clock: remove_install(store, clock, args)))


def _confirm(question: str) -> bool:
    """Ask on the terminal; without one, refuse (a script must say --yes)."""
    if not sys.stdin or not sys.stdin.isatty():
        raise InputError("nvcre setup reset: refusing to delete without confirmation: stdin is not a terminal; pass --yes")
    say(question)
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

    namespace = install_namespace(args)
    refusal, running = await reset_refusal(store, clock, namespace, force=args.force)
    if refusal is not None:
        say(f"nvcre setup reset: {refusal}")
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
        say("nvcre setup reset: nothing deleted")
        return EXIT_FAILED
    objects = install_objects(namespace, simulator=True)  # the simulator's rights too, if init granted them
    if keep:
        objects = [obj for obj in objects if obj["kind"] != NAMESPACE.kind]
    # What `setup controller`, the engine and the simulated fleet made in the namespace, before it: a namespace that still holds objects
    # waits for kube-controller-manager to empty it, which a bare API server does not have.
    made = await _made_in(store, namespace)
    registered, strangers = await simulated_nodes(store)
    # before the CRDs take every certification along, and before a Lease or a Node goes: nothing half-deleted
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": node["metadata"]["name"]}} for node in registered]
    if (refused := await may_not_delete(store, [*made, *nodes, *objects])) is not None:
        say(f"nvcre setup reset: this user may not delete {refused} (RBAC); setup reset needs a cluster admin (nothing deleted)")
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
    await remove_simulated_nodes(store, registered, strangers)
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
        say(f"nvcre setup reset: CRDs still being deleted after {args.timeout:g}s: {', '.join(remaining)} "
             f"({await _what_holds_the_crds(store)})")
    deleted, kept = await delete_leftovers(store)  # no garbage collector (an API server alone) leaves them
    for line in deleted_lines(deleted):
        print(line)
    if kept:
        say(f"nvcre setup reset: {count(len(kept), 'object')} whose nvcre owners are gone could not be deleted: "
             f"{'; '.join(kept[:3])}{' ...' if len(kept) > 3 else ''}")
    code = EXIT_FAILED if remaining else EXIT_OK
    if keep:
        return code
    if events := await delete_own_events(store, namespace):
        print(f"deleted {count(events, 'Event')} nvcre wrote in namespace {namespace} about the objects reset removed")
    wait = min(args.timeout, NAMESPACE_WAIT_SECONDS)
    left = await still_there(store, clock, namespace, wait)
    if left is None:
        return code
    if controlled(left):  # kube-controller-manager is emptying it: pods may take their grace period
        if await still_there(store, clock, namespace, max(args.timeout - wait, 0.0)) is not None:
            say(f"nvcre setup reset: namespace {namespace} is still being removed by its namespace controller after "
                 f"{args.timeout:g}s (pods ending their grace period, finalizers); `setup init` waits for it to be gone")
        return code
    return max(code, await finalize_empty_namespace(store, clock, namespace, wait))


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
        say(f"nvcre setup reset: could not complete the deletion of {what}")


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
        say("nvcre setup reset: nothing deleted")
        return EXIT_FAILED
    objects = [obj for obj in install_objects(namespace, simulator=True)
               if kind_of(obj).namespaced or (obj["kind"] == NAMESPACE.kind and existing is not None and not keep)]
    made = await _made_in(store, namespace)
    bindings = [obj["metadata"]["name"] for obj in install_objects(namespace, simulator=True) if obj["kind"] == CLUSTER_ROLE_BINDING.kind]
    refused = await may_not_delete(store, [*made, *objects])
    refused = refused and f"delete {refused}"
    for name in bindings:
        if refused is None and await allowed(store, "update", CLUSTER_ROLE_BINDING, None, name) is False:
            refused = f"update ClusterRoleBinding {name}"
    if refused is not None:
        say(f"nvcre setup reset: this user may not {refused} (RBAC); setup reset needs a cluster admin (nothing deleted)")
        return EXIT_BAD_INPUT
    for name in bindings:
        if await drop_subjects(store, name, namespace) != "absent":
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
    left = await still_there(store, clock, namespace, wait)
    if left is None or controlled(left):
        return EXIT_OK
    return await finalize_empty_namespace(store, clock, namespace, wait)


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


NAMESPACE_WAIT_SECONDS = 5.0  # kube-controller-manager empties and removes a namespace in seconds; a bare API server never
