"""`run --wait` on a cluster says why a group's pods are not running once they have waited WAITING_NOTE_SECONDS, once
per run, instead of minutes of silence until the grace ends (an API server with no controller makes no pod)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any

from nvcre_tui.cli.run.waiting import WAITING_NOTE_SECONDS, waiting_lines
from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN, ResourceKind

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
LABELS = {"nvcre.nvidia.com/workflow": "c-nccl", "nvcre.nvidia.com/group": "group-0"}
WAITING = "no pods yet (0/33): waiting for the workload's controller (Kubeflow Trainer and JobSet, or the Job controller) to create them"


class Cache:
    """The few reads `waiting_lines` makes of a session's cache, over fixed objects."""

    def __init__(self, objects: dict[ResourceKind, list[dict[str, Any]]]) -> None:
        self.objects = objects
        self.silent: str | None = None  # what WatchCache.silence says: the store does not answer
        self.last_error = ""

    def silence(self) -> str | None:
        return self.silent

    def list(self, kind: ResourceKind, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.objects.get(kind, [])

    def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return next((o for o in self.objects.get(kind, []) if o["metadata"]["name"] == name), None)


class Session:
    def __init__(self, clock: ManualClock, cache: Cache, engine: object | None = True) -> None:
        self.clock, self.cache, self.engine = clock, cache, engine  # engine: whether this process runs one


def owned(child: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    """`child`, given a uid and its controller ownerReference to `owner`, as the engine creates it."""
    child["metadata"]["uid"] = child["metadata"].get("uid") or f"uid-{child['metadata']['name']}"
    child["metadata"]["ownerReferences"] = [{"kind": owner.get("kind", ""), "name": owner["metadata"]["name"],
                                             "uid": owner["metadata"]["uid"], "controller": True}]
    return child


def ran(workflow: dict[str, Any], jobs: list[dict[str, Any]], runs: list[dict[str, Any]]) -> None:
    """Each Job the Workflow's, recorded as its group's jobRef (group-N from the Job's name), each run its Job's."""
    workflow["status"] = {"orchestration": {"groups": [
        {"name": re.findall(r"group-\d+", job["metadata"]["name"])[0], "jobRef": job["metadata"]["name"]} for job in jobs]}}
    for job in jobs:
        owned(job, workflow)
    by_name = {job["metadata"]["name"]: job for job in jobs}
    for run in runs:
        owned(run, by_name[run["metadata"]["name"].removesuffix("-run")])


def running_certification(name: str = "c") -> tuple[dict[str, Any], dict[str, Any]]:
    """Certification `name`, its nccl-all-reduce category InProgress, and that category's Workflow."""
    cert = {"metadata": {"name": name, "uid": f"uid-{name}"}, "status": {
        "conditions": [{"type": "InProgress", "status": "True", "reason": "CategoriesRunning", "message": "running"}],
        "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "InProgress", "workflowRef": {"name": f"{name}-nccl"},
                              "message": "Discovered 4 nodes, partitioned into 1 group (4 nodes/job)"}]}}
    workflow = owned({"metadata": {"name": f"{name}-nccl", "labels": {"nvcre.nvidia.com/certification": name, "nvcre.nvidia.com/category-domain": "communication",
                                                                     "nvcre.nvidia.com/category-variant": "nccl-all-reduce"}}}, cert)
    return cert, workflow


def waiting_session(clock: ManualClock, run_status: dict[str, Any], job_spec: dict[str, Any]) -> Session:
    """Certification c's nccl-all-reduce category with one run of group-0, pending since START."""
    cert, workflow = running_certification()
    run = {"metadata": {"name": "c-nccl-group-0-iter-1-run", "uid": "u1", "labels": LABELS},
           "status": {"pendingSince": format_time(START), **run_status}}
    job = {"metadata": {"name": "c-nccl-group-0-iter-1"}, "spec": job_spec}
    ran(workflow, [job], [run])
    return Session(clock, Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: [run], JOB: [job]}))


def test_a_run_waiting_for_its_pods_is_told_once_with_why_and_when_it_fails() -> None:
    clock = ManualClock(START)
    session: Any = waiting_session(clock, {"phase": "Scheduling", "message": WAITING}, {"schedulingStallGraceSeconds": 300})
    told: set[str] = set()
    clock.advance(WAITING_NOTE_SECONDS - 1)
    assert waiting_lines(session, "c", "default", told) == []
    clock.advance(1)
    [line] = waiting_lines(session, "c", "default", told)
    assert line == f"communication/nccl-all-reduce group-0: pods not running after 30s: {WAITING}; it fails in 4m30s, after 5m00s of this"
    clock.advance(60)
    assert waiting_lines(session, "c", "default", told) == []  # once
    assert waiting_lines(session, "other", "default", set()) == []  # another certification's runs are not this one's


