"""What `run --wait` prints as it follows: each category's status changes, its diagnosis, the long-silence line; a
certification deleted meanwhile ends the follow (DeletedWhileFollowed)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli.interrupt import StopRequest
from nvcre_tui.cli.run.waiting import STILL_WAITING_SHOWN, holders_waiting, running_lines, waiting_lines
from nvcre_tui.cli.session import Told, tell_notices
from nvcre_tui.engine.api.bodies import certification_status, orchestration_of
from nvcre_tui.engine.api.vocabulary import FAILED, SUCCEEDED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import is_held
from nvcre_tui.engine.diagnose.summary import rounds_weighed
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube.held import deletion_held
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.nodestates import diagnosis_open
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.store.errors import NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, WORKFLOW
from nvcre_tui.engine.units import count, format_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session


STILL_RUNNING_SECONDS = 120.0  # run --wait on a cluster says where each running category stands after this much silence
STILL_RUNNING_CHARS = 200  # of each category's message in that line


class DeletedWhileFollowed(InputError):
    """The certification `run --wait` follows was deleted (`said`), or is being deleted and a finalizer holds it
    (`held`: what holds it and the way out, as deletion_held says it; `finalizers`: those holding it)."""

    def __init__(self, said: str, held: str | None, finalizers: Sequence[str]) -> None:
        super().__init__(printable(said + (f"; {held}" if held else ""), newlines=False))
        self.said, self.held, self.finalizers = said, held, list(finalizers)


# A running diagnosis's counts, in the order `run --wait` says them.
DIAGNOSIS_COUNTS = (("suspectNodes", "suspect"), ("faultyNodes", "faulty"), ("intermittentNodes", "intermittent"))


def _diagnosing(session: Session, status: Mapping[str, Any], namespace: str) -> str | None:
    """Where a category's open diagnosis stands, as `run --wait` says it when it changes ("diagnose round 3, stage
    confirmation: 4 suspects, 1 faulty, 1 link fault"); None when the category does not diagnose now."""
    name = (status.get("workflowRef") or {}).get("name")
    wf = session.cache.get(WORKFLOW, name, namespace) if name else None
    if wf is None or not diagnosis_open(wf):
        return None
    state: Mapping[str, Any] = orchestration_of(wf).get("diagnose") or {}
    sizes = {word: len(state.get(key) or []) for key, word in DIAGNOSIS_COUNTS}
    said = [f"{n} {word}{'s' if word == 'suspect' and n != 1 else ''}" for word, n in sizes.items() if n]
    said += [count(len(state.get("infrastructureFaults") or []), "link fault")] if state.get("infrastructureFaults") else []
    return f"diagnose round {rounds_weighed(state)}, stage {state.get('stage')}: {', '.join(said) or 'no suspect yet'}"


def _standing(cert: dict[str, Any]) -> str:
    """Where each unfinished category of the certification stands, as its status says (`run --wait`'s periodic line)."""
    unfinished = [status for status in certification_status(cert).get("categoryStatuses") or []
                  if status.get("status") not in (SUCCEEDED, FAILED)]
    return "; ".join(f"{status['domain']}/{status['variant']}: {_cut(str(status.get('message') or status.get('status')))}"
                     for status in unfinished) or "its categories are done; the certification is being finished"


def _cut(text: str, most: int = STILL_RUNNING_CHARS) -> str:
    return text if len(text) <= most else f"{text[:most - 3]}..."


