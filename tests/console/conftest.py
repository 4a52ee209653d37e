"""Console tests: no animations, no cursor blink, a fixed terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import DIAGNOSE, DIAGNOSE_AND_TRAIN, EXAMPLE, FABRIC_AND_SLOW_GPU, INTRA_NODE, LINK_FAULTS, save_finished


@pytest.fixture(autouse=True)
def _quiet_console(monkeypatch: pytest.MonkeyPatch) -> None:
    import textual.constants

    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")  # read at import: patch the constant too
    monkeypatch.setattr("textual.widgets._input.Input._toggle_cursor", lambda self: None, raising=False)


@pytest.fixture(scope="session")
def finished_intra_node(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """INTRA_NODE run to its end once per test session and saved; tests reopen it (`harness.reopen`),
    which costs milliseconds instead of re-running the engine (gpu-node-07 and gpu-node-12 fail)."""
    return save_finished(tmp_path_factory.mktemp("finished") / "intra-node.json", INTRA_NODE)


@pytest.fixture(scope="session")
def finished_intra_node_and_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """INTRA_NODE and examples/certification.yaml, both finished (the dashboard with two rows)."""
    return save_finished(tmp_path_factory.mktemp("finished") / "intra-node-example.json", INTRA_NODE, EXAMPLE)


@pytest.fixture(scope="session")
def finished_link_faults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIAGNOSE on the LINK_FAULTS fleet, finished: no node is faulty; the diagnosis names the degraded link between
    clique-0 and clique-1 and clique-3's uplink, and clears the nodes its tests across cliques blamed first.
    Reopen it with `reopen(path, scenario=LINK_FAULTS)`."""
    return save_finished(tmp_path_factory.mktemp("finished") / "link-faults.json", DIAGNOSE, scenario=LINK_FAULTS)


@pytest.fixture(scope="session")
def finished_diagnose(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIAGNOSE on the default fleet, finished: gpu-node-07 and gpu-node-12 faulty, the others of their screening
    groups cleared."""
    return save_finished(tmp_path_factory.mktemp("finished") / "diagnose.json", DIAGNOSE)


@pytest.fixture(scope="session")
def finished_diagnose_and_train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIAGNOSE_AND_TRAIN finished: gpu-node-07 and gpu-node-12 failed (the diagnosis), the other 30 suspect (training)."""
    return save_finished(tmp_path_factory.mktemp("finished") / "diagnose-and-train.json", DIAGNOSE_AND_TRAIN)


@pytest.fixture(scope="session")
def finished_fabric_and_slow_gpu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIAGNOSE on the FABRIC_AND_SLOW_GPU fleet, finished: gpu-node-03 faulty, the clique-0 ↔ clique-1 link named,
    gpu-node-04 cleared. Reopen it with `reopen(path, scenario=FABRIC_AND_SLOW_GPU)`."""
    return save_finished(tmp_path_factory.mktemp("finished") / "fabric-and-slow-gpu.json", DIAGNOSE, scenario=FABRIC_AND_SLOW_GPU)
