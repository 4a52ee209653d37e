"""`nvcre certification list`: the certifications of a namespace (or of all, -A) with their results, as `kubectl get
certifications` shows them, on the simulator or a cluster alike."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from nvcre_tui.cli import EXIT_BAD_INPUT, EXIT_OK
from nvcre_tui.cli.kubeflags import check_namespace
from nvcre_tui.cli.no_engine import stalled_note
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.report import WAITING, damaged_rows, waiting_of
from nvcre_tui.cli.session import add_session_arguments, open_looking_session, tell_notices, where_of
from nvcre_tui.engine.api.damage import damaged_object
from nvcre_tui.engine.api.provenance import foreign_status
from nvcre_tui.engine.api.vocabulary import RESULT_FAILED, RESULT_RUNNING
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers.conditions import is_terminal
from nvcre_tui.engine.controllers.foreign import refusal_message
from nvcre_tui.engine.controllers.iterations import blamed_names, excluded_counted, inconclusive_counted
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.kube.held import deletion_held
from nvcre_tui.engine.printable import json_printable
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.report.model import waited_and_ran_so_far
from nvcre_tui.engine.report.shown_order import in_shown_order, result_of
from nvcre_tui.engine.store.protocol import CERTIFICATION, WORKFLOW
from nvcre_tui.engine.units import format_age, format_duration

Obj = dict[str, Any]
COLUMNS = ("NAME", "RESULT", "CATEGORIES PASSED", "FAILED NODES", "INCONCLUSIVE", "EXCLUDED", "RUNTIME", "WAITED", "AGE")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `list` to the certification group."""
    listing = commands.add_parser("list", aliases=["ls"], help="the certifications of a namespace (-A: of all) and their results")
    add_session_arguments(listing, namespace_help="namespace of the certifications (default: the context's, else default)")
    listing.add_argument("-A", "--all-namespaces", action="store_true", help="the certifications of every namespace")
    listing.add_argument("-o", "--output", choices=("table", "json"), default="table")
    listing.set_defaults(func=list_command)


def list_command(args: argparse.Namespace) -> int:
    """Print the certifications and their results."""
    return asyncio.run(_list(args))


