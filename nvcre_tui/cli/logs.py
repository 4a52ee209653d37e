"""`nvcre certification logs NAME`: a run's log from the shell, read as the console's log pane reads it.

The log comes from the session's LogSource (`session.logs.lines(run)`), the one the console's logs screen reads: on the
simulator the run's output as the simulated fleet plays it, on a cluster the result pod's log (pods/log) with the line
naming pod, container and node. A finished run whose pods are gone gives the tail its Job kept (`kept_tail`), as the
pane does; a run the simulated fleet played, read without it (`played_elsewhere`), asks for no pod and heads that tail
as the fleet's (`simulated_tail`). `--follow` reads again until the run finishes, printing only what is new (`LogCursor`, as the pane), through
an API server that stops answering for a while (said once on stderr, and that it answers again: `_Outage`; the wait
for a first job too); where no engine holds the Lease (or its holder stopped renewing it; on the simulator, no process holds its store's) it says
once on stderr that nothing advances the run, and goes on following.

Which log: `--job JOB` names one; without it `--category D/V` and `--node NODE` narrow the certification's jobs, and
when one job is left its log is printed; otherwise the jobs that have a log are listed (failed first) with how to pick (exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli.kubeflags import check_certification_names, check_namespace
from nvcre_tui.cli.no_engine import no_engine_note, reader_lease
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.report import close_session, namespace_of
from nvcre_tui.cli.session import add_session_arguments, archived_elsewhere, in_other_namespaces, open_looking_session, where_of
from nvcre_tui.engine.api.bodies import group_nodes, job_status, run_name, run_status
from nvcre_tui.engine.api.damage import damaged_object
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.vocabulary import FAILED, NOTHING_STARTED, SUCCEEDED
from nvcre_tui.engine.controllers.conditions import is_terminal
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.report.logtail import GAP_LINE, LogCursor, kept_tail, played_elsewhere, simulated_tail
from nvcre_tui.engine.names import names_a_job_of
from nvcre_tui.engine.planning.render import category_workflow_name
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.nodestates import failure_reason, job_outcome
from nvcre_tui.engine.report.readmodel import CertificationView, owned
from nvcre_tui.engine.views.waiting import no_output
from nvcre_tui.engine.store.errors import NotFound, RetryableError, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.units import listed

if TYPE_CHECKING:
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.session import Session

__all__ = ["register", "follow"]

Obj = dict[str, Any]
FOLLOW_SECONDS = 1.0  # how often --follow reads again (the console's log pane polls as often)
# `--follow` through an outage (429, 5xx, timeouts, dropped connections past the client's retries), as `run --wait` says it
OUTAGE = "nvcre: no answer from the store since {since} ({error}): {meanwhile}; retried meanwhile"
ANSWERS = "nvcre: the store answers again"
LEASE_CHECK_SECONDS = 15.0  # how often --follow asks whether an engine holds the Lease (its default duration)
NODES_SHOWN = 3       # a group's nodes in the listing, then `+N more`
OTHERS_SHOWN = 10     # jobs listed after the failed ones (all listed): the failed ones must not scroll away


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `logs` to the certification group."""
    logs = commands.add_parser("logs", help="a run's log (without --job: the jobs that have one, failed first)")
    logs.add_argument("name", metavar="NAME", help="the certification")
    logs.add_argument("--job", metavar="JOB", help="the Job whose run's log to print (as `logs NAME` lists them)")
    logs.add_argument("--category", metavar="D/V", help="only the jobs of this category (domain/variant, or its title as the report gives it)")
    logs.add_argument("--node", metavar="NODE", help="only the jobs whose group holds this node")
    logs.add_argument("--follow", "-f", action="store_true", help="keep reading until the run finishes")
    add_session_arguments(logs, namespace_help="namespace of the Certification (default: the context's, else default)")
    logs.set_defaults(func=logs_command)


