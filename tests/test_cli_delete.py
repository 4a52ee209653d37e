"""`nvcre certification delete` and `run --wait --cleanup`: a certification goes with its Workflows, Jobs and runs,
archived first when finished, on the simulator and on an API server with no garbage collector."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.cli.interrupt import stop_on_interrupt
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.history import HistoryQuery
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE, NVCRE_VERSION, SCHEMA_GENERATION
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario, build_nodes, default_scenario
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, WORKFLOW, WORKLOADRUN
from tests.kube.cluster import installed_in_thread, outdate_crds, store_on
from tests.runner.harness import register_gpu_nodes

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = ROOT / "examples" / "burn-in.yaml"
CATEGORY = ["--category", "communication/nccl-all-reduce"]
SMALL_FLEET = {"name": "two", "seed": 4, "nodes": [{"count": 2, "cliques": 1}]}


async def _stored(state: Path) -> dict[str, list[str]]:
    """The names of every Certification, Workflow, Job and WorkloadRun in the simulator's store."""
    session = await SimSession.open(default_scenario(), state, want_engine=False, history=None, readonly=True)
    try:
        return {kind.kind: [o["metadata"]["name"] for o in (await session.store.list(kind)).items]
                for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)}
    finally:
        await session.close()


def stored(state: Path) -> dict[str, list[str]]:
    return asyncio.run(_stored(state))


def test_run_wait_cleanup_reports_archives_then_deletes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state, history, results = tmp_path / "s.db", tmp_path / "h.db", tmp_path / "r.json"
    code = main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--cleanup", "--state", str(state),
                 "--history", str(history), "--results-file", str(results)])
    out, err = capsys.readouterr()
    assert code == 1  # the burn-in's verdict, not the cleanup's
    assert "Result:         FAILED" in out and json.loads(results.read_text())["result"] == "FAILED"
    assert f"certification burn-in deleted from namespace default; its record is kept in the history ({history})" in err
    assert stored(state) == {"Certification": [], "Workflow": [], "Job": [], "WorkloadRun": []}
    assert [c["name"] for c in HistoryQuery(history).certifications()] == ["burn-in"]
    assert main(["certification", "report", "burn-in", "--state", str(state)]) == 2


def test_run_cleanup_on_timeout_deletes_the_unfinished_certification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    code = main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--timeout", "10m", "--cleanup", "--state", str(state)])
    out, err = capsys.readouterr()
    assert code == 3
    assert "Result:         RUNNING" in out and "--cleanup deletes it now" in err and "report later" not in err
    assert "it had not finished: its runs stop" in err
    assert stored(state) == {"Certification": [], "Workflow": [], "Job": [], "WorkloadRun": []}


def test_cleanup_needs_wait(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--cleanup", "--state", str(state)]) == 2
    assert capsys.readouterr().err.strip() == "--cleanup: needs --wait (it deletes the certification once it is followed to its report)"
    assert not state.exists()  # nothing created


def test_delete_a_running_certification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--state", str(state)]) == 0
    assert stored(state)["Workflow"]  # under way
    capsys.readouterr()
    assert main(["certification", "delete", "burn-in", "--sim", "--state", str(state), "--wait"]) == 0
    assert capsys.readouterr().err.strip() == "certification burn-in deleted from namespace default; it had not finished: its runs stop"
    assert stored(state) == {"Certification": [], "Workflow": [], "Job": [], "WorkloadRun": []}


@pytest.mark.parametrize(("argv", "message"), [
    (["burn-in", "nope"], "certification 'nope' not found in namespace default of the simulator ({state}); nothing deleted"),
    (["burn-in", "burn-in"], "NAME: 'burn-in' is given twice"),
    (["burn-in", "--timeout", "1m"], "--timeout: needs --wait (it bounds how long the deletion is followed)"),
    (["burn-in", "--wait", "--timeout", "soon"], "--timeout: not a duration"),
    (["burn-in", "-n", "Bad_NS"], "--namespace: must be a lowercase DNS label"),
])
def test_bad_delete_input_deletes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    state = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--state", str(state)]) == 0
    capsys.readouterr()
    assert main(["certification", "delete", *argv, "--sim", "--state", str(state)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message.format(state=state)) and len(err.strip().splitlines()) == 1, err
    assert stored(state)["Certification"] == ["burn-in"]


@pytest.mark.parametrize("wait", [[], ["--wait"]])
def test_delete_on_a_store_that_does_not_exist_creates_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               wait: list[str]) -> None:
    """`list` and `report` on an absent --state create nothing; `delete` made a 49 KB store (and the history) to say
    that the name was not found."""
    state = tmp_path / "qq6.db"
    assert main(["certification", "delete", "nothere", "--sim", "--state", str(state), *wait]) == 2
    assert capsys.readouterr().err == (f"certification 'nothere' not found in namespace default of the simulator ({state}); "
                                       "nothing deleted\n")
    assert list(tmp_path.iterdir()) == [] and not any(Path(os.environ["XDG_STATE_HOME"]).rglob("*.db"))


async def _cluster_left(kubeconfig: Path) -> dict[str, list[str]]:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        left = {kind.kind: [o["metadata"]["name"] for o in (await store.list(kind, "default")).items]
                for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)}
        left["ConfigMap"] = [m["metadata"]["name"] for m in (await store.list(CONFIGMAP, "default")).items if m["metadata"].get("ownerReferences")]
        return left
    finally:
        await store.close()


