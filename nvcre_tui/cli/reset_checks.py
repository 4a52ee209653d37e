"""What stops `nvcre setup reset` before it deletes anything: certifications still running, an engine holding its Lease in
any namespace (not only the one the command was given), and a namespace that holds no install while another one does
(the CRDs and ClusterRoles it would delete are that install's).

Each refusal is one line naming what and where; `--force` overrides the first two, never the third (pass the namespace).
One of two install namespaces (an older `setup init` allowed a second) is removed alone, leaving the shared CRDs and
ClusterRoles to the other: only an engine holding that namespace's Lease stops it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.units import count

if TYPE_CHECKING:  # the Kubernetes client loads only in commands that reach a cluster
    from nvcre_tui.engine.kube.installs import LiveEngine
    from nvcre_tui.engine.store.kube import KubeStore

__all__ = ["running_certifications", "reset_refusal"]


async def running_certifications(store: KubeStore) -> list[str]:
    """`namespace/name` of every Certification not finished and not being deleted."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    try:
        certs = (await store.list(CERTIFICATION)).items
    except NotFound:  # the CRD is not installed: nothing runs
        return []
    return [f"{c['metadata'].get('namespace')}/{c['metadata']['name']}" for c in certs
            if not cond.is_terminal(c) and not c["metadata"].get("deletionTimestamp")]


def _engines_text(engines: list[LiveEngine]) -> str:
    return "; ".join(f"{engine.identity} holds the lease in {engine.namespace}" for engine in engines)


async def reset_refusal(store: KubeStore, clock: Clock, namespace: str, *, force: bool) -> tuple[str | None, int]:
    """(why reset must not go ahead, one line, or None; how many certifications still run)."""
    from nvcre_tui.engine.kube.installs import INSTALL_FLAG, installs_with, live_engines

    installs = await installs_with(store, namespace)
    others = [name for name in installs or [] if name != namespace]
    if others and namespace in (installs or []):
        # One of two installs (an older `setup init` allowed a second): reset removes only this namespace's own objects
        # and leaves the shared CRDs (every certification with them) and ClusterRoles to the other, so running
        # certifications do not stop it; only an engine holding this namespace's Lease, which would lose its rights.
        here = [engine for engine in await live_engines(store, clock, [namespace]) or [] if engine.namespace == namespace]
        if here and not force:
            return (f"the nvcre engine {_engines_text(here)}: stop it first (its Deployment or `nvcre controller` process; "
                    "a console that runs one: quit it), or pass --force"), 0
        return None, 0
    running = await running_certifications(store)
    engines = await live_engines(store, clock, [namespace, *(installs or [])])
    if running and not force:
        shown = ", ".join(running[:5]) + (f" and {len(running) - 5} more" if len(running) > 5 else "")
        # an engine that cannot be seen (Leases unreadable) may still run: waiting may still help
        advice = ("wait for them, delete them, or pass --force" if engines is None or engines else
                  "no nvcre engine holds the lease, so they will not finish: delete them (nvcre certification delete) or "
                  "pass --force")
        return f"{count(len(running), 'certification')} still running ({shown}); {advice}", len(running)
    # An engine still running would lose its CRDs, RBAC and lease from under it, and retry against 404s and 403s.
    if engines and not force:
        return (f"the nvcre engine {_engines_text(engines)}: stop it first (its Deployment or `nvcre controller` process; "
                "a console that runs one: quit it), or pass --force"), len(running)
    if others:
        # The CRDs, ClusterRoles and ClusterRoleBindings are cluster-wide: deleting them here would break that install.
        return (f"nvcre is not installed in namespace {namespace} but in {', '.join(others)}: pass {INSTALL_FLAG} "
                f"{others[0]} to remove that install (nothing deleted)"), len(running)
    return None, len(running)
