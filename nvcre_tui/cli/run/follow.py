"""`run --wait`: the certification followed to its report, on the simulator or a cluster, with this process's engine
while it holds the Lease, taking it over once its holder is gone; the exit code."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli import EXIT_TIMEOUT
from nvcre_tui.cli.interrupt import StopRequest
from nvcre_tui.cli.report import RESULT_EXIT, certification_report, refuse_damaged_rows, write_results
from nvcre_tui.cli.run.progress import progress_check
from nvcre_tui.cli.session import Told
from nvcre_tui.cli.stdout import verdict_output
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.history.deletion import TAKE_OVER_SECONDS
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.engine.units import format_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session, SimSession


WATCH_POLL_SECONDS = 1.0


VIEWER_POLL_SECONDS = 0.1  # a simulator viewer looks at its certification and the Lease this often (local reads)


async def still_there(session: Session, name: str, namespace: str, uid: str) -> bool:
    """The certification of this uid is still on the store (a namesake made since is another)."""
    try:
        cert = await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        return False
    return not uid or cert["metadata"].get("uid") == uid


# On a cluster, once the process that ran the engine exits nothing reconciles the certification (an API server alone
# has no other engine): said instead of "goes on", which was true only where `nvcre controller` runs.
NO_ENGINE_AFTER = ("this command was its engine: nothing advances it until another nvcre engine takes the lease "
                   "(`nvcre controller`, or the console `nvcre`)")


def _was_its_engine(session: Session) -> bool:
    """This process runs the cluster's engine (the simulator's time goes on without a process: it catches up)."""
    from nvcre_tui.engine.session import SimSession

    return not isinstance(session, SimSession) and session.engine is not None


async def follow_to_report(session: Session, args: argparse.Namespace, name: str, namespace: str, limit: float,
                           console: Console, again: str, stop: StopRequest, told: Told) -> int:
    """Follow the certification to its end (or `limit`, or ctrl-c), print its report; the exit code."""
    from nvcre_tui.engine.session import SimSession

    goes_on = "--cleanup deletes it now" if args.cleanup else "the certification goes on"
    if not args.cleanup and _was_its_engine(session):
        goes_on = f"the certification stays, but {NO_ENGINE_AFTER}"
    started, started_real = session.clock.now(), time.monotonic()  # a viewer's clock stands still: real time then
    if isinstance(session, SimSession):
        finished = await _follow_simulated(session, name, namespace, limit, console, stop, told)
    else:  # a cluster: this process's engine while it holds the Lease, else another's (taken over once it is gone)
        finished = await _watch(session, name, namespace, limit, console, stop, told)
    if stop.requested:
        where = f"the simulator state is saved in {escape(printable(str(session.path), newlines=False))}" if isinstance(session, SimSession) and session.path else \
            f"it stays on {escape(printable(session.title, newlines=False))}"
        if args.cleanup:
            console.print(f"[yellow]{stop.said}; --cleanup deletes the certification now.[/]", soft_wrap=True)
        elif _was_its_engine(session):
            console.print(f"[yellow]{stop.said}; the certification stays on {escape(printable(session.title, newlines=False))}, but {NO_ENGINE_AFTER}.[/]\n"
                          f"  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}", soft_wrap=True)
        else:
            console.print(f"[yellow]{stop.said}; the certification goes on and {where}.[/]\n"
                          f"  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}", soft_wrap=True)
        return stop.exit_code
    report = await certification_report(session, name, namespace, console)
    try:  # the file first: a stdout that cannot be written must not cost it, nor a file that cannot, the report
        write_results(args.results_file, report)
    finally:
        with verdict_output():  # a reader gone (`| head`): the exit code is still the certification's
            print(printable(render_text(report)), end="", flush=True)  # before the lines stderr says after it
    refuse_damaged_rows(session)
    if not finished:
        waited = max((session.clock.now() - started).total_seconds(), time.monotonic() - started_real)
        time_kind = " of simulated time" if isinstance(session.clock, ManualClock) else ""
        why = f"Timed out after {format_duration(limit)}{time_kind}" if waited >= limit else \
            f"The engine went idle after {format_duration(waited)} with the certification unfinished"
        advice = "" if args.cleanup else f"\n  report later:  nvcre certification report {name}{escape(again)}\n  or watch it:   nvcre{escape(again)}"
        console.print(f"[yellow]{why}; {goes_on}.[/]{advice}", soft_wrap=True)
        return EXIT_TIMEOUT
    return RESULT_EXIT[report["result"]]


async def _follow_simulated(session: SimSession, name: str, namespace: str, limit: float, console: Console,
                            stop: StopRequest, told: Told | None = None) -> bool:
    """On the simulator: run this process's engine while it holds the Lease; as a viewer, follow the holder's
    progress through the store, and take the Lease over when the holder releases it or dies."""
    finished = progress_check(session, name, namespace, console, stop, told)
    console.print("\\[watch] Watching certification progress...")
    deadline = session.clock.now() + timedelta(seconds=limit)

    async def done_or_lost() -> bool:
        return session.engine is None or await finished()

    while True:
        if session.engine is not None:
            remaining = max((deadline - session.clock.now()).total_seconds(), 0.0)
            met = await session.engine.run_until_settled(until=done_or_lost, max_seconds=remaining)
            if session.engine is not None:
                return met
            console.print(f"[yellow]\\[watch] {escape(printable(session.viewer_reason or 'lost the engine lease', newlines=False))}[/]", soft_wrap=True)
            continue
        if await finished():
            return True
        if session.clock.now() >= deadline:
            return False
        if await session.take_over():
            console.print("\\[watch] No engine holds the lease any more: this process took it over and runs the engine.", soft_wrap=True)
            continue
        session.follow_store_clock()
        await asyncio.sleep(VIEWER_POLL_SECONDS)


async def _watch(session: Session, name: str, namespace: str, limit: float, console: Console, stop: StopRequest,
                 told: Told | None = None) -> bool:
    """Follow the cache until the certification finishes, `limit` passes or ctrl-c. This process's engine reconciles
    meanwhile, else another engine does; when that one stops renewing the Lease (its process was killed), this process
    takes it over, as on the simulator. A viewer's deadline is real time: its clock moves only with an engine."""
    finished = progress_check(session, name, namespace, console, stop, told)
    console.print("\\[watch] Watching certification progress...")
    deadline = time.monotonic() + limit
    next_try = 0.0

    async def done_or_lost() -> bool:
        return session.engine is None or await finished()

    while True:
        if session.engine is not None:
            met: bool | None
            if isinstance(session.clock, ManualClock):  # --sim-runner: the engine plays simulated time as fast as it can
                met = await session.engine.run_until_settled(until=done_or_lost, max_seconds=limit)
            else:
                met = await _run_engine(session, finished, deadline)
            if session.engine is not None:
                return bool(met)
            console.print(f"[yellow]\\[watch] {escape(printable(session.viewer_reason or 'lost the engine lease', newlines=False))}[/]", soft_wrap=True)
            continue
        if await finished():
            return True
        if time.monotonic() >= deadline:
            return False
        if time.monotonic() >= next_try:
            next_try = time.monotonic() + TAKE_OVER_SECONDS
            if await session.take_over():
                console.print("\\[watch] No engine holds the lease any more: this process took it over and runs the engine.", soft_wrap=True)
                continue
        await asyncio.sleep(WATCH_POLL_SECONDS)


async def _run_engine(session: Session, finished: Callable[[], Awaitable[bool]], deadline: float) -> bool | None:
    """Run this process's engine (a running clock) until the certification finishes (True), the deadline passes
    (False), or the engine stops because the session lost the Lease (None)."""
    assert session.engine is not None
    engine = asyncio.create_task(session.engine.run(), name="engine")
    try:
        while time.monotonic() < deadline:
            if await finished():
                return True
            if engine.done():
                engine.result()  # the engine died: say why rather than wait for nothing
                return None  # it returned: stopped, the Lease lost
            await asyncio.sleep(WATCH_POLL_SECONDS)
        return await finished()
    finally:
        engine.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await engine