@dataclass(frozen=True)
class JobEntry:
    """One Job of the certification, with the category it ran for."""

    category: str  # its title in the report (`domain/variant`, `#2` where it runs twice)
    key: str       # domain/variant
    job: Obj

    @property
    def name(self) -> str:
        return str(self.job["metadata"]["name"])

    @property
    def outcome(self) -> str:
        return job_outcome(self.job)

    @property
    def has_log(self) -> bool:
        """It ran (a WorkloadRun was made, and it did not fail before its workload started), or it kept its failed
        run's tail."""
        status = job_status(self.job)
        if (status.get("failureLog") or {}).get("tail"):
            return True
        return bool(status.get("workloadRef")) and not self.never_started

    @property
    def never_started(self) -> bool:
        """It failed before its workload started (NOTHING_STARTED: an API server alone makes no pod): nothing printed."""
        return self.outcome == FAILED and failure_reason(self.job) in NOTHING_STARTED


def none_started(name: str, entries: list[JobEntry]) -> str:
    """What `logs NAME` says of a certification none of whose workloads started: its jobs, each with its reason."""
    shown = listed([f"{entry.name}: {failure_reason(entry.job)}" for entry in entries], 3)
    return f"No job of certification {name} has a log: none of its workloads started ({shown})."


def logs_command(args: argparse.Namespace) -> int:
    """Print a run's log, or list the jobs that have one."""
    return asyncio.run(_logs(args))


async def _logs(args: argparse.Namespace) -> int:
    check_namespace(args.namespace)
    check_certification_names([args.name])
    if args.job and (args.category or args.node):
        raise InputError("--job names one job; --category and --node pick among them: give either")
    if args.category is not None and "/" not in args.category:
        raise InputError(f"--category: {args.category!r} is no domain/variant (e.g. communication/nccl-all-reduce)")
    session, told = await open_looking_session(args, live=args.follow, nodes_needed=False)
    try:
        return await _logs_in(session, args)
    finally:
        await close_session(session, told)


async def _entries(session: Session, name: str, namespace: str, *,
                   outages: bool = False) -> tuple[CertificationView, list[JobEntry]]:
    """The certification, and its Jobs (damaged ones left out) in category order. With `outages`, a transient failure
    (the store's retries spent) is raised as it is, for the caller to ride through (_Outage); else it is one line."""
    try:
        cert = await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        raise InputError(printable(f"certification {name!r} not found in namespace {namespace} of {where_of(session)}"
                                   f"{await in_other_namespaces(session, name, namespace)}"
                                   f"{archived_elsewhere(session, name, namespace)}", newlines=False)) from None
    except StoreError as error:
        if outages and error.retryable:
            raise
        raise InputError(printable(f"certification {name!r}: {_refused(error)}", newlines=False)) from None
    if (problem := damaged_object(CERTIFICATION.kind, cert)) is not None:
        raise InputError(printable(f"certification {namespace}/{name} is damaged: {problem}", newlines=False))
    # by owner, as the engine joins them (report/readmodel.py): a label removed by hand hides nothing
    workflows = [wf for wf in owned((await session.store.list(WORKFLOW, namespace)).items, cert) if damaged_object(WORKFLOW.kind, wf) is None]
    listed_jobs = (await session.store.list(JOB, namespace)).items
    jobs = [job for wf in workflows for job in owned(listed_jobs, wf) if damaged_object(JOB.kind, job) is None]
    view = CertificationView.of(cert, workflows, jobs)
    return view, [JobEntry(category.name, category.key, job) for category in view.categories for job in category.jobs]


def _refused(error: StoreError) -> str:
    """The store's error on one line, and the role that grants a read RBAC refused (grants.READS)."""
    return with_grant(" ".join(str(error).split()), error)