def test_the_waiting_line_says_the_time_left_not_the_whole_bound() -> None:
    """At 4m30s of waiting the line (run --wait's long-silence line builds it again each time) said "it fails after
    5m00s of this", the whole bound, as if the wait had just begun: it says the 30s left, the bound beside it."""
    clock = ManualClock(START)
    session: Any = waiting_session(clock, {"phase": "Scheduling", "message": WAITING}, {"schedulingStallGraceSeconds": 300})
    clock.advance(4 * 60 + 30)
    [line] = waiting_lines(session, "c", "default", set())
    assert line.endswith(f"pods not running after 4m30s: {WAITING}; it fails in 30s, after 5m00s of this"), line
    clock.advance(40)  # past the bound, the engine not yet back to fail it
    [line] = waiting_lines(session, "c", "default", set())
    assert line.endswith("; it fails now, after 5m00s of this"), line


def test_a_run_whose_workload_cannot_be_created_yet_is_told_with_its_timeout_per_job() -> None:
    """A run Pending on a transient API error (every TrainJob create answered 500: a webhook without its server) said
    nothing until the grace of a placement that never began; it is told as a wait bounded by timeoutPerJob."""
    clock = ManualClock(START)
    said = "its workload could not be created: TrainJob default/x: Internal error occurred: failed calling webhook"
    session: Any = waiting_session(clock, {"phase": "Pending", "message": said}, {"timeout": "1h"})
    clock.advance(WAITING_NOTE_SECONDS)
    [line] = waiting_lines(session, "c", "default", set())
    assert line == f"communication/nccl-all-reduce group-0: pods not running after 30s: {said}; it fails in 59m30s, after 1h00m (timeoutPerJob) of this"


async def test_a_long_silence_on_a_cluster_says_where_each_running_category_stands(monkeypatch: Any) -> None:
    """Minutes without a line (a run waiting out its scheduling grace, a long training) read as a hang: on a cluster
    `run --wait` says where each unfinished category stands after STILL_RUNNING_SECONDS of silence; never on the
    simulator, whose time runs ahead of the wall clock."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    monkeypatch.setattr(progress, "STILL_RUNNING_SECONDS", 0.0)
    cert = {"metadata": {"name": "c"}, "status": {
        "conditions": [{"type": "InProgress", "status": "True", "reason": "CategoriesRunning", "message": "running"}],
        "categoryStatuses": [
            {"domain": "communication", "variant": "nccl-all-reduce", "status": "InProgress", "message": "1 group waiting for pods"},
            {"domain": "training", "variant": "nemotron5-8b", "status": "Succeeded", "message": "done"}]}}
    # A viewer on a manual clock (`run --wait --sim-runner` following a controller's engine) has no engine to move
    # its clock: it said "(0s)" on every line and never this one.
    for clock, engine, expected in ((SystemClock(), True, True), (ManualClock(START), True, False), (ManualClock(START), None, True)):
        session: Any = Session(clock, Cache({CERTIFICATION: [cert]}), engine)  # type: ignore[arg-type]
        console = Console(file=io.StringIO(), width=300)
        finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
        assert not await finished()  # the categories' first states: said
        assert not await finished()  # nothing new since: where they stand
        shown = console.file.getvalue()  # type: ignore[attr-defined]
        line = "still running (followed for 0s): communication/nccl-all-reduce: 1 group waiting for pods"
        assert (line in shown and "nemotron5-8b: done" not in shown) == expected, shown
        # A viewer of a simulated engine counts real time, the report's Runtime simulated time: its lines say which
        assert ("nccl-all-reduce: InProgress (followed 0s)" in shown) == (engine is None and isinstance(clock, ManualClock)), shown


async def test_the_long_silence_line_says_why_groups_wait_for_their_pods_rather_than_an_older_message(monkeypatch: Any) -> None:
    """A category's message ("partitioned into 1 group") is older news while its pods never come: the line repeats
    why they wait."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress, waiting
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    monkeypatch.setattr(progress, "STILL_RUNNING_SECONDS", 0.0)
    cert, workflow = running_certification()
    run = {"metadata": {"name": "c-nccl-group-0-iter-1-run", "uid": "u1", "labels": LABELS},
           "status": {"phase": "Scheduling", "pendingSince": format_time(SystemClock().now()), "message": WAITING}}
    job = {"metadata": {"name": "c-nccl-group-0-iter-1"}, "spec": {}}
    ran(workflow, [job], [run])
    session: Any = Session(SystemClock(), Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: [run], JOB: [job]}))  # type: ignore[arg-type]
    monkeypatch.setattr(waiting, "WAITING_NOTE_SECONDS", 0.0)
    console = Console(file=io.StringIO(), width=400)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished() and not await finished()
    last = console.file.getvalue().splitlines()[-1]  # type: ignore[attr-defined]
    assert last.startswith("[watch] still running") and "group-0: pods not running after " in last and WAITING in last, last
    assert "partitioned" not in last


