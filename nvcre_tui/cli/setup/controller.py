"""`nvcre setup controller`: the Deployment running `nvcre controller`, printed, dry-run or applied."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from nvcre_tui.cli import EXIT_OK
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.setup.shared import Obj, install_namespace, on_cluster, resource_ref
from nvcre_tui.engine.api.serialize import to_yaml
from nvcre_tui.engine.errors import InputError

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.clock import Clock
    from nvcre_tui.engine.store.kube import KubeStore

# How long an applied Deployment may go unseen by a Deployment controller before `setup controller` says none runs
SEEN_SECONDS = 5.0
SEEN_POLL_SECONDS = 0.25


def controller_command(args: argparse.Namespace) -> int:
    """Print (-o yaml), dry-run or apply the controller's Deployment; its flags checked before any cluster is read."""
    from nvcre_tui.engine.kube.deployment import check_image, controller_deployment

    deployment = controller_deployment(check_image(args.image), install_namespace(args))
    if args.output == "yaml":
        print(to_yaml([deployment]), end="")
        return EXIT_OK
    return asyncio.run(on_cluster(args, "controller", lambda store, clock: apply_controller(store, deployment, args, clock)))


async def apply_controller(store: KubeStore, deployment: Obj, args: argparse.Namespace, clock: Clock) -> int:
    """Server-side apply (or its dry run) of the Deployment into an install namespace; one line and exit 2 where
    nvcre is not installed there (its ServiceAccount would be missing: the pods would never be created). Applied, it
    says who makes its pod: the cluster's controller-manager once a Deployment controller has seen it, else what
    `setup status` says of it (an API server alone makes none)."""
    from nvcre_tui.engine.kube.deployment import NO_DEPLOYMENT_CONTROLLER
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
        say(f"{resource_ref(deployment)} serverside-applied (server dry run)")
        print(to_yaml([deployment]), end="")
        return EXIT_OK
    print(f"{resource_ref(deployment)} serverside-applied")
    seen = await _seen(store, deployment, clock)
    if seen is False:
        # within SEEN_SECONDS: a busy controller-manager may see it later, which `setup status` then says
        print(f"Deployment {deployment['metadata']['name']} ({args.image}) in namespace {namespace}: {NO_DEPLOYMENT_CONTROLLER} "
              f"(none in {SEEN_SECONDS:g} s; `nvcre setup status` says if one has since)")
        return EXIT_OK
    who = "its pod is made by the cluster's controller-manager" if seen else "its pod comes from the cluster's controller-manager if it runs one (`nvcre setup status` says)"
    print(f"nvcre controller runs from {args.image} in namespace {namespace} (one replica: the nvcre-engine Lease elects "
          f"the engine); {who}: kubectl -n {namespace} get pods")
    return EXIT_OK


async def _seen(store: KubeStore, deployment: Obj, clock: Clock) -> bool | None:
    """Whether a Deployment controller sees the applied Deployment within SEEN_SECONDS (kube-controller-manager's
    writes status.observedGeneration within a second; an API server alone never does); None when it cannot be read
    (refused, no answer): not known, neither said."""
    from nvcre_tui.engine.kube.deployment import observed
    from nvcre_tui.engine.store.errors import StoreError
    from nvcre_tui.engine.store.protocol import DEPLOYMENT

    meta = deployment["metadata"]
    deadline = clock.monotonic() + SEEN_SECONDS
    while True:
        try:
            if observed(await store.get(DEPLOYMENT, meta["name"], meta["namespace"])):
                return True
        except StoreError:
            return None
        if clock.monotonic() >= deadline:
            return False
        await clock.sleep(SEEN_POLL_SECONDS)
