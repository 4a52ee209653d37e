"""The one line a command says when what it shows stands still because no engine runs.

On a cluster, an API server alone has no other engine than nvcre's own processes: a certification nobody reconciles
stays as it is (its runs make no progress, their logs no new line). `report` and `list` of a RUNNING certification and
`logs --follow` of an unfinished run say so, in these words, when no engine holds the Lease or its holder stopped
renewing. So on the simulator, whose store holds its own Lease: once no process runs its engine (a `run` without
--wait has exited), the store stays as the last engine left it, which these commands show.
A reader that asks again keeps one EngineLease (`reader_lease`), which judges a holder as the engine's own election
does: by the renewTime's own clock, and once seen unchanged for the duration on this side, whatever the holder's
clock says (a holder whose clock runs ahead and stopped renewing is stale too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.errors import StoreError

if TYPE_CHECKING:
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.session import Session

__all__ = ["no_engine_note", "reader_lease", "stalled_note"]


def reader_lease(session: Session) -> EngineLease | None:
    """The engine Lease, as a reader sees it (kept across reads, it observes renewals): a cluster's, or the simulator's
    store's own when this session runs no engine (one that runs it advances what it shows). Else None."""
    from nvcre_tui.engine.kube.session import KubeSession
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.session import SimSession

    if isinstance(session, KubeSession):
        return EngineLease(session.kube, SystemClock(), session.install_namespace, "nvcre-reader")
    if isinstance(session, SimSession) and session.engine is None:
        from nvcre_tui.engine.local_lease import LEASE_NAMESPACE, LEASE_SECONDS, LocalLease

        return LocalLease(session.database, SystemClock(), LEASE_NAMESPACE, "nvcre-reader", LEASE_SECONDS)
    return None


async def no_engine_note(session: Session, subject: str, pronoun: str = "it", lease: EngineLease | None = None) -> str | None:
    """`nvcre: <subject>, but no nvcre engine holds the lease ...: nothing advances <pronoun> until one runs (...)` when
    no live holder has the engine Lease of a cluster or of the simulator's store (there a holder on this machine whose
    process is gone holds nothing; what runs an engine there is said); None when one does, when this session runs the
    engine itself, or when this user may not read the Lease (not known, not said). `lease`: reader_lease's, kept by a caller that asks again; else read once."""
    lease = lease or reader_lease(session)
    if lease is None:
        return None
    try:
        holder = await lease.holder()
    except StoreError:
        return None
    if holder is not None and holder.live:
        return None
    from nvcre_tui.engine.lease import nothing_advances
    from nvcre_tui.engine.local_lease import LocalLease

    if isinstance(lease, LocalLease):  # a local holder whose process is gone holds nothing either (LocalLease.holder)
        store = getattr(session, "path", None)
        return (f"nvcre: {subject}, but no nvcre process runs the engine on the simulator's store{f' {store}' if store else ''}: "
                f"{nothing_advances(pronoun)} (the console `nvcre`, or `nvcre certification run --wait` of {pronoun})")
    return (f"nvcre: {subject}, but no nvcre engine holds the lease {lease.namespace}/{lease.NAME}: "
            f"{nothing_advances(pronoun)} (`nvcre controller`, or the console `nvcre`)")


async def stalled_note(session: Session, certifications: Iterable[Mapping[str, Any]]) -> str | None:
    """no_engine_note of the RUNNING ones among `certifications` (as `report` and `list` give them: name, result,
    phase, waiting), so that RUNNING is not read as progress; each named as its Result says it (result_said:
    `soak is WAITING to start` for one none of whose categories has started), not by the Certification's own
    result. None when none runs."""
    from nvcre_tui.engine.api.vocabulary import RESULT_RUNNING
    from nvcre_tui.engine.report.model import result_said

    by_said: dict[str, list[str]] = {}
    for certification in certifications:
        if certification.get("result") == RESULT_RUNNING:
            by_said.setdefault(result_said(dict(certification)), []).append(str(certification["name"]))
    if not by_said:
        return None
    subject = ", ".join(f"{', '.join(names)} {'are' if len(names) > 1 else 'is'} {said}" for said, names in by_said.items())
    several = sum(len(names) for names in by_said.values()) > 1
    return await no_engine_note(session, subject, "them" if several else "it")
