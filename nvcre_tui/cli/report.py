"""`nvcre certification report`: the report of certifications, from the simulator's store or a cluster; and the
pieces `run --wait` ends with (the report of one certification, its results file).

Exit codes: 0 PASSED or INCOMPLETE, 1 FAILED, 2 bad input, 3 still running.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_TIMEOUT
from nvcre_tui.cli.filepaths import file_path
from nvcre_tui.cli.stdout import verdict_output
from nvcre_tui.cli.kubeflags import check_certification_names, check_namespace
from nvcre_tui.cli.no_engine import stalled_note
from nvcre_tui.cli.session import (add_session_arguments, archived_elsewhere, in_other_namespaces, on_cluster, open_looking_session, state_path_of, tell_notices, where_of)
from nvcre_tui.engine.api.damage import damaged_object
from nvcre_tui.engine.api.vocabulary import RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED, RESULT_RUNNING, NodeState
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.history.db import default_history_path
from nvcre_tui.engine.outfiles import check_writable, write_atomically
from nvcre_tui.engine.printable import json_printable, printable
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.report.readmodel import owned
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.store.errors import NotFound, StoreError, describe
from nvcre_tui.paths import NoHomeFolder, typed_path
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW

if TYPE_CHECKING:  # the sessions (the controllers and the simulator behind them) load when a command opens one
    from nvcre_tui.engine.session import Session

__all__ = ["RESULT_EXIT", "WAITING", "waiting_of", "certification_report", "check_results_file", "close_session", "damaged_rows", "namespace_of", "refuse_damaged_rows",
           "register", "report_exit", "write_results"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `report` to the certification group."""
    report = commands.add_parser("report", help="the report of certifications (exit 1 when one failed, else 3 when one still runs)")
    report.add_argument("names", metavar="NAME", nargs="+", help="one or more certifications (several: text sections, a JSON array, "
                                                                 "one JUnit file)")
    report.add_argument("-o", "--output", choices=("text", "json", "junit", "html"), default="text",
                        help="html: one self-contained file (inline CSS and SVG) with curves, histograms and evidence; one certification")
    add_session_arguments(report, namespace_help="namespace of the Certifications (default: the context's, else default)")
    report.add_argument("--results-file", metavar="F", type=file_path, help="also write the JSON report here (an array for several)")
    report.set_defaults(func=report_command)


WAITING = NodeState.WAITING.value.upper()  # the phase of a RUNNING certification none of whose categories has started, as the console says it
RESULT_EXIT = {RESULT_PASSED: EXIT_OK, RESULT_INCOMPLETE: EXIT_OK, RESULT_FAILED: EXIT_FAILED, RESULT_RUNNING: EXIT_TIMEOUT}


def namespace_of(args: argparse.Namespace, session: Session, fallback: str | None = None) -> str:
    """-n, else `fallback` (the file's namespace), else the cluster context's, else default."""
    return args.namespace or fallback or getattr(session, "namespace", None) or "default"


async def _html(session: Session, report: dict[str, Any], name: str, namespace: str) -> str:
    """The HTML report, with each nccl category's size curves read from the runs' logs."""
    from nvcre_tui.engine.report.html import render_html, size_curves
    from nvcre_tui.engine.store.protocol import WORKLOADRUN

    cert = await session.store.get(CERTIFICATION, name, namespace)
    workflows = owned((await session.store.list(WORKFLOW, namespace)).items, cert)
    jobs = (await session.store.list(JOB, namespace)).items
    runs = (await session.store.list(WORKLOADRUN, namespace)).items
    curves, notes = await size_curves(session.logs, workflows, jobs, runs)
    return render_html(report, curves, notes)


async def certification_report(session: Session, name: str, namespace: str, console: Console | None = None) -> dict[str, Any]:
    """Build the report of one certification from the session's store. A damaged Workflow or Job (from a
    damaged store) is left out and named on `console`; a damaged Certification is an InputError."""
    cert = await session.store.get(CERTIFICATION, name, namespace)
    path = getattr(session, "path", None)  # the simulator's store file; a cluster has none
    where = f"{path}: " if path else ""
    problem = damaged_object(CERTIFICATION.kind, cert)
    if problem:
        # a cluster has no store file: there it is deleted as any certification (on the simulator, a row too damaged
        # to read may need its file moved away)
        delete = "delete it from the store (or the store file)" if path else "delete it"
        raise InputError(printable(f"{where}certification {namespace}/{name} is damaged: {problem}; {delete} and run it again",
                                   newlines=False))
    # Its children by owner, as the engine joins them (report/readmodel.py): listed without a label selector, which
    # would hide a Workflow or Job whose label someone removed; Jobs listed once, not per Workflow.
    workflows = _undamaged(WORKFLOW.kind, owned((await session.store.list(WORKFLOW, namespace)).items, cert), where, console)
    listed_jobs = (await session.store.list(JOB, namespace)).items
    jobs = [job for wf in workflows for job in owned(listed_jobs, wf)]
    report = build_report(cert, workflows, _undamaged(JOB.kind, jobs, where, console))
    # As `certification list -o json`: result the Certification's own (the exit code), phase as the console says it
    waiting = waiting_of(cert, workflows) if report["result"] == RESULT_RUNNING else None
    report.update(phase=WAITING if waiting is not None else report["result"], waiting=waiting)
    return report