def test_the_report_of_a_running_certification_says_what_its_groups_wait_for(tmp_path: Any, capsys: Any) -> None:
    """A RUNNING report showed only `InProgress`: on a cluster with no controller that is all one learns from it."""
    import json

    from nvcre_tui.cli import main

    scenario = tmp_path / "fleet.yaml"
    scenario.write_text("name: four\nseed: 3\nnodes: [{count: 4, cliques: 1}]\n")
    state = ["--sim", "--state", str(tmp_path / "sim.db"), "--scenario", str(scenario)]
    assert main(["certification", "run", *state, "--category", "communication/nccl-all-reduce"]) == 0  # no --wait
    capsys.readouterr()
    assert main(["certification", "list", *state, "-o", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert main(["certification", "report", row["name"], *state]) == 3  # still running
    waiting = [line for line in capsys.readouterr().out.splitlines() if "Waiting:" in line]
    assert waiting and "1 group of 1: " in waiting[0] and "it fails after 5m00s of this" in waiting[0], waiting
    assert main(["certification", "report", row["name"], *state, "-o", "json"]) == 3
    [category] = json.loads(capsys.readouterr().out)["categories"]
    assert category["status"] == "InProgress" and category["waitingForPods"].startswith("1 group of 1: ")
    assert main(["certification", "report", row["name"], *state, "-o", "html"]) == 3  # said there too (it was not)
    assert f"<p>Waiting: {category['waitingForPods']}</p>" in capsys.readouterr().out
    assert main(["certification", "report", row["name"], *state, "-o", "junit"]) == 3  # a CI job's JUnit said only InProgress
    [error] = [e for e in ET.fromstring(capsys.readouterr().out).iter("error") if e.get("message", "").startswith("category")]
    assert error.get("message") == "category did not finish: InProgress" and error.text == f"waiting: {category['waitingForPods']}"


async def test_a_category_held_by_another_certification_says_so_once() -> None:
    """`run --wait` printed "Pending", then nothing for the minutes another certification held the nodes."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    held = "waits for certification train-full, which runs on 5 of this category's nodes"
    cert = {"metadata": {"name": "c"}, "status": {
        "conditions": [{"type": "InProgress", "status": "True", "reason": "CategoriesRunning", "message": "running"}],
        "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Pending", "reason": "WaitingForNodes",
                              "message": held}]}}
    session: Any = Session(ManualClock(START), Cache({CERTIFICATION: [cert]}))
    console = Console(file=io.StringIO(), width=300)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished() and not await finished()
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.count(f"communication/nccl-all-reduce: {held} (0s)") == 1, shown


async def test_the_long_silence_line_says_how_long_running_groups_have_run_rather_than_an_older_message(monkeypatch: Any) -> None:
    """A seven-minute all-reduce on a cluster printed `still running ...: Discovered 4 nodes, partitioned into 1 group
    (4 nodes/job)` every two minutes: older news, which does not tell a run going on from one that stopped moving.
    The line says each running group's nodes, how long it has run and its bound."""
    import io
    from datetime import timedelta
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    monkeypatch.setattr(progress, "STILL_RUNNING_SECONDS", 0.0)
    cert, workflow = running_certification()
    clock = ManualClock(START)
    run = {"metadata": {"name": "c-nccl-group-0-iter-1-run", "uid": "u1", "labels": LABELS},
           "status": {"phase": "Running", "pendingSince": format_time(START), "startTime": format_time(START + timedelta(seconds=20)),
                      "nodes": ["a", "b", "c", "d"], "message": "running on 4 node(s)"}}
    job = {"metadata": {"name": "c-nccl-group-0-iter-1"}, "spec": {"timeout": "1h"}}
    ran(workflow, [job], [run])
    session: Any = Session(clock, Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: [run], JOB: [job]}), None)
    clock.advance(5 * 60 + 50)
    monkeypatch.setattr(progress.time, "monotonic", lambda: 1000.0)  # the follower's own seconds: a viewer of a manual clock
    console = Console(file=io.StringIO(), width=400)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished() and not await finished()
    last = console.file.getvalue().splitlines()[-1]  # type: ignore[attr-defined]
    assert last == ("[watch] still running (followed for 0s): communication/nccl-all-reduce group-0: running on 4 node(s) "
                    "for 5m30s (timeoutPerJob 1h)"), last


