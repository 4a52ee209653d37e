"""A reset install namespace left Terminating: waiting for it, and finalizing it where no namespace controller
runs (an API server alone) once it holds nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.cli import EXIT_FAILED, EXIT_OK
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.setup.shared import Obj
from nvcre_tui.engine.clock import Clock

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


def controlled(namespace: Obj) -> bool:
    """Whether a namespace controller works on this Terminating namespace: it sets the Namespace*  conditions
    (NamespaceContentRemaining, ...) from its first pass; an API server alone never does."""
    return bool((namespace.get("status") or {}).get("conditions"))


def _no_namespace_controller(namespace: str) -> str:
    from nvcre_tui.engine.kube.installs import finalize_command

    return ("kube-controller-manager's namespace controller removes it; an API server without one never does: once it "
            f"holds nothing, remove its finalizer with `{finalize_command(namespace)}`")


async def finalize_empty_namespace(store: KubeStore, clock: Clock, namespace: str, wait: float) -> int:
    """A namespace still Terminating: no namespace controller empties and removes it (an API server alone). When it
    holds nothing, nvcre does the controller's last step (it removes the `kubernetes` finalizer); else it says what
    holds it, and deletes none of that."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import NAMESPACE

    held = await _namespace_contents(store, namespace)
    if held:
        say(f"nvcre setup reset: namespace {namespace} is still Terminating after {wait:g}s and holds {', '.join(held)}; "
             f"`setup init` cannot install into it until it is gone ({_no_namespace_controller(namespace)})")
        return EXIT_FAILED
    try:
        found = await store.get(NAMESPACE, namespace)
        found.setdefault("spec", {})["finalizers"] = [f for f in found["spec"].get("finalizers") or [] if f != "kubernetes"]
        await store.finalize(NAMESPACE, found)
        await store.delete(NAMESPACE, namespace)  # with no finalizer left, the delete completes it
    except NotFound:
        pass
    if await still_there(store, clock, namespace, wait) is not None:
        say(f"nvcre setup reset: namespace {namespace} is still Terminating ({_no_namespace_controller(namespace)})")
        return EXIT_FAILED
    print(f"namespace/{namespace} finalized: it held nothing, and this API server has no namespace controller to do it")
    return EXIT_OK


async def _namespace_contents(store: KubeStore, namespace: str) -> list[str]:
    """What the namespace still holds, by discovery over every namespaced resource the server lists ("pods (2)");
    a resource that cannot be listed counts as holding something ("secrets (not listed: <why>)")."""
    from nvcre_tui.engine.store.errors import StoreError, failure_line
    from nvcre_tui.engine.store.protocol import ResourceKind

    held: list[str] = []
    why_said = False  # why a list was refused, said once: the resources refused after it are most often refused alike (RBAC)
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
                held.append(f"{name} (not listed{'' if why_said else ': ' + failure_line(error)})")
                why_said = True
                continue
            if items:
                held.append(f"{name} ({len(items)})")
    return held


async def still_there(store: KubeStore, clock: Clock, namespace: str, timeout: float, poll: float = 0.5) -> Obj | None:
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
