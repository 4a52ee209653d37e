"""`nvcre certification logs`: a run's log from the shell, on the simulator (the run's whole output, not only the tail
its Job kept) and on a cluster (the result pod's log through the session, as the console's pane reads it; a user whose
RBAC does not reach pods/log is told in one line what is missing)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.cli.logs import follow
from nvcre_tui.engine.api.vocabulary import SIMULATED
from nvcre_tui.engine.clock import SystemClock, format_time
from nvcre_tui.engine.controllers.conditions import BATCH_FALLBACK, HOW_RUN, with_condition
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.outputs import kubelet_prefix
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, POD, WORKFLOW, WORKLOADRUN, ResourceKind
from tests.kube.bare import SERVERS, Bare, bare_server
from tests.kube.cluster import first_node, installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = ROOT / "examples" / "burn-in.yaml"
SLOW = "burn-in-communication-nccl-all-reduce-group-6-iter-1"  # gpu-node-07's slow GPU fails it


# What a refused read of a run's log says grants it (grants.READS), in the CLI and the console's panes alike
POD_READ = ("reading a run's log (list and watch on pods, get on pods/log) in namespace default takes the built-in view role "
            "there, or edit or admin, which grant it too (nvcre-view alone does not): a RoleBinding to one of them")


@pytest.fixture(scope="module")
def burned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulator store where burn-in ran to its end (gpu-node-07 and gpu-node-12 failed)."""
    folder = tmp_path_factory.mktemp("logs")
    state = folder / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state),
                 "--history", str(folder / "h.db")]) == 1
    return state


def _logs(state: Path, *extra: str) -> list[str]:
    return ["certification", "logs", "burn-in", "--state", str(state), "--history", str(state.with_name("h.db")), *extra]