def _chosen(entries: list[JobEntry], args: argparse.Namespace) -> list[JobEntry]:
    """The entries --job, --category and --node leave; a value that names nothing is bad input naming what there is."""
    if args.job:
        found = [entry for entry in entries if entry.name == args.job]
        if not found:
            raise InputError(f"--job: certification {args.name} has no job {args.job!r} (`nvcre certification logs {args.name}` lists them)")
        return found
    if args.category:
        categories = list(dict.fromkeys(entry.category for entry in entries))
        entries = [entry for entry in entries if args.category in (entry.key, entry.category)]
        if not entries:
            raise InputError(f"--category: certification {args.name} ran no job of {args.category} (its categories with jobs: "
                             f"{', '.join(categories) or 'none yet'})")
    if args.node:
        entries = [entry for entry in entries if args.node in group_nodes(entry.job)]
        if not entries:
            raise InputError(f"--node: no job of certification {args.name}{' in ' + args.category if args.category else ''} ran on {args.node}")
    return entries


async def _logs_in(session: Session, args: argparse.Namespace) -> int:
    namespace = namespace_of(args, session)
    view, entries = await _entries(session, args.name, namespace)
    if args.follow:
        entries = await _first_job(session, args, namespace, view, entries)
    chosen = _chosen(entries, args)
    with_log = [entry for entry in chosen if entry.has_log]
    if args.job or ((args.category or args.node) and len(with_log) == 1):
        return await _print_log(session, (with_log or chosen)[0], namespace, args.follow)
    if (args.category or args.node) and not with_log and len(chosen) == 1 and chosen[0].never_started:
        return await _print_log(session, chosen[0], namespace, args.follow)  # says why it has none
    if not with_log and chosen and all(entry.never_started for entry in chosen):
        # listed as having a log, "Pick one" (exit 2), and each then said it had none: said at once
        print(printable(none_started(args.name, chosen), newlines=False), file=sys.stderr)
        return 0
    _list(with_log, args)
    # a list to pick from is no log: incomplete input (exit 2, as the README's exit codes say), so `logs NAME > f && ...`
    # does not go on with a table for a log (kubectl exits 1 when it needs a pod it was not given; 1 is FAILED here)
    return 2 if with_log else 0


async def _first_job(session: Session, args: argparse.Namespace, namespace: str, view: CertificationView,
                     entries: list[JobEntry]) -> list[JobEntry]:
    """`--follow` of a certification that has run no job (of --category, on --node) yet waits for its first, as `kubectl
    logs -f` waits for a pod to start (it exited at once: `ran no job of ... (its categories with jobs: none yet)`);
    said once on stderr, the engine's absence too. Until the certification ends: then the jobs as they are (what names
    none is bad input, as without --follow). A --category the certification does not have is not waited for. A --job
    not made yet is waited for (it was refused at once) when its name is one the certification's Workflows give
    their Jobs (names_a_job_of), as Job names are predictable; any other name is refused at once."""
    if args.job:
        if any(entry.name == args.job for entry in entries) or not _named_as_its_jobs(view.cert, args.job):
            return entries
        what, first, awaited = f"certification {args.name} has no job {args.job} yet", "it", f"job {args.job}"
    else:
        if args.category and not any(args.category in (category.key, category.name) for category in view.categories):
            return entries
        what = f"certification {args.name} has run no job{f' of {args.category}' if args.category else ''}" \
               f"{f' on {args.node}' if args.node else ''} yet"
        first, awaited = "its first", "its first job"
    stalled = _StallNote(session, what, meanwhile=f"waiting for {awaited} meanwhile")
    outage = _Outage(f"waiting for {awaited}")
    said = False
    while not is_terminal(view.cert) and not _selected_ran(entries, args):
        if not said:
            say(f"nvcre: {what}: waiting for {first} (ctrl-c stops)")
            said = True
        await stalled.check()
        await asyncio.sleep(FOLLOW_SECONDS)
        try:
            view, entries = await _entries(session, args.name, namespace, outages=True)
        except RetryableError as error:  # an API server's restart: it ended the wait (exit 2); the wait goes on
            outage.failed(error)
            continue
        outage.answered()
    return entries


def _selected_ran(entries: list[JobEntry], args: argparse.Namespace) -> bool:
    """--job is made (following it waits for its run), or some job --category and --node leave has a log (it ran)."""
    if args.job:
        return any(entry.name == args.job for entry in entries)
    try:
        return any(entry.has_log for entry in _chosen(entries, args))
    except InputError:  # none left: none ran yet
        return False


