"""The engine's runner tick that fails (here the simulated fleet's timed cordon, whose Node update the API server
refuses) is retried with backoff and logged at each retry by `nvcre controller`; `certification run --wait` said it
nowhere, so the run went on as if the cordon had happened. It says it once while it follows, not once per retry."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main
from tests.kube.cluster import installed_in_thread
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kubeapi.faults import Fault

CASE = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "cordon-during-first-category"


def test_a_runner_tick_that_keeps_failing_is_said_once_while_run_waits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        refused = server.faults.add(Fault(method="PUT", path=r"^/api/v1/nodes/gpu-node-02$", status=403,
                                          message='nodes "gpu-node-02" is forbidden: injected'))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(CASE / "scenario.yaml"),
                     "--cert-file", str(CASE / "cert.yaml"), "--wait", "--history", str(tmp_path / "h.db")])
        out, err = capsys.readouterr()
    assert code in (0, 1) and "Certification Report" in out, err
    assert refused.hits >= 3, refused.hits  # retried, with backoff, while the run went on
    said = [line for line in err.splitlines() if "runner tick failed" in line]
    assert len(said) == 1, err
    # what failed and where, in words: it read `runner tick failed: Forbidden: ...`, a Python class name
    assert said[0] == ('nvcre: runner tick failed: Node gpu-node-02: nodes "gpu-node-02" is forbidden: injected '
                       "(retried with backoff; said once)"), said
    assert err.index(said[0]) < err.index("[watch] Certification"), err  # while it followed, before the end


def test_the_scenario_cordons_when_nothing_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same run, nothing refused: no such line (the check above is not met by any run)."""
    assert yaml.safe_load((CASE / "scenario.yaml").read_text())["faults"][0]["type"] == "cordon"
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(CASE / "scenario.yaml"),
              "--cert-file", str(CASE / "cert.yaml"), "--wait", "--history", str(tmp_path / "h.db")])
        err = capsys.readouterr().err
    assert "runner tick failed" not in err and "Traceback" not in err


async def test_the_console_notifies_a_failing_runner_tick_once(tmp_path: Path) -> None:
    """The console running the engine: the runner tick's failure reaches it as one of the session's notices, one
    notification for every retry; it said nothing."""
    from nvcre_tui.app import NvcreApp
    from tests.kube.cluster import installed
    from tests.kube.test_console_on_cluster import args_for, opened, opener

    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"name": "cordoned-soon", "seed": 3, "speed": 60.0, "nodes": [{"count": 2, "cliques": 1}],
                                        "faults": [{"type": "cordon", "node": "gpu-node-02", "at": "10s"}]}))
    async with installed(tmp_path) as (server, kubeconfig):
        refused = server.faults.add(Fault(method="PUT", path=r"^/api/v1/nodes/gpu-node-02$", status=403,
                                          message='nodes "gpu-node-02" is forbidden: injected'))
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True, scenario=str(scenario)), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.session.engine is not None
            def said() -> list[str]:
                return [str(n.message) for n in app._notifications if "runner tick failed" in str(n.message)]

            # Conditions, not durations: told once the retries began, and still once after three more of them.
            for _ in range(600):
                if refused.hits >= 3 and said():
                    break
                await pilot.pause(0.05)
            seen = refused.hits
            for _ in range(600):
                if refused.hits >= seen + 3:
                    break
                await pilot.pause(0.05)
            await pilot.pause()  # the notices of those retries, had they been told again
            assert refused.hits >= seen + 3 and len(said()) == 1, (seen, refused.hits, said())
            assert 'nodes "gpu-node-02" is forbidden' in said()[0]


def test_a_certification_whose_failure_cannot_be_written_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The API server refuses every status write of one certification (RBAC, an admission webhook): its reconcile fails
    (Forbidden is no transient error), then so does the write of that failure, and the engine said nothing, not even in
    `nvcre controller`'s log: `run --wait` waited to its timeout over a certification that never moved. Now the engine
    logs it and tells it once."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        refused = server.faults.add(Fault(method="PUT|PATCH", path=r"/certifications/stuck/status$", status=403,
                                          message='certifications.nvcre.nvidia.com "stuck" is forbidden: injected'))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(CASE / "scenario.yaml"),
                     "--cert-file", str(CASE / "cert.yaml"), "--name", "stuck", "--wait", "--timeout", "10m",
                     "--history", str(tmp_path / "h.db")])
        err = capsys.readouterr().err
    assert code == 3 and refused.hits >= 2, (code, refused.hits, err)
    said = [line for line in err.splitlines() if "could not be written" in line]
    assert len(said) == 1, err
    # a sentence naming the object and the refused write: it read `its reconcile failed (Forbidden: ...)`
    assert said[0] == ('nvcre: reconciling Certification default/stuck failed: certifications.nvcre.nvidia.com "stuck" is '
                       "forbidden: injected, and that failure could not be written: Certification default/stuck: "
                       'certifications.nvcre.nvidia.com "stuck" is forbidden: injected; it stays as it is until it changes'), said