def waiting_of(cert: dict[str, Any], workflows: Sequence[dict[str, Any]] | None) -> str | None:
    """Why a RUNNING certification none of whose categories has started waits (views.waiting_to_start), else None; a
    damaged one (still listed) is not read further. Without its Workflows (a user who may not read them) its
    categories' statuses say it alone."""
    from nvcre_tui.engine.views.snapshot import Snapshot
    from nvcre_tui.engine.views.waiting import waiting_to_start

    if damaged_object(CERTIFICATION.kind, cert) is not None:
        return None
    snapshot = Snapshot(certifications=[cert], workflows=list(workflows or []))
    return waiting_to_start(snapshot, str(cert["metadata"]["name"]))


def _undamaged(kind: str, items: list[dict[str, Any]], where: str, console: Console | None) -> list[dict[str, Any]]:
    kept = []
    for item in items:
        problem = damaged_object(kind, item)
        if problem is None:
            kept.append(item)
        elif console is not None:
            console.print(escape(printable(f"{where}{kind} {item['metadata']['name']} is damaged and left out of the report: {problem}",
                                           newlines=False)), soft_wrap=True)
    return kept


def write_results(path: str | None, report: dict[str, Any] | list[dict[str, Any]]) -> None:
    if path:
        write_atomically(path, json.dumps(report, indent=2) + "\n", "--results-file")


# Inputs and the store a results file must not be: writing the report there would replace them.
_KEPT_FILES = (("state", "--state"), ("cert_file", "--cert-file"), ("scenario", "--scenario"), ("nodes", "--nodes"), ("history", "--history"))


def check_results_file(path: str | None, args: argparse.Namespace) -> None:
    """A results file we cannot write, or one that is the store or an input (the report would replace it), is bad
    input, found before anything is created."""
    if not path:
        return
    check_writable(path, "--results-file", stream=True)  # a named pipe: its reader must be there before the run
    kept = {flag: getattr(args, dest, None) for dest, flag in _KEPT_FILES}
    if not on_cluster(args):  # the store and the history in their default places count as much as named ones
        kept["--state"] = str(state_path_of(args))
        kept["--history"] = kept["--history"] or str(default_history_path())
    for flag, other in kept.items():
        if isinstance(other, str) and other not in ("", "-") and _same_file(path, other):
            raise InputError(f"--results-file: {path} is the {flag} file; the report would replace it: write it elsewhere")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): the same path is the same file
        return _absolute(a) == _absolute(b)


def _absolute(path: str) -> str:
    try:
        return os.path.abspath(typed_path(path))
    except NoHomeFolder:  # said by the check that runs first; here only compared
        return os.path.abspath(path)


async def close_session(session: Session, told: int) -> None:
    """Close the session, then tell its notices that came after the first `told` (an archive that failed)."""
    try:
        await session.close()
    finally:
        tell_notices(session, told)


def damaged_rows(session: Any, said: Collection[str] = ()) -> list[str]:
    """`PATH: Job default/x: body is not JSON (...)` for each row of the simulator's store that is no object, which
    what was read left out ([] on a cluster); but those of the objects in `said` (`Certification default/x`), whose
    line was already given."""
    from nvcre_tui.engine.store.sqlite import SqliteStore

    database = getattr(session, "database", None)
    if not isinstance(database, SqliteStore):
        return []
    return [printable(f"{database.path}: {row}", newlines=False) for row in database.damaged_rows
            if not any(row.startswith(f"{about}: ") for about in said)]


def refuse_damaged_rows(session: Any, said: Collection[str] = ()) -> None:
    """Rows of the store that are not objects were left out of what was read: one line, exit 2 (the objects in `said`
    were named already: not again)."""
    rows = damaged_rows(session, said)
    if rows:
        more = f" ({len(rows) - 1} more damaged rows left out)" if len(rows) > 1 else ""
        raise InputError(f"{rows[0]}; left out of what was read{more}")


def report_command(args: argparse.Namespace) -> int:
    """Print the report of a certification on the simulator."""
    return asyncio.run(_report(args))