async def test_a_category_held_by_a_certification_whose_pods_never_come_says_why_that_one_waits(monkeypatch: Any) -> None:
    """On an API server with no controller, `run --wait` of a second certification said "waits for certification first,
    which runs on all 4 of this category's nodes" and then only that, every two minutes, for the five minutes until
    `first` failed unplaced: nothing told it would. The first's stuck run is said once after the category it holds, with
    why and when it fails, and again in the long-silence line."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    monkeypatch.setattr(progress, "STILL_RUNNING_SECONDS", 0.0)
    held = "waits for certification first, which runs on all 4 of this category's nodes"
    cert = {"metadata": {"name": "c"}, "status": {
        "conditions": [{"type": "InProgress", "status": "True", "reason": "CategoriesRunning", "message": "running"}],
        "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Pending", "reason": "WaitingForNodes",
                              "message": held}]}}
    holder, first = running_certification("first")
    run = {"metadata": {"name": "first-nccl-group-0-iter-1-run", "uid": "u1", "labels": {**LABELS, "nvcre.nvidia.com/workflow": "first-nccl"}},
           "status": {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING}}
    job = {"metadata": {"name": "first-nccl-group-0-iter-1"}, "spec": {"schedulingStallGraceSeconds": 300}}
    ran(first, [job], [run])
    clock = ManualClock(START)
    # a viewer (no engine of its own: a controller runs it), counting its own seconds
    session: Any = Session(clock, Cache({CERTIFICATION: [cert, holder], WORKFLOW: [first], WORKLOADRUN: [run], JOB: [job]}), None)
    monkeypatch.setattr(progress.time, "monotonic", lambda: 1000.0)
    console = Console(file=io.StringIO(), width=500)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished()
    clock.advance(WAITING_NOTE_SECONDS)
    assert not await finished() and not await finished()
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    said = (f"communication/nccl-all-reduce: waits for certification first, whose communication/nccl-all-reduce group-0: pods not "
            f"running after 30s: {WAITING}; it fails in 4m30s, after 5m00s of this")
    assert [line for line in lines if "whose" in line and "still running" not in line] == [f"[watch] {said}"], lines
    assert lines[-1] == f"[watch] still running (followed for 0s): {said}", lines


async def test_a_store_that_stops_answering_is_said_once_and_again_when_it_answers() -> None:
    """The API server gone (killed, a network cut) while `run --wait` followed: it said "viewer: lost the engine lease",
    then nothing, the minutes it waited, while the console's header says "no answer from the store since ...". Now it
    says that once, that it follows the last known state, and once again when the store answers."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress

    cert, _ = running_certification()
    cache = Cache({CERTIFICATION: [cert]})
    session: Any = Session(ManualClock(START), cache)
    console = Console(file=io.StringIO(), width=300)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished()
    cache.silent, cache.last_error = "no answer from the store since 19:20:05", "cannot connect to https://10.0.0.1:6443"
    assert not await finished() and not await finished()
    cache.silent = None
    assert not await finished() and not await finished()
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[1:] == ["[watch] no answer from the store since 19:20:05 (cannot connect to https://10.0.0.1:6443): following the "
                         "last known state; retried meanwhile", "[watch] the store answers again"], lines