def _named_as_its_jobs(cert: Obj, job: str) -> bool:
    """`job` is a name one of the certification's Workflows would give a Job (their names are predictable from its spec:
    category_workflow_name, even of a Workflow not made yet)."""
    try:
        model = Certification.model_validate(cert)
    except ValueError:  # damaged_object let it through: no name is predicted from it
        return False
    return any(names_a_job_of(category_workflow_name(model, index), job) for index in range(len(model.spec.categories)))


def _list(entries: list[JobEntry], args: argparse.Namespace) -> None:
    """The jobs that have a log, failed first (all of them, then OTHERS_SHOWN others), then how to pick one (on stderr:
    stdout is the table)."""
    if not entries:
        print(f"No job of certification {args.name} has a log yet.", file=sys.stderr)
        return
    ordered = sorted(entries, key=lambda entry: entry.outcome != FAILED)  # stable: category order within each
    failed = sum(entry.outcome == FAILED for entry in ordered)
    listed, left = ordered[:failed + OTHERS_SHOWN], ordered[failed + OTHERS_SHOWN:]  # every failed one stays on screen
    rows = []
    for entry in listed:
        nodes = group_nodes(entry.job)
        shown = ", ".join(nodes[:NODES_SHOWN]) + (f" +{len(nodes) - NODES_SHOWN} more" if len(nodes) > NODES_SHOWN else "")
        result = f"{FAILED} ({failure_reason(entry.job)})" if entry.outcome == FAILED else entry.outcome
        rows.append((entry.name, entry.category, result, shown or "-"))
    print_table(("JOB", "CATEGORY", "RESULT", "NODES"), rows)
    narrowing = _narrowing(args)
    if left:
        outcomes = ", ".join(sorted({entry.outcome for entry in left}))
        how = f"{' or '.join(narrowing)} narrows the list" if narrowing else "--job JOB names one"
        print(f"... and {len(left)} more ({outcomes}) not listed: {how}", file=sys.stderr)
    # Given both, several jobs are left (a diagnosis tests a node in several rounds, repeatCount runs it again):
    # only --job picks among them, never "--category D/V --node NODE", just given
    given = args.category or args.node
    pick = f" (or {'add ' if given else ''}{' '.join(narrowing)})" if narrowing else ""
    print(f"Pick one: nvcre certification logs {args.name} --job JOB{pick}", file=sys.stderr)


def _narrowing(args: argparse.Namespace) -> list[str]:
    """The flags that would narrow the list further: those not given yet."""
    return [flag for flag, given in (("--category D/V", args.category), ("--node NODE", args.node)) if not given]


async def _print_log(session: Session, entry: JobEntry, namespace: str, following: bool) -> int:
    """Print the run's log as the console's pane shows it; with `following`, until the run finishes. While it has no
    line, why is said on stderr as the pane says it (a run whose pods never started printed nothing at all, exit 0)."""
    stalled = _StallNote(session, f"the run of job {entry.name} has not finished")
    from nvcre_tui.engine.session import plays_the_fleet  # the session is open: the module is loaded already

    silence = _Silence(plays_the_fleet(session))

    async def read() -> tuple[list[str], bool]:
        try:
            run: Obj | None = await session.store.get(WORKLOADRUN, run_name(entry.name), namespace)
        except NotFound:
            run = None
        job = entry.job
        if run is None and following:  # the Job as it is now: once ended with no run, none will come
            with contextlib.suppress(StoreError):
                job = await session.store.get(JOB, entry.name, namespace)
        lines, complete = await read_log(run, job)
        silence.heard(lines, job, run, session.clock.now(), complete)
        if not complete:
            await stalled.check()
        return lines, complete

    async def read_log(run: Obj | None, job: Obj) -> tuple[list[str], bool]:
        if run is None:  # not made yet, or gone with its pods: what the Job kept (--follow waited for ever on one that ended)
            return kept_tail(job), not following or bool(kept_tail(job)) or is_terminal(job)
        finished = run_status(run).get("phase") in (SUCCEEDED, FAILED)
        if played_elsewhere(run, fleet_here=silence.fleet_here):  # no pod ever held it: none is asked for (as the pane)
            return simulated_tail(entry.job) if finished else [], finished or not following
        try:
            lines = await session.logs.lines(run)
        except StoreError as error:
            if following and error.retryable:
                raise  # an outage: followed through (read_through)
            raise InputError(f"logs of job {entry.name}: {_refused(error)}") from None
        if not lines and finished:
            lines = kept_tail(entry.job)
        return lines, finished or not following

    last: list[str] = []
    outage = _Outage("following the log as last read")

    async def read_through() -> tuple[list[str], bool]:
        """`read`, where a transient failure (the store's retries spent) is an outage said once: the log as last read
        meanwhile. It ended `--follow` (exit 2) a few seconds into an API server's restart."""
        nonlocal last
        try:
            lines, complete = await read()
        except RetryableError as error:
            outage.failed(error)
            return last, False
        outage.answered()
        last = lines
        return lines, complete

    await follow(read_through if following else read, asyncio.sleep)
    return 0