async def _report(args: argparse.Namespace) -> int:
    check_namespace(args.namespace)
    check_certification_names(args.names)
    if args.output == "html" and len(args.names) > 1:
        raise InputError("-o html: one certification per file; give one NAME (or -o text|json|junit for several)")
    check_results_file(args.results_file, args)
    session, told = await open_looking_session(args)
    try:
        return await _report_in(session, args)
    finally:
        await close_session(session, told)


async def _report_in(session: Session, args: argparse.Namespace) -> int:
    """Every report is built before any is printed. A name not found (or a damaged Certification, or one the store
    could not give: its row damaged, the read refused) is one line on stderr after the reports of the others, as a
    damaged row is, and exit 2: `report a nosuch` printed nothing, its
    line read as for `report nosuch` alone, and a's report was lost to a typo in another name. Several names give an
    array (JSON, the results file) of those reported, in the order given; none found prints nothing."""
    namespace = namespace_of(args, session)
    reports = []
    problems: list[str] = []  # one line per name not reported
    said: list[str] = []  # the Certifications whose read failed, named in `problems`: a damaged row's line would say them again
    for name in args.names:
        try:  # report only reads: the simulator's store is opened read-only
            reports.append(await certification_report(session, name, namespace, Console(stderr=True, highlight=False, soft_wrap=True)))
        except NotFound:
            problems.append(printable(f"certification {name!r} not found in namespace {namespace} of {where_of(session)}"
                                      f"{await in_other_namespaces(session, name, namespace)}"
                                      f"{archived_elsewhere(session, name, namespace)}", newlines=False))
        except InputError as error:  # a damaged Certification
            problems += error.messages
        except StoreError as error:  # its row damaged, a read refused (RBAC) or not answered: the others still report
            problems.append(printable(with_grant(f"certification {name!r}: {error}", error), newlines=False))  # RBAC: which role grants it
            said.append(describe(CERTIFICATION.kind, name, namespace))
    try:
        refuse_damaged_rows(session, said)
    except InputError as error:
        problems = error.messages + problems  # after the report: the objects that do validate are still reported
    if not reports:
        raise InputError(problems)
    several = len(args.names) > 1  # the shape the command asked for, whatever was found
    write_results(args.results_file, reports if several else reports[0])
    # The reader may stop reading (`| head`): what it skipped is its choice, but a name not reported is still said, and
    # the exit code is still the verdict's. Before, a report over the output buffer met the closed pipe here: exit 0.
    with verdict_output():
        await _print_reports(session, args, reports, namespace)
    if problems:
        raise InputError(problems)
    held = await _deletions_held(session, [report["name"] for report in reports], namespace)
    # a certification being deleted is not advanced by any engine: the lease's holder is beside the point for it
    stalled = await stalled_note(session, [report for report in reports if report["name"] not in held])
    for note in [*held.values(), *([stalled] if stalled else [])]:
        Console(stderr=True, highlight=False, soft_wrap=True).print(escape(note), soft_wrap=True)
    return report_exit(report["result"] for report in reports)


async def _print_reports(session: Session, args: argparse.Namespace, reports: list[dict[str, Any]], namespace: str) -> None:
    """The reports in the format asked for, on standard output."""
    if args.output == "json":
        print(json_printable(json.dumps(reports if len(args.names) > 1 else reports[0], indent=2, ensure_ascii=False)))
    elif args.output == "junit":
        print(printable(render_junit(reports)), end="")
    elif args.output == "html":
        print(await _html(session, reports[0], args.names[0], namespace), end="")
    else:
        print("\n".join(printable(render_text(report)) for report in reports), end="")


async def _deletions_held(session: Session, names: list[str], namespace: str) -> dict[str, str]:
    """By name, a line for each certification being deleted whose finalizer holds it: its report reads RUNNING, for
    good where the finalizer is the garbage collector's and none runs (engine/kube/held.py)."""
    from nvcre_tui.engine.kube.held import deletion_held

    notes = {}
    for name in names:
        try:
            cert = await session.store.get(CERTIFICATION, name, namespace)
        except StoreError:
            continue
        if (note := deletion_held(name, cert)) is not None:
            notes[name] = printable(f"nvcre: {note}", newlines=False)
    return notes


def report_exit(results: Iterable[str]) -> int:
    """The exit of several reports: FAILED when one failed, else RUNNING when one still runs, else 0 (PASSED and
    INCOMPLETE, as NVCRE)."""
    codes = {RESULT_EXIT[result] for result in results}
    return next((code for code in (EXIT_FAILED, EXIT_TIMEOUT) if code in codes), EXIT_OK)
