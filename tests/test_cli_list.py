"""`nvcre certification list`: the certifications of a namespace (or all) with their results, on the simulator and over
real HTTP on the API-server emulator; bad flags are one line."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.store.protocol import CERTIFICATION, NAMESPACE
from tests.kube.cluster import installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster

CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.present: "true"}}}}
  categories: [{{domain: communication, variant: nccl-loopback}}]
"""


def test_the_simulators_finished_certification_is_listed_with_its_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--sim", "--state", str(tmp_path / "sim.db")]
    assert main(["certification", "run", *state, "--category", "communication/nccl-all-reduce", "--wait"]) == 0
    capsys.readouterr()
    assert main(["certification", "list", *state]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split() == ["NAME", "RESULT", "CATEGORIES", "PASSED", "FAILED", "NODES", "INCONCLUSIVE", "EXCLUDED", "RUNTIME", "WAITED", "AGE"]
    assert line.split()[1:6] == ["PASSED", "1/1", "0", "0", "0"]
    assert main(["cert", "ls", *state, "-o", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["result"], row["namespace"], row["failedNodes"]) == ("PASSED", "default", 0) and row["completionTime"]


def test_a_certification_failed_on_nodes_that_proved_nothing_lists_them_inconclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The training's group failed blaming nobody (its measurement unavailable): FAILED with 0 failed and 0 excluded
    nodes, nothing saying on what. INCONCLUSIVE counts its 4 nodes, as the report's inconclusiveNodes and the wall do."""
    case = Path(__file__).resolve().parent / "cases" / "scenarios" / "inconclusive-then-leaves-target"
    state = ["--sim", "--scenario", str(case / "scenario.yaml"), "--state", str(tmp_path / "sim.db")]
    assert main(["certification", "run", *state, "--cert-file", str(case / "cert.yaml"), "--wait", "--results-file", str(tmp_path / "r.json")]) == 1
    report = json.loads((tmp_path / "r.json").read_text())
    capsys.readouterr()
    assert main(["certification", "list", *state]) == 0
    header, line = capsys.readouterr().out.splitlines()
    cells = dict(zip(["NAME", "RESULT", "CATEGORIES PASSED", "FAILED NODES", "INCONCLUSIVE", "EXCLUDED"], line.split()))
    assert (cells["RESULT"], cells["FAILED NODES"], cells["INCONCLUSIVE"], cells["EXCLUDED"]) == ("FAILED", "0", "4", "0"), (header, line)
    assert main(["certification", "list", *state, "-o", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["inconclusiveNodes"] == len(report["inconclusiveNodes"]) == 4


def test_a_certification_that_only_waits_lists_as_waiting_as_the_console_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A certification queued behind another on its nodes: its summary says RUNNING, and the list said RUNNING where the
    dashboard and the wall say WAITING. The table says WAITING; the JSON keeps `result` (the Certification's own, read by
    scripts and by report's exit code) and says `phase` WAITING and `waiting` why."""
    state = ["--sim", "--state", str(tmp_path / "sim.db")]
    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    assert main(["certification", "run", *state, "--cert-file", burn_in]) == 0
    assert main(["certification", "run", *state, "--cert-file", burn_in, "--name", "second"]) == 0
    capsys.readouterr()
    assert main(["certification", "list", *state]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[1:]] == [["second", "WAITING"], ["burn-in", "RUNNING"]]  # newest first, as the dashboard
    assert main(["certification", "list", *state, "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["result"], r["phase"], r["waiting"]) for r in rows] == [
        ("second", "RUNNING", "WAITING", "for certification burn-in"), ("burn-in", "RUNNING", "RUNNING", None)]


def test_a_damaged_row_is_named_and_the_others_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A Certification whose stored row is no JSON is named on stderr (exit 2), never left out silently; the others list."""
    state = ["--sim", "--state", str(tmp_path / "sim.db")]
    for name in ("kept", "broken"):
        assert main(["certification", "run", *state, "--category", "communication/nccl-all-reduce", "--name", name]) == 0
    with contextlib.closing(sqlite3.connect(tmp_path / "sim.db")) as db, db:
        assert db.execute("UPDATE objects SET body = '{not json' WHERE kind LIKE '%/certifications' AND name = 'broken'").rowcount == 1
    capsys.readouterr()
    assert main(["certification", "list", *state]) == 2
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["kept"]
    stalled, said = err.splitlines()  # kept runs, and no process runs the store's engine: said first
    assert stalled.startswith("nvcre: kept is RUNNING, but no nvcre process runs the engine"), stalled
    assert said.startswith(f"{tmp_path / 'sim.db'}: Certification default/broken: body is not JSON") and said.endswith("; left out of the list")
    # `list | head -1` of a list longer than the output buffer: the reader gone as the list is printed; the damaged row
    # is still named, exit 2 (it was exit 0 with nothing said).
    monkeypatch.setattr(sys, "stdout", _GoneReader())
    for output in ("table", "json"):
        assert main(["certification", "list", *state, "-o", output]) == 2
        [said] = capsys.readouterr().err.splitlines()
        assert said.endswith("; left out of the list")


class _GoneReader(io.StringIO):
    """Standard output whose reader went away: every write is a broken pipe."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


async def _create(kubeconfig: Path) -> None:
    admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        await admin.create(NAMESPACE, {"metadata": {"name": "team-b"}})
        for name, namespace in (("soak", "default"), ("burn-in", "default"), ("nightly", "team-b")):
            cert = certification_from_text("cert.yaml", CERT.format(name=name), default_catalog()).to_wire()
            cert["metadata"]["namespace"] = namespace
            cert.pop("status", None)
            await admin.create(CERTIFICATION, cert)
    finally:
        await admin.close()


def test_on_a_cluster_one_namespace_or_all_and_pending_before_an_engine_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_create(kubeconfig))
        cluster = ["--kubeconfig", str(kubeconfig)]
        assert main(["certification", "list", *cluster]) == 0
        listed = capsys.readouterr().out.splitlines()
        assert sorted(line.split()[0] for line in listed[1:]) == ["burn-in", "soak"]
        assert all(line.split()[1:3] == ["PENDING", "-"] for line in listed[1:])  # no engine wrote a status yet
        assert main(["certification", "list", *cluster, "-A", "-o", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        # by namespace, then age: soak and burn-in may share their creation second (then by name)
        assert [r["namespace"] for r in rows] == ["default", "default", "team-b"]
        assert sorted(r["name"] for r in rows) == ["burn-in", "nightly", "soak"] and rows[2]["name"] == "nightly"
        assert main(["certification", "list", *cluster, "-n", "kube-system"]) == 0
        out, err = capsys.readouterr()
        assert out == "" and "No certifications in namespace kube-system" in err


def test_a_name_not_found_here_names_the_namespaces_that_hold_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`report nightly` without `-n team-b` (the likeliest slip) said only that it was not found in default; report, logs
    and delete now name the namespaces holding one. A user who may not list them all gets the line as it was."""
    from tests.kube.users import least_privileged

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_create(kubeconfig))
        cluster = ["--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
        for command in (["report"], ["logs"], ["delete"]):
            assert main(["certification", *command, "nightly", *cluster]) == 2
            err = capsys.readouterr().err
            assert "certification 'nightly' not found in namespace default" in err and "; namespace team-b holds one: -n team-b" in err, err
        assert main(["certification", "report", "nightly", *cluster, "-n", "team-b"]) == 3  # there, not run yet
        capsys.readouterr()
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice", ("nvcre-view",)))
        assert main(["certification", "report", "nightly", "--kubeconfig", str(alice), "--history", str(tmp_path / "h.db")]) == 2
        err = capsys.readouterr().err
        assert "certification 'nightly' not found in namespace default" in err and "team-b" not in err and "Traceback" not in err, err


@pytest.mark.parametrize(("flags", "said"), [
    (["-A", "-n", "default"], "-A lists every namespace and -n one: give one of them"),
    (["-n", "Not_A_Namespace"], "--namespace"),
])
def test_bad_flags_are_one_line(flags: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "list", "--sim", "--state", str(tmp_path / "sim.db"), *flags]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err and "Traceback" not in err
    assert not (tmp_path / "sim.db").exists()  # nothing created


@pytest.mark.parametrize("store", ["missing.db", "empty.db"])
def test_a_store_not_made_yet_lists_nothing_whether_absent_or_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                           store: str) -> None:
    """An empty file is a store about to be made (a run would make it one): `list` refused it ("an empty file, not an
    nvcre store yet") while it listed nothing, exit 0, for a path with no file. Both read as no certification, and
    neither is written."""
    (tmp_path / "empty.db").touch()
    state = ["--sim", "--state", str(tmp_path / store)]
    assert main(["certification", "list", *state]) == 0
    assert "No certifications in namespace default" in capsys.readouterr().err
    assert main(["certification", "report", "x", *state]) == 2
    assert "certification 'x' not found" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"] and (tmp_path / "empty.db").stat().st_size == 0


@pytest.mark.parametrize("history", ["default", "named"])
def test_list_report_and_delete_on_no_store_make_no_history_either(tmp_path: Path, capsys: pytest.CaptureFixture[str], history: str) -> None:
    """On a --state that does not exist, `list` and `report` made a 32 KB history (the default one, or the one --history
    names) to archive nothing; with a named one, delete said `history off: ...: no such file` before its line."""
    import os

    named = ["--history", str(tmp_path / "h.db")] if history == "named" else []
    state = ["--sim", "--state", str(tmp_path / "missing.db"), *named]
    for argv, said in ((["list"], "No certifications in namespace default"), (["report", "x"], "certification 'x' not found"),
                       (["delete", "x"], "certification 'x' not found")):
        main(["certification", *argv, *state])
        [line] = capsys.readouterr().err.splitlines()
        assert said in line, (argv, line)
    assert list(tmp_path.iterdir()) == [] and not any(Path(os.environ["XDG_STATE_HOME"]).rglob("*.db"))


def test_certifications_created_in_one_second_are_ordered_as_they_were_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """zeta then alpha, created in the same second on other nodes, finishing in the same second: `list`, the history and
    the dashboard ordered them by name (alpha first: the older listed as the newer), as creationTimestamp has whole seconds."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.sim.scenario import load_scenario
    from nvcre_tui.engine.views.certifications import certification_rows
    from nvcre_tui.engine.views.snapshot import Snapshot
    from tests.engine.test_certifications_share_nodes import CASE, certification

    state, history = tmp_path / "sim.db", tmp_path / "history.db"

    async def run() -> list[str]:
        session = await SimSession.open(load_scenario(CASE / "scenario.yaml"), state, history=None)
        try:
            assert session.engine is not None
            await session.store.create(CERTIFICATION, certification("zeta", ["gpu-node-01", "gpu-node-02"]))
            await session.store.create(CERTIFICATION, certification("alpha", ["gpu-node-03", "gpu-node-04"]))

            async def done() -> bool:
                return all([cond.is_terminal(await session.store.get(CERTIFICATION, name, "default")) for name in ("zeta", "alpha")])

            assert await session.engine.run_until_settled(until=done, max_seconds=3600)
            snapshot = await Snapshot.read(session.store)
            certs = {c["metadata"]["name"]: c for c in snapshot.certifications}
            assert certs["zeta"]["metadata"]["creationTimestamp"] == certs["alpha"]["metadata"]["creationTimestamp"]
            assert certs["zeta"]["status"]["completionTime"] == certs["alpha"]["status"]["completionTime"]
            return [row.name for row in certification_rows(snapshot, session.clock.now())]
        finally:
            await session.close()

    assert asyncio.run(run()) == ["alpha", "zeta"]  # the dashboard: newest first
    capsys.readouterr()
    assert main(["certification", "list", "--sim", "--state", str(state)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["alpha", "zeta"]  # as the dashboard
    assert main(["certification", "report", "zeta", "alpha", "--sim", "--state", str(state), "--history", str(history), "-o", "json"]) == 0
    capsys.readouterr()
    assert main(["history", "certifications", "--history", str(history), "-o", "json"]) == 0
    assert [row["name"] for row in json.loads(capsys.readouterr().out)] == ["zeta", "alpha"]


def test_the_report_of_a_certification_that_only_waits_says_waiting_as_the_list_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's Result said RUNNING for one queued behind another, while `list` said WAITING: its text and HTML say
    WAITING and what for; its JSON keeps `result` and gives `phase` and `waiting` as `list -o json`; exit 3 stays."""
    state = ["--sim", "--state", str(tmp_path / "sim.db")]
    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    assert main(["certification", "run", *state, "--cert-file", burn_in]) == 0
    assert main(["certification", "run", *state, "--cert-file", burn_in, "--name", "second"]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "second", *state[1:]]) == 3
    [result] = [line for line in capsys.readouterr().out.splitlines() if "Result" in line]
    assert result.strip(" │").split() == ["Result:", "WAITING", "for", "certification", "burn-in"], result
    assert main(["certification", "report", "burn-in", *state[1:]]) == 3
    [result] = [line for line in capsys.readouterr().out.splitlines() if "Result" in line]
    assert result.strip(" │").split() == ["Result:", "RUNNING"], result
    assert main(["certification", "report", "second", "burn-in", *state[1:], "-o", "json"]) == 3
    reports = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["result"], r["phase"], r["waiting"]) for r in reports] == [
        ("second", "RUNNING", "WAITING", "for certification burn-in"), ("burn-in", "RUNNING", "RUNNING", None)]
    assert main(["certification", "report", "second", *state[1:], "-o", "html"]) == 3
    assert "⋯ WAITING for certification burn-in</span>" in capsys.readouterr().out


def test_with_the_sim_runner_a_certifications_age_is_the_api_servers_not_the_fleets_time(tmp_path: Path,
                                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The fleet's simulated time runs ahead of the cluster's clock (run --wait as fast as the engine can): `list
    --sim-runner` measured AGE from the API server's creationTimestamp to the simulated now, and a certification made
    a minute before read `16h34m` in a walkthrough. AGE is the server's time since it stored it; RUNTIME stays the
    fleet's."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps({"name": "one", "seed": 4, "nodes": [{"count": 1, "cliques": 1}]}))
    fleet = ["--sim-runner", "--scenario", str(scenario), "--history", str(tmp_path / "h.db")]
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        assert main(["certification", "run", "--kubeconfig", str(kubeconfig), *fleet, "--category", "communication/nccl-loopback",
                     "--name", "aged", "--wait"]) == 0
        capsys.readouterr()
        assert main(["certification", "list", "--kubeconfig", str(kubeconfig), *fleet, "-o", "json"]) == 0
        [listed] = json.loads(capsys.readouterr().out)
    assert listed["runtimeSeconds"] >= 30, listed  # the fleet's time: the loopback ran about a minute of it
    made = datetime.fromisoformat(listed["created"].replace("Z", "+00:00"))
    seconds = re.fullmatch(r"(\d+)s", listed["age"])  # "58s" read before: the fleet's minute ahead, not the server's
    assert seconds and int(seconds.group(1)) <= (datetime.now(UTC) - made).total_seconds() + 2, listed


def test_a_running_sim_runner_certification_read_without_it_runs_the_servers_time_since_it_was_made(tmp_path: Path,
                                                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A --sim-runner engine stamps its start in the fleet's simulated time, hours ahead of the cluster's clock: `list`
    and the dashboard read without --sim-runner said RUNTIME 0s for it while it ran. It has run the API server's time
    since it was created, the clock its AGE counts on."""
    from datetime import timedelta

    from nvcre_tui.engine.clock import format_time
    from nvcre_tui.engine.views.certifications import certification_rows
    from nvcre_tui.engine.views.snapshot import Snapshot

    async def running_ahead(kubeconfig: Path) -> None:
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        try:
            cert = await admin.create(CERTIFICATION, {
                "metadata": {"name": "ahead", "namespace": "default"},
                "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                         "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}})
            ahead = format_time(datetime.now(UTC) + timedelta(hours=16))  # the fleet's simulated now
            cert["status"] = {"startTime": ahead, "summary": {"result": "RUNNING", "passedCategories": "0/1"},
                              "conditions": [{"type": "InProgress", "status": "True", "reason": "CategoriesRunning",
                                              "message": "running", "lastTransitionTime": ahead}]}
            await admin.update_status(CERTIFICATION, cert)
        finally:
            await admin.close()

    async def dashboard(kubeconfig: Path) -> str:
        reader = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        try:
            now = datetime.now(UTC)
            [shown] = certification_rows(await Snapshot.read(reader), now, stamped_now=now)
            return shown.runtime
        finally:
            await reader.close()

    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(running_ahead(kubeconfig))
        time.sleep(2.2)  # whole seconds on the server's clock
        capsys.readouterr()
        assert main(["certification", "list", "--kubeconfig", str(kubeconfig), "-o", "json"]) == 0
        [listed] = json.loads(capsys.readouterr().out)
        runtime = asyncio.run(dashboard(kubeconfig))
    assert listed["result"] == "RUNNING" and 2 <= listed["runtimeSeconds"] <= 30, listed
    assert listed["waitedSeconds"] == 0, listed
    assert runtime not in ("0s", "-") and runtime.endswith("s"), runtime


def test_on_the_simulator_age_counts_to_the_fleets_time_as_the_console_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The simulated fleet keeps time while no process runs (the next engine resumes at the recorded time plus the wall
    time since × speed), and the console's dashboard counts a certification's Age to that time. `list` counted to where
    the last engine left the store: in a walkthrough AGE read 4h42m of a certification the dashboard beside it aged
    2d22h. An hour after the last engine, at speed 2, it is two hours older, as the dashboard says."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps({"name": "two", "seed": 4, "speed": 2, "nodes": [{"count": 1}]}))
    state = tmp_path / "s.db"
    flags = ["--state", str(state), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", "--scenario", str(scenario), *flags, "--category", "communication/nccl-loopback",
                 "--name", "night", "--wait"]) == 0
    with contextlib.closing(sqlite3.connect(state)) as db, db:  # the last engine exited an hour ago
        recorded = json.loads(db.execute("select value from properties where key = 'clock'").fetchone()[0])
        recorded["wall"] = datetime.fromtimestamp(time.time() - 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        db.execute("update properties set value = ? where key = 'clock'", (json.dumps(recorded),))
    capsys.readouterr()
    assert main(["certification", "list", *flags, "-o", "json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert re.fullmatch(r"2h0[0-2]m", listed["age"]), listed  # the run's few minutes, then two simulated hours