@dataclass
class _Outage:
    """A store that gives no answer while --follow reads (429, 5xx, timeouts, dropped connections past the client's
    retries): said once on stderr (OUTAGE, with what goes on `meanwhile`), and when a read answers again (ANSWERS). The
    log's follow and the wait for a first job ride through it alike."""

    meanwhile: str
    since: str | None = None  # the outage said (since when), until a read answers again

    def failed(self, error: RetryableError) -> None:
        if self.since is None:
            self.since = time.strftime("%H:%M:%S", time.localtime())
            say(OUTAGE.format(since=self.since, error=" ".join(str(error).split()), meanwhile=self.meanwhile))

    def answered(self) -> None:
        if self.since is not None:
            say(ANSWERS)
            self.since = None


@dataclass
class _StallNote:
    """Says once (no_engine_note) that no engine advances what --follow waits for; asks every LEASE_CHECK_SECONDS, so an
    engine that stops renewing the Lease while followed is told too, also one whose clock runs ahead (one Lease kept
    across the checks observes that its renewTime no longer changes)."""

    session: Session
    subject: str
    meanwhile: str = "following its log meanwhile"
    said: bool = False
    next_check: float = 0.0
    lease: EngineLease | None = None

    async def check(self) -> None:
        if self.said or time.monotonic() < self.next_check:
            return
        self.next_check = time.monotonic() + LEASE_CHECK_SECONDS
        self.lease = self.lease or reader_lease(self.session)
        note = await no_engine_note(self.session, self.subject, lease=self.lease)
        if note is not None:
            say(f"{note}; {self.meanwhile} (ctrl-c stops)")
            self.said = True


@dataclass
class _Silence:
    """Says on stderr why a log has no line: once while it has none, and again when it ends without one for another
    reason (no_output: the pane's words)."""

    fleet_here: bool  # this process plays the simulated fleet (session.plays_the_fleet)
    printed: bool = False
    said: str | None = None

    def heard(self, lines: list[str], job: Obj, run: Obj | None, now: datetime, complete: bool) -> None:
        self.printed = self.printed or bool(lines)
        if self.printed or (self.said is not None and not complete):
            return
        sentence, why = no_output(job, run, now, fleet_here=self.fleet_here)
        text = printable(f"{sentence}{f' Why: {why}' if why else ''}", newlines=False)
        if text != self.said:
            print(text, file=sys.stderr)
            self.said = text


async def follow(read: Callable[[], Awaitable[tuple[list[str], bool]]], sleep: Callable[[float], Awaitable[Any]]) -> None:
    """Print what `read` answers (the log so far, whether it is complete), then, until it is, only what is new."""
    cursor = LogCursor()
    while True:
        lines, complete = await read()
        fresh = cursor.advance(lines)
        if fresh.gap:
            print(GAP_LINE)
        for line in fresh.lines:
            print(printable(line, newlines=False))
        sys.stdout.flush()
        if complete:
            return
        await sleep(FOLLOW_SECONDS)