def test_without_a_job_it_lists_the_jobs_failed_first_and_says_how_to_pick(burned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(_logs(burned)) == 2  # a list to pick from, no log: incomplete input (it exited 0)
    out, err = capsys.readouterr()
    rows = out.splitlines()
    assert rows[0].split() == ["JOB", "CATEGORY", "RESULT", "NODES"]
    # 32 groups in each of two categories ran: the 3 failed, then 10 others, so the failed ones stay on screen
    assert len(rows) == 1 + 3 + 10
    assert [row.split()[0] for row in rows[1:4]] == [SLOW, "burn-in-communication-nccl-loopback-group-11-iter-1",
                                                     "burn-in-communication-nccl-loopback-group-6-iter-1"]
    assert all("Failed (ThresholdViolated)" in row for row in rows[1:4]) and "Failed" not in "".join(rows[4:])
    assert err == ("... and 51 more (Succeeded) not listed: --category D/V or --node NODE narrows the list\n"
                   "Pick one: nvcre certification logs burn-in --job JOB (or --category D/V --node NODE)\n")


def test_a_node_alone_narrows_the_list_and_with_its_category_prints_the_whole_log(burned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(_logs(burned, "--node", "gpu-node-07")) == 2
    assert [row.split()[0] for row in capsys.readouterr().out.splitlines()[1:]] == [SLOW, "burn-in-communication-nccl-loopback-group-6-iter-1"]
    assert main(_logs(burned, "--node", "gpu-node-07", "--category", "communication/nccl-all-reduce")) == 0
    whole = capsys.readouterr().out
    assert main(_logs(burned, "--job", SLOW)) == 0
    assert capsys.readouterr().out == whole
    lines = whole.splitlines()
    # the run's whole output, the nccl-tests header included: the Job kept only its last lines
    assert "# nThread 1 nGpus" in lines[0] and "Rank  0 Pid" in whole and "on gpu-node-07" in whole
    assert "# Avg bus bandwidth    : 103.76" in whole
    tail = json.loads(sqlite3.connect(burned).execute("select body from objects where name = ?", (SLOW,)).fetchone()[0])
    assert len(lines) > len(tail["status"]["failureLog"]["tail"].splitlines()) + 20


def test_the_way_to_pick_names_only_what_narrows_further(burned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An on-call walkthrough: `logs overnight --category ... --node gpu-node-03` listed the three diagnose rounds that
    tested the node and said "Pick one: ... --job JOB (or --category D/V --node NODE)", the two flags just given. Each
    way named narrows further: with both given only --job does."""
    capsys.readouterr()
    assert main(_logs(burned, "--node", "gpu-node-07")) == 2
    assert capsys.readouterr().err == "Pick one: nvcre certification logs burn-in --job JOB (or add --category D/V)\n"
    scenario = tmp_path / "one.yaml"
    scenario.write_text(json.dumps({"name": "one", "seed": 4, "nodes": [{"count": 1}]}))
    state = ["--state", str(tmp_path / "s.db"), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", "--scenario", str(scenario), *state, "--category", "communication/nccl-loopback",
                 "--repeat-count", "2", "--name", "twice", "--wait"]) == 0
    capsys.readouterr()
    assert main(["certification", "logs", "twice", *state, "--category", "communication/nccl-loopback", "--node", "gpu-node-01"]) == 2
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 + 2, out  # its two iterations
    assert err == "Pick one: nvcre certification logs twice --job JOB\n"


def test_the_tail_a_job_kept_starts_at_a_line(burned: Path) -> None:
    """The tail a Job keeps (its failureLog, read once the pods are gone) was the log's last characters: its first line
    a fragment (`33       0  3625.08  148.10  277.69       0`, a table row's end) shown as a line of its own under
    "the last 10 lines the engine kept". It starts at a line: each line is one the run printed, kubelet stamp first."""
    db = sqlite3.connect(burned)
    bodies = [json.loads(row[0]) for row in db.execute("select body from objects where name like 'burn-in-%-iter-1'")]
    tails = [body["status"]["failureLog"]["tail"] for body in bodies if (body.get("status") or {}).get("failureLog")]
    assert len(tails) == 3, tails  # gpu-node-07 twice, gpu-node-12
    for tail in tails:
        assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ", line) for line in tail.splitlines()), tail


def test_follow_of_a_finished_run_prints_it_once_and_ends(burned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(_logs(burned, "--job", SLOW)) == 0
    whole = capsys.readouterr().out
    assert main(_logs(burned, "--job", SLOW, "--follow")) == 0
    assert capsys.readouterr().out == whole


@pytest.mark.parametrize(("extra", "said"), [
    (["--job", "nope"], "--job: certification burn-in has no job 'nope' (`nvcre certification logs burn-in` lists them)"),
    (["--category", "communication"], "--category: 'communication' is no domain/variant (e.g. communication/nccl-all-reduce)"),
    (["--category", "dcgm/diag"], "--category: certification burn-in ran no job of dcgm/diag (its categories with jobs: "
                                  "communication/nccl-all-reduce, communication/nccl-loopback)"),
    (["--node", "gpu-node-99"], "--node: no job of certification burn-in ran on gpu-node-99"),
    (["--job", SLOW, "--node", "gpu-node-07"], "--job names one job; --category and --node pick among them: give either"),
])
def test_what_names_no_job_is_one_line(burned: Path, extra: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(_logs(burned, *extra)) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", said + "\n")


def test_an_unknown_certification_is_one_line(burned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["certification", "logs", "nope", "--state", str(burned), "--history", str(burned.with_name("h.db"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certification 'nope' not found in namespace default of the simulator (") and len(err.splitlines()) == 1


def test_follow_prints_only_what_is_new_until_the_log_is_complete(capsys: pytest.CaptureFixture[str]) -> None:
    answers = [(["a", "b"], False), (["a", "b"], False), (["a", "b", "c"], False), (["a", "b", "c", "d"], True)]
    slept: list[float] = []

    async def read() -> tuple[list[str], bool]:
        return answers.pop(0)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    asyncio.run(follow(read, sleep))
    assert capsys.readouterr().out == "a\nb\nc\nd\n"
    assert answers == [] and len(slept) == 3


# ----------------------------------------------------------------------------------------------------------- a cluster


def _objects(state: Path, job: str) -> dict[str, dict[str, Any]]:
    """The certification, the Workflow, the Job and the run of `job` as the simulator's store holds them."""
    found = {}
    with sqlite3.connect(state) as db:
        for name in ("burn-in", "burn-in-communication-nccl-all-reduce", job, f"{job}-run"):
            for (body,) in db.execute("select body from objects where name = ? and kind like 'nvcre%'", (name,)):
                obj = json.loads(body)
                found[obj["kind"]] = obj
    return found


async def _as_on_a_cluster(kubeconfig: Path, state: Path, server: Any) -> None:
    """The objects a finished run leaves, on the emulator (status as the engine wrote it), and its result pod's log. The
    runs are pods' here, not the simulated fleet's: the Simulated condition is left out (its run's log asks for no pod)."""
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    engine = await store_on(kubeconfig, SystemClock(), "nvcre-engine")  # status is the engine's to write (api/provenance.py)
    kinds: dict[str, ResourceKind] = {"Certification": CERTIFICATION, "Workflow": WORKFLOW, "Job": JOB, "WorkloadRun": WORKLOADRUN}
    uids: dict[str, str] = {}  # the run's uid -> the emulator's
    try:
        for kind, obj in _objects(state, SLOW).items():
            status = obj.pop("status", None)
            if status and status.get("conditions"):
                status["conditions"] = [c for c in status["conditions"] if c.get("type") != SIMULATED]
            if status and kind == "WorkloadRun":  # made as the batch fallback, as the runner records it before its Job
                status["conditions"] = with_condition(status.get("conditions") or [], BATCH_FALLBACK, True,
                                                      HOW_RUN[BATCH_FALLBACK], "batch fallback", format_time(SIM_START))
            meta = obj["metadata"]
            obj["metadata"] = {"name": meta["name"], "namespace": "default", "labels": meta.get("labels") or {},
                               "annotations": meta.get("annotations") or {}}
            owners = [{**ref, "uid": uids[ref["uid"]]} for ref in meta.get("ownerReferences") or [] if ref["uid"] in uids]
            if owners and kind != "WorkloadRun":  # owned as the engine made them: the readers join them by owner
                obj["metadata"]["ownerReferences"] = owners
            # the engine's children made as it makes them: a Workflow whose spec another hand wrote is refused
            made = await (admin if kind == "Certification" else engine).create(kinds[kind], obj)
            uids[meta["uid"]] = made["metadata"]["uid"]
            if status:
                await engine.update_status(kinds[kind], {**made, "status": status})
        pod = f"{SLOW}-run-workload-0"
        await admin.create(POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": pod, "namespace": "default",
            "labels": {"nvcre.nvidia.com/job": f"{SLOW}-run", "nvcre.nvidia.com/role": "node", "batch.kubernetes.io/job-completion-index": "0"}},
            "spec": {"nodeName": "gpu-node-07", "containers": [{"name": "node", "image": "nccl"}]}})
        server.set_pod_log("default", pod, f"{kubelet_prefix(SIM_START)}# nThread 1 nGpus 8\n{kubelet_prefix(SIM_START)}# Avg bus bandwidth    : 103.76 \n")
    finally:
        await admin.close()
        await engine.close()


def test_on_a_cluster_it_reads_the_result_pods_log_and_says_what_rbac_is_missing(burned: Path, tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_as_on_a_cluster(kubeconfig, burned, server))
        history = str(tmp_path / "h.db")
        capsys.readouterr()
        assert main(["certification", "logs", "burn-in", "--kubeconfig", str(kubeconfig), "--history", history]) == 2  # the list
        assert capsys.readouterr().out.splitlines()[1].split()[:3] == [SLOW, "communication/nccl-all-reduce", "Failed"]
        assert main(["certification", "logs", "burn-in", "--job", SLOW, "--kubeconfig", str(kubeconfig), "--history", history]) == 0
        out, err = capsys.readouterr()
        assert out.splitlines() == [f"==> pod {SLOW}-run-workload-0 · container node · node gpu-node-07",
                                    f"{kubelet_prefix(SIM_START)}# nThread 1 nGpus 8", f"{kubelet_prefix(SIM_START)}# Avg bus bandwidth    : 103.76 "]
        # nvcre-view and nvcre-edit bound directly (no aggregation into view): no pods, no pods/log
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice"))
        assert main(["certification", "logs", "burn-in", "--job", SLOW, "--kubeconfig", str(alice), "--history", history]) == 2
        out, err = capsys.readouterr()
        [line] = [line for line in err.splitlines() if line.startswith("logs of job")]
        assert line.endswith(f"; {POD_READ}"), line
        assert out == "" and "Traceback" not in err


async def _run_phase(kubeconfig: Path, phase: str) -> None:
    admin = await store_on(kubeconfig, SystemClock(), "nvcre-engine")  # as the runner writes it (api/provenance.py)
    try:
        run = await admin.get(WORKLOADRUN, f"{SLOW}-run", "default")
        run["status"]["phase"] = phase
        await admin.update_status(WORKLOADRUN, run)
    finally:
        await admin.close()


async def _lease_left(kubeconfig: Path, *, skew: timedelta, holder: str, duration: int) -> None:
    """The engine Lease as a killed controller left it, written by a clock `skew` off this side's: an hour behind, its
    renewal is long past its duration; an hour ahead, renewTime plus its duration still says live for an hour."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
    from nvcre_tui.engine.lease import EngineLease

    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        clock = ManualClock(datetime.now(UTC) + skew)
        assert await EngineLease(admin, clock, INSTALL_NAMESPACE, holder, duration=duration).try_acquire()
    finally:
        await admin.close()


NOTE = (f"nvcre: the run of job {SLOW} has not finished, but no nvcre engine holds the lease nvcre-system/nvcre-engine: "
        "nothing advances it until one runs (`nvcre controller`, or the console `nvcre`); following its log meanwhile (ctrl-c stops)")


def _main_in_thread(argv: list[str]) -> tuple[threading.Thread, list[int]]:
    """`main(argv)` started in a thread of its own (the CLI runs its own event loop; a follow runs until its run ends):
    the thread and the list its exit code is put in."""
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    thread.start()
    return thread, codes


def _follow_on_a_stale_lease(burned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *, skew: timedelta, duration: int,
                             waits: int, after: float) -> str:
    """`logs --follow` of the running run on a cluster whose engine Lease was left as `_lease_left` leaves it: polled
    `waits` times until the note is said, `after` seconds more, then the run finishes. What stderr said; exit 0 checked."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_as_on_a_cluster(kubeconfig, burned, server))
        asyncio.run(_run_phase(kubeconfig, "Running"))
        asyncio.run(_lease_left(kubeconfig, skew=skew, holder="controller@gone/1", duration=duration))
        capsys.readouterr()
        following, codes = _main_in_thread(["certification", "logs", "burn-in", "--job", SLOW, "--follow",
                                            "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")])
        err = ""
        for _ in range(waits):
            err += capsys.readouterr().err
            if "no nvcre engine" in err:
                break
            time.sleep(0.05)
        time.sleep(after)
        assert following.is_alive()  # goes on following
        asyncio.run(_run_phase(kubeconfig, "Succeeded"))
        following.join(20)
        assert codes == [0]
        return err + capsys.readouterr().err


def test_follow_of_a_run_no_engine_advances_says_so_once_and_goes_on(burned: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`logs --follow` of an unfinished run on a cluster whose engine was killed (its Lease expired) waited until ctrl-c
    without a word, where `report` and the console's header say that no engine holds the lease. It says so once, in the
    same words, and follows on: the run finishing still ends it."""
    err = _follow_on_a_stale_lease(burned, tmp_path, capsys, skew=-timedelta(hours=1), duration=15, waits=200,
                                   after=2.5)  # a few more reads: said once, not per read
    assert [line for line in err.splitlines() if "engine" in line] == [NOTE], err
    assert "Traceback" not in err


def test_follow_goes_on_through_an_api_server_that_stops_answering_and_says_so_once(burned: Path, tmp_path: Path,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`logs --follow` of a running run whose reads the API server answered 503 past the client's retries (a restart,
    an etcd election) ended at once with exit 2 and `nvcre: ServerError: ...`. It now says once that the store gives no
    answer and follows on from the log as last read, says when the store answers again, and ends when the run does."""
    from tests.kubeapi import Fault

    answers = "nvcre: the store answers again"

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_as_on_a_cluster(kubeconfig, burned, server))
        asyncio.run(_run_phase(kubeconfig, "Running"))
        capsys.readouterr()
        following, codes = _main_in_thread(["certification", "logs", "burn-in", "--job", SLOW, "--follow",
                                            "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")])
        out = err = ""
        started = time.monotonic()
        while "Avg bus bandwidth" not in out and following.is_alive():
            said = capsys.readouterr()
            out, err = out + said.out, err + said.err
            time.sleep(0.02)
            assert time.monotonic() - started < 30, f"no log line followed in 30 s: {err!r}"  # a failure, never a hang
        # Retry-After 0: the client's six tries of one read spent at once, then the store answers again
        outage = server.faults.add(Fault(method="GET", path=r"/workloadruns/", status=503, retry_after=0, times=6))
        deadline = time.monotonic() + 10
        while answers not in err and following.is_alive() and time.monotonic() < deadline:
            said = capsys.readouterr()
            out, err = out + said.out, err + said.err
            time.sleep(0.05)
        assert following.is_alive() and outage.hits == 6, (codes, err)
        asyncio.run(_run_phase(kubeconfig, "Succeeded"))
        following.join(20)
        said = capsys.readouterr()
        out, err = out + said.out, err + said.err
    assert codes == [0], err
    store_lines = [line for line in err.splitlines() if "the store" in line]
    assert len(store_lines) == 2 and store_lines[1] == answers, err
    assert store_lines[0].startswith("nvcre: no answer from the store since ") and store_lines[0].endswith(
        "the server is currently unable to handle the request (gave up after 6 tries in 0s)): following the log as last read; "
        "retried meanwhile"), store_lines[0]
    assert out.count("Avg bus bandwidth") == 1 and "Traceback" not in err  # nothing printed twice