def test_groups_waiting_for_the_same_reason_are_one_line() -> None:
    """A per-node category on a cluster with no controller printed one identical line per node at 30 s (DCGM on 500
    nodes: 500 lines). Groups of a category waiting for the same reason and bound are one line, naming a few."""
    clock = ManualClock(START)
    cert, workflow = running_certification()
    runs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1-run", "uid": f"u{i}", "labels": {**LABELS, "nvcre.nvidia.com/group": f"group-{i}"}},
             "status": {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING}} for i in range(5)]
    jobs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1"}, "spec": {"schedulingStallGraceSeconds": 300}} for i in range(5)]
    ran(workflow, jobs, runs)
    session: Any = Session(clock, Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: runs, JOB: jobs}))
    clock.advance(WAITING_NOTE_SECONDS)
    told: set[str] = set()
    assert waiting_lines(session, "c", "default", told) == [
        f"communication/nccl-all-reduce 5 groups (group-0, group-1, group-2 and 2 more): pods not running after 30s: {WAITING}; "
        "it fails in 4m30s, after 5m00s of this"]
    assert waiting_lines(session, "c", "default", told) == []  # each told once


def test_groups_are_named_in_natural_order() -> None:
    """The groups a waiting line names come as the map and the lists order nodes: group-2 before group-10 (they came in
    the cache's text order: group-0, group-1, group-10)."""
    clock = ManualClock(START)
    cert, workflow = running_certification()
    order = [0, 1, 10, 11, 2, 3]
    runs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1-run", "uid": f"u{i}", "labels": {**LABELS, "nvcre.nvidia.com/group": f"group-{i}"}},
             "status": {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING}} for i in order]
    jobs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1"}, "spec": {"schedulingStallGraceSeconds": 300}} for i in order]
    ran(workflow, jobs, runs)
    session: Any = Session(clock, Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: runs, JOB: jobs}))
    clock.advance(WAITING_NOTE_SECONDS)
    [line] = waiting_lines(session, "c", "default", set())
    assert line.startswith("communication/nccl-all-reduce 6 groups (group-0, group-1, group-2 and 3 more): "), line


def test_a_run_whose_labels_were_removed_is_still_told_under_its_category_and_group() -> None:
    """The lines found a certification's Workflows by the `nvcre.nvidia.com/certification` label, named categories from
    the Workflow's domain/variant labels and runs' Workflows and groups from theirs: labels removed by hand (metadata
    anyone may edit) hid a waiting run and a running one. They join by owner, as the report does."""
    from datetime import timedelta

    from nvcre_tui.cli.run.waiting import running_lines

    clock = ManualClock(START)
    cert, workflow = running_certification()
    runs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1-run", "uid": f"u{i}"}, "status": status} for i, status in enumerate((
        {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING},
        {"phase": "Running", "startTime": format_time(START), "nodes": ["a", "b"]}))]
    jobs = [{"metadata": {"name": f"c-nccl-group-{i}-iter-1"}, "spec": {"schedulingStallGraceSeconds": 300}} for i in range(2)]
    ran(workflow, jobs, runs)
    workflow["metadata"]["labels"] = {}  # kubectl label ... nvcre.nvidia.com/certification- ...
    leftover = {"metadata": {"name": "c-nccl-group-9-iter-1-run", "uid": "u9", "labels": LABELS},  # labelled, owned by none of c's
                "status": {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING}}
    session: Any = Session(clock, Cache({CERTIFICATION: [cert], WORKFLOW: [workflow], WORKLOADRUN: [*runs, leftover], JOB: jobs}))
    clock.advance(WAITING_NOTE_SECONDS)
    assert waiting_lines(session, "c", "default", set()) == [
        f"communication/nccl-all-reduce group-0: pods not running after 30s: {WAITING}; it fails in 4m30s, after 5m00s of this"]
    clock.advance(timedelta(minutes=1).total_seconds())
    assert running_lines(session, "c", "default") == ["communication/nccl-all-reduce group-1: running on 2 node(s) for 1m30s"]


async def test_a_store_answering_between_dropped_streams_is_one_outage() -> None:
    """Watch streams dropped one after another (a flaky proxy) let the cache read the store between two drops: `run
    --wait` said the outage over at that one look, then said it again at the next drop. Its end is said once the store
    answered at two looks in a row."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from nvcre_tui.cli.run import progress

    cert, _ = running_certification()
    cache = Cache({CERTIFICATION: [cert]})
    session: Any = Session(ManualClock(START), cache)
    console = Console(file=io.StringIO(), width=300)
    finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
    assert not await finished()
    for silent in ("no answer from the store since 19:20:05", None, "no answer from the store since 19:20:06", None, None):
        cache.silent, cache.last_error = silent, "watch stream dropped"
        assert not await finished()
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line for line in lines if "store" in line] == [
        "[watch] no answer from the store since 19:20:05 (watch stream dropped): following the last known state; retried meanwhile",
        "[watch] the store answers again"], lines
