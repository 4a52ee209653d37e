"""How long a running certification has left, where that can be said honestly: the dashboard's Left column and the
wall's title. A running certification showed its runtime only, and an operator could not tell a five-minute burn-in
from a five-hour one.

Estimated from what its Workflows say: the groups left in the current iteration and in the iterations after it, run
at most maxConcurrent at once, each taking as long as its category's finished runs took (their median: `~4m10s`); before
any run of a category finished, or once one runs past what they took, its timeoutPerJob bounds each run left
(`≤51m00s`). Unknown (never guessed) while a category has not been planned yet (it waits for nodes or an earlier
category: how many groups it will run is not known) or while a diagnosis runs or will (onFailure: diagnose once a group failed): its rounds follow its results."""

from __future__ import annotations

import heapq
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nvcre_tui.engine.api.bodies import job_template_spec, orchestration_of, workflow_spec
from nvcre_tui.engine.api.vocabulary import FAILED, SUCCEEDED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.report.readmodel import CategoryView
from nvcre_tui.engine.report.runtime import run_seconds
from nvcre_tui.engine.units import format_duration, parse_duration
from nvcre_tui.engine.views.snapshot import Snapshot

UNKNOWN = "unknown"
DEFAULT_TIMEOUT = "24h"  # a Job's timeout when its template gives none (controllers.job)
ENDED = (SUCCEEDED, FAILED)


@dataclass(frozen=True)
class TimeLeft:
    """What a running certification has left: `seconds` (None: unknown), an estimate from runs that finished or, where
    `bound`, the most its runs' timeouts allow."""

    seconds: float | None
    bound: bool = False

    @property
    def short(self) -> str:
        """As the dashboard's Left column says it: `~4m10s`, `≤51m00s`, `unknown`."""
        if self.seconds is None:
            return UNKNOWN
        return ("≤" if self.bound else "~") + format_duration(self.seconds)

    @property
    def said(self) -> str:
        """As the wall's title says it: `~4m10s left`, `at most 51m00s left`, `time left unknown`."""
        if self.seconds is None:
            return f"time left {UNKNOWN}"
        return f"{'at most ' if self.bound else '~'}{format_duration(self.seconds)} left"


def time_left(snapshot: Snapshot, cert_name: str, now: datetime, stamped_now: datetime | None = None) -> TimeLeft | None:
    """What the certification has left (None when it has finished, or is not in `snapshot`). `stamped_now`: the API
    server's now (session.store_now), which times a run stamped on a clock ahead, as every view's runtime (report.runtime)."""
    view = snapshot.views.get(cert_name)
    if view is None or cond.is_terminal(view.cert):
        return None
    left = [_category_left(category, now, stamped_now) for category in view.categories if category.status.get("status") not in ENDED]
    if not left or any(found is None for found in left):
        return TimeLeft(None)
    known = [found for found in left if found is not None]
    # Its unfinished categories all run now (none waits to be planned): they run side by side, on nodes of their own.
    return TimeLeft(max(found.seconds or 0.0 for found in known), any(found.bound for found in known))


def _category_left(category: CategoryView, now: datetime, stamped_now: datetime | None) -> TimeLeft | None:
    """A running category's time left, or None where it cannot be said (not planned yet, diagnosing, or a Workflow
    another hand wrote unreadable: a timeout, a count that is none)."""
    try:
        return _planned_left(category, now, stamped_now)
    except (TypeError, ValueError):
        return None


def _planned_left(category: CategoryView, now: datetime, stamped_now: datetime | None) -> TimeLeft | None:
    workflow = category.workflow
    groups = category.groups
    if workflow is None or not groups or cond.is_terminal(workflow):
        return None
    spec = workflow_spec(workflow).get("orchestration") or {}
    if spec.get("testScale") == "diagnose" or orchestration_of(workflow).get("diagnose") is not None:
        return None
    if (spec.get("onFailure") or {}).get("diagnose") is not None and _failed_somewhere(workflow, groups):
        return None  # a diagnosis follows its iterations (controllers.workflow._diagnose_failures), its rounds unknown
    timeout = parse_duration(str(job_template_spec(workflow).get("timeout") or DEFAULT_TIMEOUT))
    ran = _finished(category)
    each, bound = (statistics.median(ran), False) if ran else (timeout, True)
    concurrency = int((spec.get("execution") or {}).get("maxConcurrent") or 0) or len(groups)
    elapsed = [_elapsed(category, group, now, stamped_now) for group in groups if group.get("phase") == "Running"]
    # A run past what the others took (a slow node's) ends when it ends: the median estimates nothing then, and what is
    # said is a bound ('at most'), so every run left is counted at its timeout, those still to start too: at the median
    # they made 'at most 2m25s' of two waves of 1h timeouts still to start
    if not bound and any(seconds >= each for seconds in elapsed):
        each, bound = timeout, True
    running = [max(each - seconds, 0.0) for seconds in elapsed]
    pending = sum(1 for group in groups if group.get("phase") == "Pending")
    later = max(int(spec.get("iterations") or 1) - int(orchestration_of(workflow).get("currentIteration") or 1), 0)
    this_iteration = _waves(running, pending, concurrency, each)
    return TimeLeft(this_iteration + later * math.ceil(len(groups) / concurrency) * each, bound)


def _failed_somewhere(workflow: Mapping[str, Any], groups: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a group failed in this iteration or a finished one (its iterationHistory)."""
    finished = (group for record in orchestration_of(dict(workflow)).get("iterationHistory") or [] for group in record.get("groups") or [])
    return any(group.get("phase") == FAILED for group in itertools.chain(groups, finished))


def _waves(running: Sequence[float], pending: int, concurrency: int, each: float) -> float:
    """When the last of an iteration's runs ends: those running end in their time left, each pending one starts in the
    first free place of `concurrency`."""
    places = sorted([*running, *[0.0] * max(concurrency - len(running), 0)])
    heapq.heapify(places)
    for _ in range(pending):
        heapq.heappush(places, heapq.heappop(places) + each)
    return max(places, default=0.0)


# Workflow name -> (its Jobs' bodies, how long its finished runs took): the watch cache replaces a body when it changes
# and shares it otherwise, so identity says nothing changed (a 4,096-node intra-node category has as many Jobs, and the
# dashboard asks every second).
_FINISHED: dict[str, tuple[tuple[Mapping[str, Any], ...], list[float]]] = {}
FINISHED_KEPT = 256


def _finished(category: CategoryView) -> list[float]:
    """How long the category's finished runs took (report.runtime.run_seconds)."""
    name = str((category.workflow or {}).get("metadata", {}).get("name"))
    jobs = tuple(category.jobs)
    found = _FINISHED.get(name)
    if found is None or len(found[0]) != len(jobs) or any(a is not b for a, b in zip(found[0], jobs)):
        if len(_FINISHED) >= FINISHED_KEPT:
            _FINISHED.clear()  # bodies replaced since are never asked again: start over
        ran = [seconds for job in jobs if cond.is_terminal(job) and (seconds := run_seconds(job, None)) is not None]
        found = _FINISHED[name] = (jobs, ran)
    return found[1]


def _elapsed(category: CategoryView, group: Mapping[str, Any], now: datetime, stamped_now: datetime | None) -> float:
    """How long a running group's run has run (0 while its pods wait)."""
    job = category.job_of(group)
    if job is None:
        return 0.0
    seconds = run_seconds(job, now, stamped_now)  # as the drill-down and the logs pane say its runtime
    return seconds or 0.0