async def _list(args: argparse.Namespace) -> int:
    check_namespace(args.namespace)
    if args.all_namespaces and args.namespace:
        raise InputError("-A lists every namespace and -n one: give one of them")
    session, told = await open_looking_session(args, nodes_needed=False)
    try:
        namespace = None if args.all_namespaces else args.namespace or getattr(session, "namespace", None) or "default"
        try:
            certs = (await session.store.list(CERTIFICATION, namespace)).items
        except StoreError as error:
            raise InputError(with_grant(f"certifications of {where_of(session)}: {error}", error)) from None
        try:
            workflows: list[Obj] | None = (await session.store.list(WORKFLOW, namespace)).items
        except StoreError:  # a user who may read certifications only: their runtime is unknown ("-"), never all wait
            workflows = None
        owned: dict[str, list[Obj]] = {}  # certification uid -> its Workflows (when they ran: its runtime apart from its wait)
        for wf in workflows or []:
            for owner in _mapping(wf.get("metadata")).get("ownerReferences") or []:
                if isinstance(owner, dict) and isinstance(wf.get("status", {}), dict):
                    owned.setdefault(str(owner.get("uid")), []).append(wf)
        # By namespace, each in the order the dashboard and the wall show them (report.shown_order: it listed oldest first)
        certs = sorted(in_shown_order(certs, _result), key=lambda cert: str(_mapping(cert.get("metadata")).get("namespace") or ""))
        from nvcre_tui.engine.session import SimSession, store_now  # the session is open: the module is loaded already

        stamped_now = store_now(session)
        if isinstance(session, SimSession) and session.engine is None and session.resume is not None:
            # The simulated fleet keeps time while no process runs (its next engine resumes there, and the console's
            # dashboard and the wall count ages to it): this reader's clock stays where the last engine left the store,
            # and AGE read 4h42m of a certification the dashboard beside it aged 2d22h
            stamped_now = max(stamped_now, session.resume.at(datetime.now(UTC), session.scenario.speed))
        rows = [row(cert, session.clock.now(), owned.get(str(_mapping(cert.get("metadata")).get("uid")), []) if workflows is not None else None,
                    stamped_now=stamped_now)
                for cert in certs]
        damaged = [f"{row}; left out of the list" for row in damaged_rows(session)]
        # Listed FAILED (row), as the engine fails them, and named: a status set to PASSED by hand is no result
        damaged += [refusal_message(CERTIFICATION.kind, cert, foreign) for cert in certs
                    if (foreign := foreign_status(CERTIFICATION.kind, cert)) is not None]
        try:
            _print_rows(rows, args.output, namespace)
        except BrokenPipeError:
            if not damaged:  # the reader stopped reading (`| head`): it has what it wanted
                raise
            raise InputError(damaged) from None  # still named, exit 2: a list over the output buffer said nothing, exit 0
        if args.output != "json" and not rows and not damaged:  # as kubectl: said on stderr, stdout stays empty for scripts
            where = "any namespace" if namespace is None else f"namespace {namespace}"
            say(f"No certifications in {where} of {where_of(session)}.")
        advanced = []  # those an engine would advance: not one being deleted, whatever holds the Lease
        for cert, listed in zip(certs, rows, strict=True):  # RUNNING for good, where the finalizer is a garbage collector's and none runs
            if (held := deletion_held(str(_mapping(cert.get("metadata")).get("name")), cert)) is not None:
                say(f"nvcre: {held}")
            else:  # -A: named with their namespace, as the table does
                advanced.append({**listed, "name": f"{listed['namespace']}/{listed['name']}" if namespace is None else listed["name"]})
        if (stalled := await stalled_note(session, advanced)) is not None:  # RUNNING read as progress where nothing advances it
            say(stalled)
        for line in damaged:  # named, never dropped silently; exit 2
            say(line)
        return EXIT_BAD_INPUT if damaged else EXIT_OK
    finally:
        try:
            await session.close()
        finally:
            tell_notices(session, told)


def _print_rows(rows: list[Obj], output: str, namespace: str | None) -> None:
    """The listed certifications on standard output: JSON, or a table when there are any."""
    if output == "json":
        print(json_printable(json.dumps(rows, indent=2, ensure_ascii=False)))
    elif rows:
        columns = ("NAMESPACE", *COLUMNS) if namespace is None else COLUMNS
        print_table(columns, [([r["namespace"]] if namespace is None else []) + [
            r["name"], r["phase"], r["passedCategories"], r["failedNodes"], r["inconclusiveNodes"], r["excludedNodes"], _duration(r["runtimeSeconds"]),
            _duration(r["waitedSeconds"]), r["age"]] for r in rows])


