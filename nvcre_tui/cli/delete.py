"""`nvcre certification delete` and `run --cleanup`: delete certifications, keeping their record.

A finished certification is archived in the history before it goes (`nvcre history` keeps its verdicts);
an unfinished one is cancelled: its runs stop. Its Workflows, Jobs and runs follow it: the garbage collector
removes them on a cluster, the simulator's store at once, and the nvcre engine where an API server has no
garbage collector (engine/controllers/collect.py). `--wait` waits until they are gone.

Exit codes: 0 deleted, 2 bad input (a name not found: nothing is deleted), 3 `--wait` timed out.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_OK, EXIT_TIMEOUT
from nvcre_tui.cli.kubeflags import check_namespace
from nvcre_tui.cli.session import add_session_arguments, open_session, tell_notices
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog import default_catalog
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.errors import Conflict, NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.units import MAX_DURATION_SECONDS, format_duration, parse_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session

Obj = dict[str, Any]
CLEANUP_WAIT_SECONDS = 300.0  # as NVCRE's --cleanup: up to 5 minutes for the cascade
POLL_SECONDS = 0.5
WATCH_POLL_SECONDS = 0.02  # with an engine on a manual clock: how often to let the watch bring deletions in
CHILD_KINDS = (WORKFLOW, JOB, WORKLOADRUN)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `delete` to the certification group."""
    delete = commands.add_parser("delete", help="delete certifications (archived first when finished; running ones stop)")
    delete.add_argument("names", nargs="+", metavar="NAME")
    add_session_arguments(delete, namespace_help="namespace of the certifications (default: the context's, else default)")
    delete.add_argument("--wait", action="store_true", help="wait until their Workflows, Jobs and runs are gone too")
    delete.add_argument("--timeout", metavar="D", help=f"with --wait: give up after D (default {format_duration(CLEANUP_WAIT_SECONDS)})")
    delete.set_defaults(func=delete_command)


def delete_command(args: argparse.Namespace) -> int:
    """Delete the named certifications."""
    return asyncio.run(_delete(args))


async def _delete(args: argparse.Namespace) -> int:
    check_namespace(args.namespace)
    if args.timeout is not None and not args.wait:
        raise InputError("--timeout: needs --wait (it bounds how long the deletion is followed)")
    limit = _duration("--timeout", args.timeout) if args.timeout else CLEANUP_WAIT_SECONDS
    if len(set(args.names)) != len(args.names):
        raise InputError(f"NAME: {next(n for n in args.names if args.names.count(n) > 1)!r} is given twice")
    session = await open_session(args, default_catalog(), live=False, want_engine=False)
    told = tell_notices(session)
    console = Console(stderr=True, highlight=False)
    try:
        namespace = args.namespace or getattr(session, "namespace", None) or "default"
        certs = [await _find(session, name, namespace) for name in args.names]  # all found before any is deleted
        known: set[str] = set()
        for cert in certs:
            known |= await delete_certification(session, cert, console)
        if not args.wait:
            return EXIT_OK
        left = await wait_collected(session, known, limit)
        if left:
            console.print(f"[yellow]{escape(_left_message(left, limit))}[/]", soft_wrap=True)
            return EXIT_TIMEOUT
        return EXIT_OK
    finally:
        await session.close()
        tell_notices(session, told)


def _duration(flag: str, text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as error:
        raise InputError(f"{flag}: {error}") from None
    return min(seconds, MAX_DURATION_SECONDS)


async def _find(session: Session, name: str, namespace: str) -> Obj:
    try:
        return await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        path = getattr(session, "path", None)  # the simulator's store file
        where = f"the simulator ({path})" if path else session.title
        raise InputError(printable(f"certification {name!r} not found in namespace {namespace} of {where}; nothing deleted",
                                   newlines=False)) from None
    except StoreError as error:
        raise InputError(printable(f"certification {name!r}: {error}", newlines=False)) from None


async def delete_certification(session: Session, cert: Obj, console: Console) -> set[str]:
    """Archive `cert` when finished, delete it (by uid: never a namesake made meanwhile) and say so; the uids of
    it and of its descendants as the cache holds them now (what `wait_collected` follows)."""
    meta = cert["metadata"]
    name, namespace, uid = meta["name"], meta.get("namespace") or "default", str(meta.get("uid") or "")
    known = {uid} if uid else set()
    remaining(session, known)  # seen before they go: their own children are found through them later
    archiver = getattr(session, "archiver", None)
    if not cond.is_terminal(cert):
        kept = "it had not finished: its runs stop"
    elif archiver is not None and archiver.archive_now(cert):
        kept = f"its record is kept in the history ({archiver.path})"
    else:
        kept = "it is not archived: the history is off (its report is gone with it)"
    try:
        await session.store.delete(CERTIFICATION, name, namespace, uid=uid or None)
    except NotFound:
        console.print(escape(printable(f"certification {name} was already deleted", newlines=False)), soft_wrap=True)
        return known
    except Conflict:
        raise InputError(printable(f"certification {name!r} in {namespace} was replaced meanwhile by a new one; nothing deleted",
                                   newlines=False)) from None
    except StoreError as error:
        raise InputError(printable(f"certification {name!r}: {error}", newlines=False)) from None
    console.print(escape(printable(f"certification {name} deleted from namespace {namespace}; {kept}", newlines=False)), soft_wrap=True)
    return known


def remaining(session: Session, known: set[str]) -> list[Obj]:
    """The Workflows, Jobs and runs in the session's cache that descend from the `known` uids, which grow by
    every descendant found: a child is still found through an owner already deleted (its ownerReference
    stays), as long as that owner was seen once."""
    found: dict[str, Obj] = {}
    frontier = list(known)
    while frontier:
        owner = frontier.pop()
        for child in (child for kind in CHILD_KINDS for child in session.cache.owned_by(owner, kind)):
            uid = str(child["metadata"].get("uid"))
            if uid not in found:
                found[uid] = child
                known.add(uid)
                frontier.append(uid)
    return list(found.values())


async def wait_collected(session: Session, known: set[str], limit: float) -> list[Obj]:
    """Wait up to `limit` seconds until nothing descends from the `known` uids, running this process's engine
    meanwhile when it has one (it collects them where no garbage collector does); what is left."""
    engine = session.engine
    deadline = time.monotonic() + limit
    if engine is not None and isinstance(session.clock, ManualClock):
        # The deletions reach the cache by its watch; the engine, settled at this instant (no simulated time
        # passes), collects what they leave orphaned. Real time bounds the wait.
        while remaining(session, known) and time.monotonic() < deadline:
            await engine.run_until_settled(max_seconds=0)
            await asyncio.sleep(WATCH_POLL_SECONDS)
        return remaining(session, known)
    task = asyncio.create_task(engine.run(), name="engine") if engine is not None else None
    try:
        while remaining(session, known) and time.monotonic() < deadline:
            if task is not None and task.done():
                task.result()  # the engine died: say why rather than wait for nothing
            await asyncio.sleep(POLL_SECONDS)
        return remaining(session, known)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _left_message(left: list[Obj], limit: float) -> str:
    kinds = sorted({str(obj.get("kind")) for obj in left})
    return (f"after {format_duration(limit)}, {len(left)} of its objects remain ({', '.join(kinds)}): no garbage collector or "
            "nvcre engine removed them yet (is `nvcre controller` running?); they go once one does")


__all__ = ["CLEANUP_WAIT_SECONDS", "delete_certification", "remaining", "wait_collected"]