async def _orphan_maker(kubeconfig: Path, lease_held: bool = False, name: str = "held", lease_seconds: float = 3600) -> None:
    """A Certification with a Workflow of its own, made as `kubectl apply` would (no engine runs); `lease_held`: an
    engine elsewhere holds the engine Lease (so no command here runs one) for `lease_seconds` unless it renews it."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        if lease_held:
            await EngineLease(store, SystemClock(), INSTALL_NAMESPACE, "engine@elsewhere/1", duration=lease_seconds).try_acquire()
        cert = await store.create(CERTIFICATION, {
            "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name, "namespace": "default"},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}})
        written = {**cert, "metadata": {"name": name, "namespace": "default"}}  # as a file holds it, without what the server set
        rendered = render_certification(certification_from_text(f"{name}.yaml", json.dumps(written), default_catalog()),
                                        build_nodes(default_scenario()), default_catalog(), f"{name}.yaml")
        workflow = rendered[0].workflow.to_wire()
        workflow["metadata"].update(namespace="default", ownerReferences=[{
            "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": name, "uid": cert["metadata"]["uid"], "controller": True}])
        workflow.pop("status", None)
        await store.create(WORKFLOW, workflow)
    finally:
        await store.close()


def test_on_an_api_server_alone_run_cleanup_leaves_nothing_and_delete_wait_says_what_remains(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps(SMALL_FLEET))
    with installed_in_thread(tmp_path) as (_, kubeconfig):  # no garbage collector, as envtest
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(scenario), *CATEGORY,
                     "--name", "tidy", "--wait", "--cleanup", "--history", str(tmp_path / "h.db")])
        err = capsys.readouterr().err
        assert code == 0, err
        assert "certification tidy deleted from namespace default; its record is kept in the history" in err
        left = asyncio.run(_cluster_left(kubeconfig))  # its result ConfigMaps too: the command deletes them (the engine may not)
        assert left == {"Certification": [], "Workflow": [], "Job": [], "WorkloadRun": [], "ConfigMap": []}

        asyncio.run(_orphan_maker(kubeconfig, name="loose"))  # without --wait, and no engine running: said who removes the rest
        assert main(["certification", "delete", "loose", "--kubeconfig", str(kubeconfig)]) == 0
        assert capsys.readouterr().err.splitlines()[-1] == (
            "its Workflows, Jobs and runs go once an nvcre engine (a console, `nvcre controller`) or a garbage collector "
            "removes them; --wait runs one now and waits until they are gone")
        assert asyncio.run(_cluster_left(kubeconfig))["Workflow"] == ["loose-communication-nccl-all-reduce"]

        asyncio.run(_orphan_maker(kubeconfig))  # with no engine running: this command's engine collects its Workflow (and loose's)
        assert main(["certification", "delete", "held", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "30s"]) == 0
        assert "certification held deleted from namespace default; it had not finished: its runs stop" in capsys.readouterr().err
        assert asyncio.run(_cluster_left(kubeconfig))["Workflow"] == []

        asyncio.run(_orphan_maker(kubeconfig, lease_held=True))  # another engine holds the lease, yet collects nothing
        assert main(["certification", "delete", "held", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "1s"]) == 3
        err = capsys.readouterr().err
        assert "1 of its objects remain (Workflow): no garbage collector or nvcre engine removed them yet" in err
        assert ("waiting up to 1s until its Workflows, Jobs and runs are gone; this process runs no engine "
                "(viewer: engine held by engine@elsewhere/1") in err  # said before the wait, not only after it
        assert asyncio.run(_cluster_left(kubeconfig))["Workflow"] == ["held-communication-nccl-all-reduce"]


def test_delete_wait_takes_the_lease_of_an_engine_that_died_and_collects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An engine killed just before the deletion leaves its Lease live for its duration: `delete --wait` waited its
    whole timeout as a viewer, then said 17 objects remain. It takes the Lease once it is free and collects them."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_orphan_maker(kubeconfig, lease_held=True, lease_seconds=3))  # nobody renews it: free after 3 s
        assert main(["certification", "delete", "held", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "60s"]) == 0
        err = capsys.readouterr().err
        assert "this process runs no engine (viewer: engine held by engine@elsewhere/1" in err
        assert "no engine holds the lease any more: this process took it over and runs the engine" in err
        assert err.splitlines()[-1] == "its Workflows, Jobs and runs are gone"  # the wait it announced has ended
        assert asyncio.run(_cluster_left(kubeconfig))["Workflow"] == []


def test_delete_wait_that_may_run_no_engine_says_why_before_it_waits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nvcre upgraded and `setup init` not run again: `delete --wait` is a viewer on an API server alone, so nothing
    removes the Workflows; it said nothing for its whole wait (5 minutes by default) and then only that they remain."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_orphan_maker(kubeconfig))
        asyncio.run(outdate_crds(kubeconfig))
        assert main(["certification", "delete", "held", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "1s"]) == 3
        err = capsys.readouterr().err
        assert ("waiting up to 1s until its Workflows, Jobs and runs are gone; this process runs no engine (viewer: "
                f"workflows.nvcre.nvidia.com was installed by nvcre {NVCRE_VERSION} (schema generation {SCHEMA_GENERATION}) with "
                "another schema") in err
        assert "run `nvcre setup init`" in err
        assert err.index("waiting up to 1s") < err.index("1 of its objects remain")


@pytest.mark.parametrize("name", [".", "..", "a/b", "Upper", "x" * 254])
def test_a_name_that_is_no_certification_name_is_refused_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                            name: str) -> None:
    assert main(["certification", "delete", name, "--sim", "--state", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("NAME: ") and "is not a certification name" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s.db").exists()  # refused before the store was opened


def test_a_finished_certification_whose_record_cannot_be_archived_is_not_deleted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    state, history = tmp_path / "s.db", tmp_path / "h.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state), "--history", str(tmp_path / "other.db")]) == 1
    capsys.readouterr()

    def full(*args: object, **kwargs: object) -> bool:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr("nvcre_tui.engine.history.archive.write_record", full)
    assert main(["certification", "delete", "burn-in", "--sim", "--state", str(state), "--history", str(history)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the archiver's own notice of the failed write
    assert err.startswith("certification 'burn-in' not deleted: its record could not be archived (") and "database or disk is full" in err
    assert stored(state)["Certification"] == ["burn-in"]


def test_a_finished_certification_too_damaged_to_archive_is_deleted_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No record can be built from a damaged Certification (spec "x"): delete says so and deletes it, where it used
    to refuse for ever and blame the history."""
    state, history = tmp_path / "s.db", tmp_path / "h.db"
    # run with another history: the one delete is given has no record of it
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state), "--history", str(tmp_path / "o.db")]) == 1
    with sqlite3.connect(state) as db:
        [(body,)] = db.execute("SELECT body FROM objects WHERE kind LIKE '%/certifications' AND name = 'burn-in'").fetchall()
        db.execute("UPDATE objects SET body = ? WHERE kind LIKE '%/certifications' AND name = 'burn-in'",
                   (json.dumps({**json.loads(body), "spec": "x"}),))
    db.close()
    capsys.readouterr()
    assert main(["certification", "delete", "burn-in", "--sim", "--state", str(state), "--history", str(history)]) == 0
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == "certification burn-in deleted from namespace default; not archived: it is damaged (spec: must be a mapping, got 'x'), so its report goes with it"
    assert stored(state)["Certification"] == []
    # archived when it finished, damaged later: its record is kept, and delete says so
    state.unlink()
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state), "--history", str(history)]) == 1
    with sqlite3.connect(state) as db:
        db.execute("UPDATE objects SET body = json_set(body, '$.spec', 'x') WHERE kind LIKE '%/certifications' AND name = 'burn-in'")
    db.close()
    capsys.readouterr()
    assert main(["certification", "delete", "burn-in", "--sim", "--state", str(state), "--history", str(history)]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == (f"certification burn-in deleted from namespace default; its record is kept in the "
                                                                f"history ({history}), from before it was damaged")


def test_run_wait_on_a_certification_deleted_meanwhile_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps(SMALL_FLEET))
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_register(kubeconfig))
        deleter = threading.Timer(2.0, lambda: asyncio.run(_delete_when_seen(kubeconfig, "followed")))
        deleter.start()
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), *CATEGORY, "--name", "followed", "--wait",
                     "--timeout", "60s", "--history", str(tmp_path / "h.db")])
        deleter.join()
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().splitlines()[-1] == ("certification 'followed' was deleted while it was followed (`nvcre certification delete`, "
                                            "the console's x or kubectl); it has no report")


