"""The dashboard's certification rows (result, runtime, age, the variants running), and how a certification being
deleted that a finalizer holds shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.api.vocabulary import IN_PROGRESS, PHASE_GLYPHS
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.kube.held import deletion_held
from nvcre_tui.engine.report.model import waited_and_ran_so_far
from nvcre_tui.engine.report.shown_order import in_shown_order, result_of
from nvcre_tui.engine.units import format_age, format_duration
from nvcre_tui.engine.views.eta import time_left
from nvcre_tui.engine.views.snapshot import Obj, Snapshot
from nvcre_tui.engine.views.waiting import pods_waiting


@dataclass(frozen=True)
class CertRow:
    """One dashboard row."""

    name: str
    result: str
    passed: str
    failed_nodes: int
    runtime: str
    age: str
    running: str  # the variants of the categories running now ("nccl-all-reduce"; "· nccl-all-reduce": none of its pods runs)
    ran: str = ""  # `runtime` without its wait ("2m16s"), and the wait alone ("27m44s"; "" when none): narrow tables say them apart
    waited: str = ""
    left: str = "-"  # what a running one has left (views.eta: "~4m10s", "≤51m00s", "unknown"); "-" once finished


def _age(created: str | None, now: datetime) -> str:
    return format_age(max(0.0, (now - parse_time(created)).total_seconds())) if created else "-"


def _running_variants(snapshot: Snapshot, cert: Obj) -> list[str]:
    """The variants of the certification's categories in progress, the pending glyph before one whose Jobs in progress
    all wait for their pods (nothing of it runs: `pods_waiting`; the dashboard says why under the table)."""
    statuses = certification_status(cert).get("categoryStatuses") or []
    running = [index for index, entry in enumerate(statuses) if entry.get("status") == IN_PROGRESS]
    if not running:
        return []
    view = snapshot.views.get(str(cert["metadata"]["name"]))
    categories = view.categories if view is not None and len(view.categories) == len(statuses) else []
    shown = []
    for index in running:
        waiting = pods_waiting(snapshot, categories[index]) if categories else None
        shown.append((f"{PHASE_GLYPHS['Pending']} " if waiting is not None and waiting.nothing_runs else "") + str(statuses[index]["variant"]))
    return shown


def certification_row(snapshot: Snapshot, cert: Obj, now: datetime, *, stamped_now: datetime | None = None) -> CertRow:
    """One certification's dashboard row (certification_rows); the drill-down's summary of it says the same."""
    # Never a negative duration: a viewer's clock (the wall clock) may be behind the times an engine playing
    # simulated time wrote (startTime, creationTimestamp), so a time "since" may come out below zero: 0s then.
    status = certification_status(cert)
    summary = status.get("summary") or {}
    start = status.get("startTime")
    # While one of its categories ran; the time it waited for nodes (another certification held them) said apart, as
    # the report and `list` say it: the wait read as runtime here.
    timing = waited_and_ran_so_far(status, cert["metadata"].get("creationTimestamp"), snapshot.workflows_of(str(cert["metadata"]["name"])),
                                   now, stamped_now or now) if start else None
    ran, waited = ("-", "") if timing is None else (format_duration(timing[1]), format_duration(timing[0]) if timing[0] >= 1 else "")
    runtime = ran + (f" (+{waited} waited)" if waited else "")
    # The variant only (a category's last path part): whole in the dashboard's last column on 80 columns.
    running = _running_variants(snapshot, cert)
    return CertRow(cert["metadata"]["name"], result_of(cert),
                   summary.get("passedCategories") or f"0/{len(cert['spec'].get('categories') or [])}", int(summary.get("failedNodes") or 0),
                   runtime, _age(cert["metadata"].get("creationTimestamp"), stamped_now or now), ", ".join(running), ran, waited,
                   left.short if (left := time_left(snapshot, str(cert["metadata"]["name"]), now, stamped_now)) is not None else "-")


def certification_rows(snapshot: Snapshot, now: datetime, *, stamped_now: datetime | None = None) -> list[CertRow]:
    """Dashboard rows, in the order the wall and `list` show them too (report.shown_order). Ages count to
    `stamped_now` (session.store_now: an API server's clock, which stamped creationTimestamp, not a --sim-runner
    fleet's simulated one; default `now`)."""
    return [certification_row(snapshot, cert, now, stamped_now=stamped_now) for cert in in_shown_order(snapshot.certifications)]


DELETING = "DELETING"  # in place of its result, for a certification being deleted that a finalizer holds (deletion_said)


def deleting_result(snapshot: Snapshot, cert_name: str) -> str | None:
    """How the console shows the result of a certification being deleted that a finalizer holds (deletion_said): DELETING,
    its finished result kept beside it ("DELETING (was FAILED)": the verdict stood hidden while it was held, though the
    run was over); plain DELETING for one that had not finished (RUNNING for good, nothing advances it) or had no status
    yet. None when it is not being deleted."""
    cert = snapshot.certification(cert_name)
    if cert is None or deletion_held(cert_name, cert) is None:
        return None
    result = (certification_status(cert).get("summary") or {}).get("result")
    return f"{DELETING} (was {result})" if cond.is_terminal(cert) and result else DELETING


def deletion_said(snapshot: Snapshot, cert_name: str) -> str | None:
    """What holds the deletion of a certification being deleted, as `report` and `list` say it (its status stays as
    it was: RUNNING for good where no garbage collector removes kubectl --cascade=foreground's finalizer); None when
    it is not being deleted."""
    cert = snapshot.certification(cert_name)
    return deletion_held(cert_name, cert) if cert is not None else None
