"""The one line a command says when what it shows stands still because no engine runs.

On a cluster, an API server alone has no other engine than nvcre's own processes: a certification nobody reconciles
stays as it is (its runs make no progress, their logs no new line). `report` of a RUNNING certification and `logs
--follow` of an unfinished run say so, in these words, when no engine holds the Lease or its holder stopped renewing.
A reader that asks again keeps one EngineLease (`reader_lease`), which judges a holder as the engine's own election
does: by the renewTime's own clock, and once seen unchanged for the duration on this side, whatever the holder's
clock says (a holder whose clock runs ahead and stopped renewing is stale too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.errors import StoreError

if TYPE_CHECKING:
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.session import Session

__all__ = ["no_engine_note", "reader_lease"]


def reader_lease(session: Session, *, simulator: bool = False) -> EngineLease | None:
    """The engine Lease of a cluster session, as a reader sees it (kept across reads, it observes renewals). On the
    simulator None (`report` shows the store as the last engine left it; its time catches up when a process opens it),
    unless `simulator`: the store's own Lease, for `logs --follow`, which would wait for ever on a run no process
    reconciles (a `run` without --wait has exited) while saying when it fails."""
    from nvcre_tui.engine.kube.session import KubeSession
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.session import SimSession

    if isinstance(session, KubeSession):
        return EngineLease(session.kube, SystemClock(), session.install_namespace, "nvcre-reader")
    if simulator and isinstance(session, SimSession) and session.engine is None:
        from nvcre_tui.engine.local_lease import LEASE_NAMESPACE, LEASE_SECONDS, LocalLease

        return LocalLease(session.database, SystemClock(), LEASE_NAMESPACE, "nvcre-reader", LEASE_SECONDS)
    return None


async def no_engine_note(session: Session, subject: str, pronoun: str = "it", lease: EngineLease | None = None) -> str | None:
    """`nvcre: <subject>, but no nvcre engine holds the lease ...: nothing advances <pronoun> until one runs (...)` when
    no live holder has the engine Lease of a cluster (or, asked with reader_lease's `simulator`, of the simulator's
    store: what runs one there is said); None when one does, on the simulator otherwise, or when this user may not
    read the Lease (not known, not said). `lease`: reader_lease's, kept by a caller that asks again; else read once."""
    lease = lease or reader_lease(session)
    if lease is None:
        return None
    try:
        holder = await lease.holder()
    except StoreError:
        return None
    if holder is not None and holder.live:
        return None
    from nvcre_tui.engine.local_lease import LocalLease

    if isinstance(lease, LocalLease):  # a local holder whose process is gone holds nothing either (LocalLease.holder)
        store = getattr(session, "path", None)
        return (f"nvcre: {subject}, but no nvcre process runs the engine on the simulator's store{f' {store}' if store else ''}: "
                f"nothing advances {pronoun} until one runs (the console `nvcre`, or `nvcre certification run --wait` of it)")
    return (f"nvcre: {subject}, but no nvcre engine holds the lease {lease.namespace}/{lease.NAME}: nothing advances "
            f"{pronoun} until one runs (`nvcre controller`, or the console `nvcre`)")