async def _register(kubeconfig: Path) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        await register_gpu_nodes(store, SystemClock(), Scenario.model_validate(SMALL_FLEET))  # as real ones: their pods wait
    finally:
        await store.close()


async def _delete_when_seen(kubeconfig: Path, name: str) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        for _ in range(200):
            try:
                await store.delete(CERTIFICATION, name, "default")
                return
            except NotFound:
                await asyncio.sleep(0.05)
    finally:
        await store.close()


def test_the_second_ctrl_c_is_marked_forced_before_it_stops_everything() -> None:
    # As a terminal's ctrl-c finds it: a suite run as a background job (CI) ignores SIGINT, which nvcre leaves ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _second_ctrl_c_is_forced()
    finally:
        signal.signal(signal.SIGINT, previous)


def _second_ctrl_c_is_forced() -> None:
    with stop_on_interrupt() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested and not stop.forced
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler)
        with pytest.raises(KeyboardInterrupt):
            # Called as the signal would call it: a real second signal's exception can land in a garbage collector
            # callback (hypothesis keeps one), which swallows it ("Exception ignored in gc_callback").
            handler(signal.SIGINT, None)
        assert stop.forced  # `run --cleanup` reads this, wherever asyncio turned the interrupt into a cancellation


async def test_only_configmaps_every_owner_of_which_was_deleted_go_with_a_certification() -> None:
    """A ConfigMap another object still owns (or nobody owns) is not the certification's to delete."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.history.deletion import _delete_owned_configmaps
    from nvcre_tui.engine.store.memory import MemoryStore

    store = MemoryStore(ManualClock())

    def owned(name: str, *uids: str) -> dict[str, Any]:
        refs = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "name": f"j-{uid}", "uid": uid} for uid in uids]
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default", "ownerReferences": refs},
                "data": {"ssh-privatekey": "-----BEGIN OPENSSH PRIVATE KEY-----"}}

    for configmap in (owned("run-mpi-ssh-auth", "job-1"), owned("shared", "job-1", "someone-else"), owned("unowned")):
        await store.create(CONFIGMAP, configmap)
    assert await _delete_owned_configmaps(store, "default", {"cert-0", "job-1"}) is None
    assert sorted(c["metadata"]["name"] for c in (await store.list(CONFIGMAP, "default")).items) == ["shared", "unowned"]


def test_run_without_wait_on_the_simulated_fleet_names_the_controller_that_plays_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hint said `nvcre controller`, which runs real pods and failed every run of the certification."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps(SMALL_FLEET))
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(scenario), *CATEGORY,
                     "--name", "later", "--history", str(tmp_path / "h.db")]) == 0
        err = capsys.readouterr().err
        assert f"run `nvcre controller --sim-runner --scenario {scenario}` (README)" in err, err
        # marked as the fleet's: a plain engine leaves it alone though none of its runs has started
        async def created() -> dict:
            store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
            try:
                return await store.get(CERTIFICATION, "later", "default")
            finally:
                await store.close()

        assert asyncio.run(created())["metadata"]["annotations"]["nvcre.nvidia.com/engine-runner"] == "simulated-fleet"


@pytest.mark.parametrize(("holder_runs", "flags", "said"), [
    ("pods", ["--sim-runner", "--scenario", "{scenario}"], "runs real pods: it would fail the simulated fleet's runs of this certification"),
    ("simulated-fleet", [], "plays the simulated fleet (--sim-runner): this certification would get made-up measurements"),
], ids=["sim-run-beside-a-real-engine", "real-run-beside-the-fleet"])
def test_run_refuses_a_certification_the_engine_holding_the_lease_would_run_wrongly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], holder_runs: str, flags: list[str], said: str) -> None:
    """A console without --sim-runner held the Lease; `run --sim-runner --wait` followed as a viewer while that engine
    failed all 64 groups (and the other way round, the fleet played a certification meant for GPUs). The Lease says
    what its holder runs workloads with; a certification it would run wrongly is refused before it is created."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps(SMALL_FLEET))

    async def hold() -> None:
        store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        try:
            assert await EngineLease(store, SystemClock(), INSTALL_NAMESPACE, "console@elsewhere/1", duration=3600, runner=holder_runs).try_acquire()
            from nvcre_tui.engine.sim.fleet import SimulatedFleet
            from nvcre_tui.engine.sim.scenario import Scenario

            await SimulatedFleet(store, SystemClock(), Scenario.model_validate(SMALL_FLEET)).ensure_nodes()  # the fleet's Nodes
        finally:
            await store.close()

    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(hold())
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), *[f.format(scenario=scenario) for f in flags], *CATEGORY,
                "--name", "wrong", "--wait", "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"the engine that holds the Lease (console@elsewhere/1) {said}" in err and "Traceback" not in err, err
        assert asyncio.run(_cluster_left(kubeconfig))["Certification"] == []  # nothing created