def test_follow_sees_a_holder_whose_clock_runs_ahead_stop_renewing(burned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The note read a fresh Lease at each check and judged it by renewTime plus duration alone: a holder whose clock runs
    ahead and that stopped renewing stayed live for the whole skew, and --follow said nothing. One Lease is kept across
    the checks, which judges as the engine's election does: unchanged for its duration on this side, it is stale."""
    monkeypatch.setattr("nvcre_tui.cli.logs.LEASE_CHECK_SECONDS", 0.3)  # a check every few reads, not every 15 s
    # the Lease's 1 s duration, observed unchanged, and a check after it
    err = _follow_on_a_stale_lease(burned, tmp_path, capsys, skew=timedelta(hours=1), duration=1, waits=100, after=0)
    assert [line for line in err.splitlines() if "engine" in line] == [NOTE], err


def test_follow_on_the_simulator_says_when_no_process_runs_its_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` without --wait, then `logs --follow`: no process ran the simulator's engine, so the run never moved, and
    --follow waited for ever saying only when it would fail. It says once what runs one, and follows on: a `run --wait`
    started beside it finishes the run, which ends the follow."""
    monkeypatch.setattr("nvcre_tui.cli.logs.LEASE_CHECK_SECONDS", 0.3)
    state, history = tmp_path / "s.db", tmp_path / "h.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--state", str(state), "--history", str(history)]) == 0
    capsys.readouterr()
    following, codes = _main_in_thread(_logs(state, "--job", SLOW, "--follow"))
    err = ""
    for _ in range(200):
        err += capsys.readouterr().err
        if "no nvcre process" in err:
            break
        time.sleep(0.05)
    note = (f"nvcre: the run of job {SLOW} has not finished, but no nvcre process runs the engine on the simulator's store "
            f"{state}: nothing advances it until one runs (the console `nvcre`, or `nvcre certification run --wait` of it); "
            "following its log meanwhile (ctrl-c stops)")
    assert note in err.splitlines(), err
    assert following.is_alive()  # goes on following
    engine = subprocess.run([sys.executable, "-m", "nvcre_tui", "certification", "run", "--sim", "--cert-file", str(BURN_IN),
                             "--wait", "--state", str(state), "--history", str(history)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert engine.returncode == 1, engine.stderr  # FAILED, as burn-in is
    following.join(30)
    assert not following.is_alive() and codes == [0]
    out, err = capsys.readouterr()
    assert "Avg bus bandwidth" in out and err.count("no nvcre process") == 0, err  # said once, before


@pytest.fixture(params=SERVERS)
def bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


def test_on_an_api_server_alone_a_run_whose_pods_never_start_says_why_it_has_no_log(bare: Bare,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No Job controller, scheduler or kubelet: no pod, so no line. `logs --node` printed nothing at all and exited 0;
    now stderr says why, as the console's log pane does."""
    kubeconfig = bare.kubeconfig
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "idle", "--wait", "--timeout", "3s"]) == 3
    capsys.readouterr()
    node = asyncio.run(first_node(kubeconfig))
    assert main(["certification", "logs", "idle", "--node", node, "--kubeconfig", str(kubeconfig)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("No output yet: the run is "), err
    assert "; its pods have not started. Why: no pods yet: no Job controller has synced its batch Job yet" in err, err


def test_follow_of_a_finished_job_without_a_run_ends(burned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Job that ended with no WorkloadRun (its namespace was being deleted when it would have made one, or its run is
    gone) and no kept tail: --follow waited for a run that cannot come, until ctrl-c, without a line."""
    import shutil

    from nvcre_tui.engine.api.bodies import run_name
    from nvcre_tui.engine.sim.scenario import default_scenario
    from nvcre_tui.engine.session import SimSession

    state = tmp_path / "s.db"
    shutil.copy(burned, state)

    async def without_a_run() -> str:
        session = await SimSession.open(default_scenario(), state, history=None, want_engine=False)
        try:
            jobs = (await session.store.list(JOB, "default")).items
            passed = next(job for job in jobs if job["metadata"]["name"] != SLOW and not (job.get("status") or {}).get("failureLog"))
            await session.store.delete(WORKLOADRUN, run_name(passed["metadata"]["name"]), "default")
            return str(passed["metadata"]["name"])
        finally:
            await session.close()

    job = asyncio.run(without_a_run())
    capsys.readouterr()
    codes: list[int] = []
    follow = threading.Thread(target=lambda: codes.append(main(_logs(state, "--job", job, "--follow"))), daemon=True)
    follow.start()
    follow.join(timeout=20)
    assert not follow.is_alive(), "--follow of a finished Job without a run never ended"
    assert codes == [0]
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("No output: the job succeeded") and "with no WorkloadRun" in err, err


def _one_node_fleet(tmp_path: Path, *faults: dict[str, Any]) -> Path:
    """A scenario file of one node (and `faults`), for --sim-runner --scenario."""
    scenario = tmp_path / "fleet.yaml"
    fleet: dict[str, Any] = {"name": "one", "seed": 4, "nodes": [{"count": 1, "cliques": 1}]}
    scenario.write_text(json.dumps({**fleet, "faults": list(faults)} if faults else fleet))
    return scenario


def _play(kubeconfig: Path, scenario: Path, history: list[str]) -> int:
    """`run --wait` of certification played (nccl-loopback) by the simulated fleet of `scenario`: its exit code."""
    return main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(scenario),
                 "--category", "communication/nccl-loopback", "--name", "played", "--wait", *history])


def _played_log(kubeconfig: Path, history: list[str], *extra: str) -> list[str]:
    """`logs` of played's run on its one node."""
    return ["certification", "logs", "played", "--node", "gpu-node-01", "--kubeconfig", str(kubeconfig), *history, *extra]


def test_a_simulated_runs_log_read_without_the_fleet_says_which_flag_makes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A walkthrough ran a certification with --sim-runner, then `logs` without it: "No output: the run succeeded, and
    neither its pods nor its Job hold any line of its log", as if the log were lost. No pod ever holds a simulated run's
    output: only the simulated fleet makes it, as `report -o html` says. The line says so, and how to read it."""
    scenario = _one_node_fleet(tmp_path)
    history = ["--history", str(tmp_path / "h.db")]
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        assert _play(kubeconfig, scenario, history) == 0
        capsys.readouterr()
        assert main(_played_log(kubeconfig, history)) == 0
        out, err = capsys.readouterr()
        assert out == ""
        assert err == ("No output here: the run succeeded: a simulated run, whose output only --sim-runner makes; give "
                       "--sim-runner with the fleet's --scenario to read it.\n"), err
        # with the fleet, the whole output
        assert main(_played_log(kubeconfig, history, "--sim-runner", "--scenario", str(scenario))) == 0
        assert "# Avg bus bandwidth" in capsys.readouterr().out
        # The console's log pane of a user who may read certifications and not pods (nvcre-view alone) says the same, and
        # asks for no pod: it listed the pods, was refused, and named the role to bind for a log no pod ever held.
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice", roles=("nvcre-view",)))
        server.clear_requests()
        placeholder, said = asyncio.run(_console_log_pane(alice, tmp_path))
        assert placeholder.startswith("No output here: the run succeeded: a simulated run, whose output only --sim-runner makes"), placeholder
        assert not [n for n in said if "forbidden" in n], said
        assert not [(r.verb, r.status) for r in server.requests if r.resource == "pods"]


async def _console_log_pane(kubeconfig: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """The console on `kubeconfig` (no --sim-runner), its log pane on the one Job: what it says, and the notifications."""
    from nvcre_tui.app import NvcreApp
    from nvcre_tui.screens.logs import LogsScreen
    from nvcre_tui.widgets.log_view import LogLines
    from tests.kube.test_console_on_cluster import args_for, opened, opener

    app = NvcreApp(opener=opener(args_for(kubeconfig, history=str(tmp_path / "alice.db")), read_only=False), live=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await opened(app, pilot)
        assert app.snapshot is not None
        [job] = app.snapshot.jobs
        await app.push_screen(LogsScreen(job["metadata"]["name"]))
        for _ in range(20):  # read in a worker
            await pilot.pause(0.1)
        return app.screen.query_one(LogLines).placeholder, [str(n.message) for n in app._notifications]


def test_a_failed_simulated_runs_kept_tail_read_without_the_fleet_says_it_is_simulated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed run the simulated fleet played, read without --sim-runner: its kept tail came headed "the run's pods are
    gone", which a simulated run never had; and the log was asked of its pods, which a user who may not read pods
    (nvcre-view alone) was refused. It is headed as the console's log pane heads it, and no pod is asked for."""
    scenario = _one_node_fleet(tmp_path, {"type": "xid", "node": "gpu-node-01"})
    history = ["--history", str(tmp_path / "h.db")]
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        assert _play(kubeconfig, scenario, history) == 1
        capsys.readouterr()
        assert main(_played_log(kubeconfig, history)) == 0
        out = capsys.readouterr().out
        head, *tail = out.splitlines()
        assert head.startswith("==> a simulated run, whose output only --sim-runner makes: the last "), head
        assert tail and "pods are gone" not in out, out
        # nvcre-view alone: the same, and no pod asked for (refused, with a role to bind for a log no grant gives)
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice", roles=("nvcre-view",)))
        server.clear_requests()
        assert main(_played_log(alice, history)) == 0
        assert capsys.readouterr() == (out, "")
        assert not [(r.verb, r.status) for r in server.requests if r.resource == "pods"]


# ------------------------------------------------------------------------------------------- --follow before any job

ALL_REDUCE = "communication/nccl-all-reduce"  # two's second category: no Workflow, no Job until its first has ended


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulator store where certification two (nccl-loopback, then nccl-all-reduce, on one node) was created and no
    engine ran it on: its first category has its Job, its second none yet."""
    folder = tmp_path_factory.mktemp("two")
    scenario = folder / "one.yaml"
    scenario.write_text(json.dumps({"name": "one", "seed": 4, "nodes": [{"count": 1}]}))
    assert main(["certification", "run", "--scenario", str(scenario), "--state", str(folder / "s.db"), "--history",
                 str(folder / "h.db"), "--category", "communication/nccl-loopback", "--category", ALL_REDUCE, "--name", "two"]) == 0
    return folder


def _following(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, threading.Thread, list[int], str]:
    """`logs two --category nccl-all-reduce --follow` on a copy of `two`, once it said it waits (its stderr so far)."""
    import shutil

    for name in ("s.db", "one.yaml"):
        shutil.copy(folder / name, tmp_path / name)
    capsys.readouterr()
    codes: list[int] = []
    argv = ["certification", "logs", "two", "--state", str(tmp_path / "s.db"), "--history", str(tmp_path / "h.db"),
            "--category", ALL_REDUCE, "--follow"]
    following = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    following.start()
    err = ""
    for _ in range(200):
        err += capsys.readouterr().err
        if "waiting for its first" in err or not following.is_alive():
            break
        time.sleep(0.02)
    return tmp_path, following, codes, err


WAITS = f"nvcre: certification two has run no job of {ALL_REDUCE} yet: waiting for its first (ctrl-c stops)"


def test_follow_waits_for_the_first_job_of_its_category(two: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`logs --category D/V --follow` of a category with no Job yet exited at once (`ran no job of ... (its categories
    with jobs: ...)`, exit 2). It waits for its first, saying so once, as `kubectl logs -f` waits for a pod to start,
    then follows its run to its end."""
    monkeypatch.setattr("nvcre_tui.cli.logs.FOLLOW_SECONDS", 0.05)
    folder, following, codes, err = _following(two, tmp_path, capsys)
    assert WAITS in err.splitlines() and following.is_alive(), (codes, err)
    assert main(["certification", "run", "--scenario", str(folder / "one.yaml"), "--state", str(folder / "s.db"), "--history",
                 str(folder / "h.db"), "--category", "communication/nccl-loopback", "--category", ALL_REDUCE, "--name", "two",
                 "--wait"]) == 0
    following.join(20)
    assert not following.is_alive() and codes == [0]
    out, later = capsys.readouterr()
    assert "Avg bus bandwidth" in out and WAITS not in later, later  # said once, before
    # no engine ran it while it waited: said once too, in the words of a run no engine advances
    said = err + later
    assert said.count("no nvcre process runs the engine") == 1 and "waiting for its first job meanwhile (ctrl-c stops)" in said, said


def test_follow_waiting_for_a_first_job_ends_with_the_certification(two: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A certification that ends before the category ran a job ends the wait as `logs` without --follow says it."""
    from nvcre_tui.engine.sim.scenario import load_scenario
    from nvcre_tui.engine.session import SimSession

    monkeypatch.setattr("nvcre_tui.cli.logs.FOLLOW_SECONDS", 0.05)
    folder, following, codes, err = _following(two, tmp_path, capsys)
    assert WAITS in err.splitlines() and following.is_alive(), (codes, err)

    async def failed() -> None:
        session = await SimSession.open(load_scenario(folder / "one.yaml"), folder / "s.db", history=None, want_engine=False)
        try:
            cert = await session.store.get(CERTIFICATION, "two", "default")
            cert.setdefault("status", {})["conditions"] = [
                {"type": "Failed", "status": "True", "reason": "Test", "message": "ended by the test",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]
            await session.store.update_status(CERTIFICATION, cert)
        finally:
            await session.close()

    asyncio.run(failed())
    following.join(20)
    assert not following.is_alive() and codes == [2]
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"--category: certification two ran no job of {ALL_REDUCE} (its categories with jobs: communication/nccl-loopback)")


async def _cert_running(kubeconfig: Path, running: bool) -> None:
    """burn-in on the emulator as an engine left it unfinished (its terminal conditions taken off), or Failed again."""
    engine = await store_on(kubeconfig, SystemClock(), "nvcre-engine")  # status is the engine's to write
    try:
        cert = await engine.get(CERTIFICATION, "burn-in", "default")
        conditions = [c for c in cert["status"].get("conditions") or [] if c.get("type") not in ("Succeeded", "Failed")]
        if not running:
            conditions.append({"type": "Failed", "status": "True", "reason": "Test", "message": "ended by the test",
                               "lastTransitionTime": "2026-01-01T00:00:00Z"})
        cert["status"]["conditions"] = conditions
        await engine.update_status(CERTIFICATION, cert)
    finally:
        await engine.close()


def _wait_on_a_cluster(burned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                       extra: list[str], waits: str) -> tuple[list[int], str]:
    """`logs burn-in --follow *extra` on the emulator while burn-in is unfinished, once it said `waits`: the certification
    read answered 503 past the client's tries (Retry-After 0), then answered again, then burn-in ended. Its exit code
    and stderr."""
    from tests.kubeapi import Fault

    monkeypatch.setattr("nvcre_tui.cli.logs.FOLLOW_SECONDS", 0.02)
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_as_on_a_cluster(kubeconfig, burned, server))
        asyncio.run(_cert_running(kubeconfig, True))
        capsys.readouterr()
        following, codes = _main_in_thread(["certification", "logs", "burn-in", *extra, "--follow",
                                            "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")])
        err = ""
        deadline = time.monotonic() + 10
        while waits not in err and following.is_alive() and time.monotonic() < deadline:
            err += capsys.readouterr().err
            time.sleep(0.02)
        outage = server.faults.add(Fault(method="GET", path=r"/certifications/burn-in$", status=503, retry_after=0, times=6))
        while ANSWERS not in err and following.is_alive() and time.monotonic() < deadline:
            err += capsys.readouterr().err
            time.sleep(0.02)
        assert following.is_alive() and outage.hits == 6, (codes, err)
        asyncio.run(_cert_running(kubeconfig, False))
        following.join(20)
        return codes, err + capsys.readouterr().err


ANSWERS = "nvcre: the store answers again"


def test_the_wait_for_a_first_job_rides_through_an_api_server_that_stops_answering(burned: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A certification read that failed past the client's retries while --follow waited for a first job ended it (exit 2,
    `certification 'burn-in': ... gave up after 6 tries`). The wait rides through as the log's follow does: said once,
    its return said, and it ends with the certification."""
    codes, err = _wait_on_a_cluster(burned, tmp_path, capsys, monkeypatch, ["--node", "gpu-node-99"],
                                    "waiting for its first (ctrl-c stops)")
    assert codes == [2], err
    store_lines = [line for line in err.splitlines() if "the store" in line]
    assert len(store_lines) == 2 and store_lines[1] == ANSWERS, err
    assert store_lines[0].startswith("nvcre: no answer from the store since ") and store_lines[0].endswith(
        "(gave up after 6 tries in 0s)): waiting for its first job; retried meanwhile"), store_lines[0]
    assert err.splitlines()[-1] == "--node: no job of certification burn-in ran on gpu-node-99" and "Traceback" not in err


async def _slow_job(kubeconfig: Path, body: dict[str, Any] | None) -> dict[str, Any]:
    """SLOW's Job taken off the emulator (its body returned), or made again from `body` (status as the engine wrote it)."""
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    engine = await store_on(kubeconfig, SystemClock(), "nvcre-engine")
    try:
        if body is None:
            body = await admin.get(JOB, SLOW, "default")
            await admin.delete(JOB, SLOW, "default")
            return body
        meta = body["metadata"]
        # made as the engine makes it: a Job whose spec another hand wrote is refused, and left out by the readers
        made = await engine.create(JOB, {**body, "status": {}, "metadata": {
            "name": SLOW, "namespace": "default", "labels": meta.get("labels") or {},
            "annotations": meta.get("annotations") or {}, "ownerReferences": meta["ownerReferences"]}})
        return await engine.update_status(JOB, {**made, "status": body["status"]})
    finally:
        await admin.close()
        await engine.close()


def test_follow_of_a_job_not_made_yet_waits_for_it_when_its_name_is_one_the_certification_gives(burned: Path,
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`--follow --job JOB` of a Job not made yet was bad input at once, though Job names are predictable. Of an
    unfinished certification, a name its Workflows give their Jobs is waited for (said once), then followed; any other
    name is still refused at once."""
    monkeypatch.setattr("nvcre_tui.cli.logs.FOLLOW_SECONDS", 0.02)
    later = SLOW  # taken off before, made again while followed
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_as_on_a_cluster(kubeconfig, burned, server))
        asyncio.run(_cert_running(kubeconfig, True))
        body = asyncio.run(_slow_job(kubeconfig, None))
        argv = ["certification", "logs", "burn-in", "--follow", "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
        capsys.readouterr()
        for other in ("burn-in-communication-nccl-all-reduce-group-6-iter-x", "burn-in-communication-nccl-bogus-job"):
            assert main([*argv, "--job", other]) == 2  # no name its Workflows give (a bad suffix; no such category)
            assert capsys.readouterr().err.splitlines()[-1] == (
                f"--job: certification burn-in has no job {other!r} (`nvcre certification logs burn-in` lists them)")
        following, codes = _main_in_thread([*argv, "--job", later])
        err = ""
        deadline = time.monotonic() + 10
        waits = f"nvcre: certification burn-in has no job {later} yet: waiting for it (ctrl-c stops)"
        while waits not in err and following.is_alive() and time.monotonic() < deadline:
            err += capsys.readouterr().err
            time.sleep(0.02)
        assert following.is_alive(), (codes, err)
        asyncio.run(_slow_job(kubeconfig, body))
        following.join(20)
        out, rest = capsys.readouterr()
    assert codes == [0], err + rest
    assert (err + rest).count(waits) == 1 and "Traceback" not in rest
    assert "Avg bus bandwidth" in out  # its run's log, followed


def test_every_name_job_name_gives_is_one_names_a_job_of_predicts() -> None:
    from nvcre_tui.engine.names import job_name, names_a_job_of

    made = [job_name("w-a-b", "group-6", single=single, diagnose=diagnose, iteration=3) for single in (True, False) for diagnose in (False,)]
    made.append(job_name("w-a-b", "r2-pair-7", single=False, diagnose=True))
    assert all(names_a_job_of("w-a-b", name) for name in made), made
    assert not any(names_a_job_of("w-a-b", name) for name in ("w-a-b-", "w-a-b-jbo", "w-a-b-group-6-iter-x", "w-a-c-job"))
