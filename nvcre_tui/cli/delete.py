"""`nvcre certification delete` and `run --cleanup`: delete certifications, keeping their record.

A finished certification is archived in the history before it goes (`nvcre history` keeps its verdicts);
an unfinished one is cancelled: its runs stop. Its Workflows, Jobs and runs follow it: the garbage collector
removes them on a cluster, the simulator's store at once, and the nvcre engine where an API server has no
garbage collector (engine/controllers/collect.py). `--wait` waits until they are gone.
A certification whose row in the simulator's store is damaged (its body unreadable) is deleted by its key, with
what it owns (found through the uid the row keeps).

Exit codes: 0 deleted, 2 bad input (a name not found: nothing is deleted), 3 `--wait` timed out.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_OK, EXIT_TIMEOUT
from nvcre_tui.cli.kubeflags import check_certification_names, check_namespace
from nvcre_tui.cli.session import add_session_arguments, in_other_namespaces, open_looking_session, tell_notices, where_of
from nvcre_tui.engine.history.deletion import delete_certification, delete_damaged_certification, left_message, remaining, wait_collected
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.kube.installs import InstallRefused
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.errors import NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, WORKFLOW
from nvcre_tui.engine.store.sqlite import SqliteStore
from nvcre_tui.engine.store.sqlite.tables import DamagedRow
from nvcre_tui.engine.units import MAX_DURATION_SECONDS, count, format_duration, parse_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.engine import Engine
    from nvcre_tui.engine.session import Session

Obj = dict[str, Any]
CLEANUP_WAIT_SECONDS = 300.0  # as NVCRE's --cleanup: up to 5 minutes for the cascade


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `delete` to the certification group."""
    delete = commands.add_parser("delete", help="delete certifications (archived first when finished; running ones stop)")
    delete.add_argument("names", nargs="+", metavar="NAME")
    add_session_arguments(delete, namespace_help="namespace of the certifications (default: the context's, else default)")
    delete.add_argument("--wait", action="store_true",
                        help="wait until their Workflows, Jobs and runs are gone too (running the engine meanwhile when none holds the lease)")
    delete.add_argument("--timeout", metavar="D", help=f"with --wait: give up after D (default {format_duration(CLEANUP_WAIT_SECONDS)})")
    delete.set_defaults(func=delete_command)


def delete_command(args: argparse.Namespace) -> int:
    """Delete the named certifications."""
    return asyncio.run(_delete(args))


async def _delete(args: argparse.Namespace) -> int:
    check_namespace(args.namespace)
    check_certification_names(args.names)
    if args.timeout is not None and not args.wait:
        raise InputError("--timeout: needs --wait (it bounds how long the deletion is followed)")
    limit = _duration("--timeout", args.timeout) if args.timeout else CLEANUP_WAIT_SECONDS
    # With --wait, this process runs the engine while it waits when no other holds the engine Lease (as `run --wait`
    # does): on an API server with no garbage collector, that is what collects the children.
    try:  # nothing to delete or archive without a store: no file is made, neither store nor history
        session, told = await open_looking_session(args, writes=True, want_engine=bool(args.wait))
    except InstallRefused as refused:
        if not refused.closing:
            raise
        # --wait runs an engine, whose Lease the namespace refuses: the deletion itself needs none, and is not begun.
        them = "it" if len(args.names) == 1 else "them"
        raise InputError(f"{refused.server}: nothing deleted: --wait runs an nvcre engine, and none can run now; the same "
                         f"command without --wait deletes {them} ({'its' if them == 'it' else 'their'} Workflows, Jobs and runs then go with "
                         f"the cluster's garbage collector, or the next nvcre engine). {refused.why}") from None
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        namespace = args.namespace or getattr(session, "namespace", None) or "default"
        certs = [await _find(session, name, namespace, wait=args.wait) for name in args.names]  # all found before any is deleted
        known: set[str] = set()
        for cert in certs:
            if isinstance(cert, _Left):
                console.print(escape(printable(f"certification {cert.name} is already deleted from namespace {namespace}; "
                                               f"it left {cert.said}: waiting until they are gone", newlines=False)), soft_wrap=True)
                known |= cert.owners
                continue
            if isinstance(cert, _Damaged):
                deletion = await delete_damaged_certification(cert.store, session.cache, session.archiver, cert.name,
                                                              namespace, cert.problem)
            else:
                from nvcre_tui.engine.kube.session import authorizer_of

                deletion = await delete_certification(session.store, session.cache, session.archiver, cert,
                                                      authorizer=authorizer_of(session))
            console.print(escape(printable(deletion.said, newlines=False)), soft_wrap=True)
            known |= deletion.known
        if not args.wait:
            from nvcre_tui.engine.session import SimSession

            # On a cluster (the simulator's store collects them itself)
            if not isinstance(session, SimSession) and remaining(session.cache, set(known)):
                console.print("its Workflows, Jobs and runs go once an nvcre engine (a console, `nvcre controller`) or a garbage "
                              "collector removes them; --wait runs one now and waits until they are gone", soft_wrap=True)
            return EXIT_OK
        viewer = session.viewer_reason if session.engine is None else None
        if viewer and remaining(session.cache, set(known)):
            # On a cluster, said before a wait of minutes: what it waits for, and why this process cannot do it itself.
            console.print(f"waiting up to {format_duration(limit)} until its Workflows, Jobs and runs are gone; this process "
                          f"runs no engine ({escape(printable(viewer, newlines=False))}): another nvcre engine or a garbage "
                          "collector must remove them", soft_wrap=True)
        left = await wait_collected(session.cache, session.engine, known, limit, take_over=taking_over(session, console))
        if left:
            console.print(f"[yellow]{escape(left_message(left, format_duration(limit)))}[/]", soft_wrap=True)
            return EXIT_TIMEOUT
        if viewer:  # after a wait it said it began: its end too
            console.print("its Workflows, Jobs and runs are gone", soft_wrap=True)
        return EXIT_OK
    finally:
        await session.close()
        tell_notices(session, told)