def row(cert: Obj, now: datetime, workflows: Sequence[Obj] | None = None, *, stamped_now: datetime | None = None) -> Obj:
    """One certification as listed: its summary (written by the engine; "-" before its first status), its runtime (while
    one of its `workflows` ran) and apart the time it waited for nodes (report.model.waited_and_ran_so_far: until now while it runs;
    unknown without its Workflows), and age. Its phase is its result but WAITING while none of its categories has
    started (its summary says RUNNING then, and `waiting` why: "for certification first"), as the dashboard and the
    wall say it: the list read RUNNING where they said WAITING. AGE counts to `stamped_now`, now on the clock that
    stamped its creationTimestamp (session.store_now; default `now`): an API server's, not a --sim-runner fleet's."""
    metadata, status = _mapping(cert.get("metadata")), _mapping(cert.get("status"))
    summary = _mapping(status.get("summary"))
    created = str(metadata.get("creationTimestamp") or "")
    try:
        age = format_age(max(0.0, ((stamped_now or now) - parse_time(created)).total_seconds()))
    except (TypeError, ValueError):
        age = "-"
    # A status someone other than nvcre wrote (api/provenance.py) is no result: FAILED, as the engine fails it, and none
    # of its figures is shown ("-"): the row read `FAILED  1/1  0` of a summary set to PASSED by hand
    foreign = foreign_status(CERTIFICATION.kind, cert) is not None
    if foreign:
        summary = {}
    # So far for one still running (now: the session's clock), as the dashboard counts it
    timing = (waited_and_ran_so_far(status, created, workflows, now, stamped_now or now)
              if workflows is not None and not foreign else None)
    result = RESULT_FAILED if foreign else str(summary.get("result") or "PENDING")
    waiting = waiting_of(cert, workflows) if result == RESULT_RUNNING else None
    return {
        "name": str(metadata.get("name") or ""), "namespace": str(metadata.get("namespace") or ""),
        # result: the Certification's own (its status, `kubectl get`, report's exit code); phase: as the console shows it
        "result": result, "phase": WAITING if waiting is not None else result, "waiting": waiting,
        "passedCategories": str(summary.get("passedCategories") or "-"),
        "failedNodes": _count(summary.get("failedNodes")), "inconclusiveNodes": _inconclusive(workflows),
        "excludedNodes": _excluded(cert, summary, workflows),
        "created": created, "startTime": status.get("startTime"), "completionTime": status.get("completionTime"),
        "runtimeSeconds": timing[1] if timing else None, "waitedSeconds": timing[0] if timing else None, "age": age,
    }


def _excluded(cert: Obj, summary: Obj, workflows: Sequence[Obj] | None) -> int | str:
    """EXCLUDED: the summary's excludedNodes, but for a finished certification counted again from its Workflows
    (controllers.iterations.excluded_counted: one node, one state, a failed node excluded from a later category counts
    as failed): an engine before that rule counted such a node under both, and a finished certification's summary is
    written again only once an engine that knows the rule sees it (controllers.certification._recount_finished).
    Only when the summary counts some (the rule can only lower it); its Workflows unreadable or
    unknown (a user who may read certifications only): the summary's."""
    stored = _count(summary.get("excludedNodes"))
    if not isinstance(stored, int) or not stored or workflows is None or not is_terminal(cert):
        return stored
    try:
        failed = {name for wf in workflows for name in blamed_names(wf, ())}
        return len(excluded_counted(workflows, failed))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):  # a damaged Workflow: the summary's word
        return stored


def _inconclusive(workflows: Sequence[Obj] | None) -> int | str:
    """INCONCLUSIVE: the nodes that ran and proved nothing, blamed nowhere (controllers.iterations.inconclusive_counted,
    the report's inconclusiveNodes, the wall's `inconclusive`), counted from the certification's Workflows: its summary
    has no such count (kubectl's columns neither), and a certification failed on them listed FAILED with 0 failed and 0
    excluded nodes. "-" where its Workflows are unknown (a user who may read certifications only) or unreadable."""
    if workflows is None:
        return "-"
    try:
        failed = {name for wf in workflows for name in blamed_names(wf, ())}
        return len(inconclusive_counted(workflows, failed))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):  # a damaged Workflow: not counted, not guessed
        return "-"


def _result(cert: Obj) -> str:
    """The result a certification is ordered by: as listed (a status another hand wrote is FAILED, see row)."""
    return RESULT_FAILED if foreign_status(CERTIFICATION.kind, cert) is not None else result_of(cert)


def _duration(seconds: float | None) -> str:
    return format_duration(seconds) if seconds is not None else "-"


def _mapping(value: Any) -> Obj:
    """A part of a stored object that should be a mapping, else empty (a damaged object still lists)."""
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int | str:
    return value if isinstance(value, int) and not isinstance(value, bool) else "-"


__all__ = ["list_command", "register", "row"]