async def _workloads_of_others(kubeconfig: Path) -> dict[str, list[str]]:
    """What an engine made in `default` besides a deletion's tree: nvcre Workflows and Jobs, batch Jobs, Services (but the
    API server's own), Secrets."""
    from nvcre_tui.engine.store.protocol import BATCH_JOB, SECRET, SERVICE

    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        made = {kind.api_version + " " + kind.kind: [o["metadata"]["name"] for o in (await store.list(kind, "default")).items]
                for kind in (WORKFLOW, JOB, BATCH_JOB, SERVICE, SECRET)}
        made["v1 Service"] = [name for name in made["v1 Service"] if name != "kubernetes"]
        return made
    finally:
        await store.close()


def test_delete_wait_starts_nothing_for_another_certification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With no engine running, `delete --wait` took the Lease and reconciled every certification while it waited: it
    created another, waiting certification's batch Job, Service and ssh Secret, then exited, leaving GPU pods that no
    engine follows. Its engine now reconciles the deleted certification's tree only (and collects orphans)."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):  # no garbage collector, no Trainer: batch Jobs, as envtest
        asyncio.run(_register_nodes(kubeconfig))
        asyncio.run(_orphan_maker(kubeconfig, name="doomed"))
        asyncio.run(_orphan_maker(kubeconfig, name="waiting"))  # created as kubectl would, waiting for an engine
        asyncio.run(_orphan_maker(kubeconfig, name="loose"))
        assert main(["certification", "delete", "loose", "--kubeconfig", str(kubeconfig)]) == 0  # its Workflow: an orphan
        assert main(["certification", "delete", "doomed", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "30s"]) == 0
        err = capsys.readouterr().err
        assert "certification doomed deleted from namespace default" in err and "Traceback" not in err
        made = asyncio.run(_workloads_of_others(kubeconfig))
        # doomed's Workflow and loose's orphan collected; waiting's Workflow as it was, with nothing started under it
        assert made == {"nvcre.nvidia.com/v1alpha1 Workflow": ["waiting-communication-nccl-all-reduce"],
                        "nvcre.nvidia.com/v1alpha1 Job": [], "batch/v1 Job": [], "v1 Service": [], "v1 Secret": []}
        assert asyncio.run(_cluster_left(kubeconfig))["Certification"] == ["waiting"]


async def _register_nodes(kubeconfig: Path) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        await register_gpu_nodes(store, SystemClock(), Scenario.model_validate(SMALL_FLEET))
    finally:
        await store.close()