def _duration(flag: str, text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as error:
        raise InputError(f"{flag}: {error}") from None
    if seconds <= 0:
        raise InputError(f"{flag}: must be more than 0s, got {text!r}")
    return min(seconds, MAX_DURATION_SECONDS)


@dataclass
class _Damaged:
    """A certification whose row in the simulator's store cannot be read: deleted by its key."""

    name: str
    problem: str
    store: SqliteStore


@dataclass
class _Left:
    """A certification already deleted whose Workflows (and their Jobs and runs) remain: deleted without --wait where no
    garbage collector runs (an API server alone). `owners`: the uids of the deleted certifications of its name they
    name as their controller."""

    name: str
    owners: set[str]
    workflows: int

    @property
    def said(self) -> str:
        return f"{count(self.workflows, 'Workflow')}, with {'its' if self.workflows == 1 else 'their'} Jobs and runs"


def _left_behind(session: Session, name: str, namespace: str) -> _Left | None:
    """What a deleted certification named `name` left in `namespace` (its Workflows, by their controlling owner: a
    Certification of that name, which is gone), or None."""
    from nvcre_tui.engine.controllers.collect import controlling_owner

    refs = [ref for workflow in session.cache.list(WORKFLOW, namespace)
            if (ref := controlling_owner(WORKFLOW, workflow)) is not None and ref.get("name") == name]
    return _Left(name, {str(ref["uid"]) for ref in refs}, len(refs)) if refs else None


async def _find(session: Session, name: str, namespace: str, *, wait: bool = False) -> Obj | _Damaged | _Left:
    try:
        found = await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        left = _left_behind(session, name, namespace)
        if left is not None and wait:
            return left  # `delete` without --wait said "--wait runs one now": it does, for what remains
        remains = "" if left is None else (
            f" (the deleted certification of that name left {left.said}, until an nvcre engine or a garbage collector "
            f"removes them: --wait collects them now)")
        raise InputError(printable(f"certification {name!r} not found in namespace {namespace} of {where_of(session)}"
                                   f"{await in_other_namespaces(session, name, namespace)}; nothing deleted{remains}", newlines=False)) from None
    except DamagedRow as error:
        database = getattr(session, "database", None)
        if isinstance(database, SqliteStore) and session.store is database:  # a writable session on the simulator's store
            return _Damaged(name, str(error).split("damaged row in ", 1)[-1].split(": ", 1)[-1], database)
        raise InputError(printable(f"certification {name!r}: {error}; nothing deleted", newlines=False)) from None
    except StoreError as error:  # a read RBAC refused: which role grants it
        raise InputError(printable(f"{with_grant(f'certification {name!r}: {error}', error)}; nothing deleted", newlines=False)) from None
    if found.get("kind") != CERTIFICATION.kind or (found.get("metadata") or {}).get("name") != name:
        raise InputError(printable(f"certification {name!r}: the server answered with something else "
                                   f"({found.get('kind')}); nothing deleted", newlines=False))
    return found


__all__ = ["CLEANUP_WAIT_SECONDS", "delete_command"]


def taking_over(session: Session, console: Console) -> Callable[[], Awaitable[Engine | None]]:
    """For wait_collected: ask for the engine Lease (free once its holder released it or its duration passed); once
    taken, say so and give this process's engine, which collects what the deletion left."""
    async def take_over() -> Engine | None:
        if await session.take_over():
            console.print("no engine holds the lease any more: this process took it over and runs the engine", soft_wrap=True)
            return session.engine
        return None

    return take_over