def progress_check(session: Session, name: str, namespace: str, console: Console, stop: StopRequest, told_notices: Told | None = None) -> Any:
    """A check that prints each category's status change and says whether the certification finished; and the
    session's notices as they come (`told_notices`: those told so far), e.g. the engine's runner tick that fails, said
    once: only `nvcre controller`'s log said it."""
    start = session.clock.now()
    seen: dict[str, str] = {}
    diagnosing: dict[str, str] = {}
    held_said: dict[str, str] = {}
    told: set[str] = set()
    from nvcre_tui.engine.session import SimSession

    simulated = isinstance(session, SimSession) or isinstance(session.clock, ManualClock)  # time there runs ahead of ours
    began = time.monotonic()  # a viewer's manual clock stands still (no engine of its own moves it): real time then
    watching = simulated and session.engine is None  # for the whole follow: a take-over would jump the clock ahead
    said_at = time.monotonic()  # real time: minutes without a line on a cluster read as a hang
    silence_said: str | None = None
    answered = 0  # looks in a row at which the store answered (cache.silence() None)

    async def finished() -> bool:
        nonlocal said_at, silence_said, answered
        if stop.requested:
            return True
        # An API server gone away said "viewer: lost the engine lease", then nothing: what follows is the last known
        # state (as the console's header says), and the user could not tell a dead server from a slow run.
        # Said once per outage: dropped watch streams move its "since" (each kind's failure, the client's) while it
        # lasts, which said it again and again; its end once the cache reads the store again.
        # Its end is said once the store has answered at ANSWERED_LOOKS looks in a row: streams dropped one after another
        # (a flaky proxy) let the cache read the store between two drops, which said the outage over, then again.
        silence = session.cache.silence()
        answered = 0 if silence is not None else answered + 1
        if silence is not None and silence_said is None:
            error = f" ({session.cache.last_error})" if session.cache.last_error else ""
            console.print(f"[yellow]\\[watch] {escape(printable(f'{silence}{error}: following the last known state; retried meanwhile', newlines=False))}[/]",
                          soft_wrap=True)
            silence_said, said_at = silence, time.monotonic()
        elif silence_said is not None and answered >= ANSWERED_LOOKS:
            console.print(STORE_ANSWERS, soft_wrap=True)
            silence_said, said_at = None, time.monotonic()
        try:
            cert = session.cache.get(CERTIFICATION, name, namespace) or await session.store.get(CERTIFICATION, name, namespace)
        except NotFound:
            cert = None
        # One being deleted is never reconciled again: held by a finalizer (kubectl's --cascade=foreground, whose
        # collector an API server alone lacks) it stood RUNNING until the timeout, said to go on.
        if cert is None or ((cert.get("metadata") or {}).get("deletionTimestamp") and not cond.is_terminal(cert)):
            held = deletion_held(name, cert) if cert is not None else None
            raise DeletedWhileFollowed(f"certification {name!r} was deleted while it was followed (`nvcre certification delete`, "
                                       "the console's x or kubectl); it has no report", held,
                                       [str(f) for f in (cert or {}).get("metadata", {}).get("finalizers") or []])
        if told_notices is not None and not cond.is_terminal(cert):  # once it ended (its archive), after its report
            told_notices.count = tell_notices(session, told_notices.count)
        elapsed = format_duration(time.monotonic() - began if watching else (session.clock.now() - start).total_seconds())
        # A viewer's time is ours, not the simulated time of the engine it follows (its report's Runtime): said apart
        shown = f"followed {elapsed}" if watching else elapsed
        said = False
        statuses = certification_status(cert).get("categoryStatuses") or []
        for key, status in zip(category_titles(statuses), statuses):  # `#2` for a category run twice: one line each
            if seen.get(key) != status["status"]:
                seen[key], said = status["status"], True
                colour = {SUCCEEDED: "green", FAILED: "red"}.get(status["status"], "cyan")
                console.print(f"\\[watch] {escape(printable(key))}: [{colour}]{escape(printable(str(status['status'])))}[/] ({shown})")
            held = str(status.get("message") or "") if is_held(status) else ""
            if held and held_said.get(key) != held:  # another certification's Workflow on its nodes
                held_said[key], said = held, True
                console.print(f"\\[watch] {escape(printable(key))}: {escape(printable(held, newlines=False))} ({shown})")
            standing = _diagnosing(session, status, namespace)
            if standing is not None and diagnosing.get(key) != standing:  # a round a minute: said as it narrows
                diagnosing[key], said = standing, True
                console.print(f"\\[watch] {escape(printable(key))}: {escape(printable(standing))} ({shown})")
        for line in waiting_lines(session, name, namespace, told) + holders_waiting(session, cert, namespace, told):
            said = True
            console.print(f"[yellow]\\[watch] {escape(printable(line, newlines=False))}[/]", soft_wrap=True)
        if said:
            said_at = time.monotonic()
        elif (not simulated or watching) and not cond.is_terminal(cert) and time.monotonic() - said_at >= STILL_RUNNING_SECONDS:
            said_at = time.monotonic()
            # why groups wait for their pods, when some do (the categories' own messages are older news), else where
            # each category stands
            stuck = (waiting_lines(session, name, namespace, set()) + running_lines(session, name, namespace)
                     + holders_waiting(session, cert, namespace, set()))
            standing = "; ".join(stuck[:STILL_WAITING_SHOWN]) + (f" (+{len(stuck) - STILL_WAITING_SHOWN} more groups)"
                                                              if len(stuck) > STILL_WAITING_SHOWN else "") if stuck else _standing(cert)
            console.print(f"\\[watch] still running (followed for {elapsed}): {escape(printable(standing, newlines=False))}", soft_wrap=True)
        if cond.is_terminal(cert):
            if silence_said is not None and await _answers(session, name, namespace):  # the report reads the store next
                console.print(STORE_ANSWERS, soft_wrap=True)
                silence_said = None
            verdict = "succeeded" if cond.phase(cert) == SUCCEEDED else "failed"
            console.print(f"\\[watch] Certification {verdict}. ({shown})")
            return True
        return False

    return finished


STORE_ANSWERS = "\\[watch] the store answers again"
ANSWERED_LOOKS = 2  # an outage said is said over once the store answered at this many looks in a row (a second apart)


async def _answers(session: Session, name: str, namespace: str) -> bool:
    """Whether the store answers a read of the certification now: an outage said ends before the report (the cache may
    not have listed its quieter kinds again yet, and the report follows at once)."""
    try:
        await session.store.get(CERTIFICATION, name, namespace)
    except NotFound:
        return True
    except StoreError:
        return False
    return True
