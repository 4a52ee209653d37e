"""The scenario, nodes-file and state-file corpora: each file gives exit code 2 and one line naming the
file and what is wrong (and where inside it), no traceback, and no file changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).parent / "corpus"
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


def _corpus(folder: str) -> tuple[dict[str, str], list[Path]]:
    expected = yaml.safe_load((CORPUS / folder / "expected-messages.yaml").read_text())
    return expected, sorted(p for p in (CORPUS / folder).iterdir() if p.name[:2].isdigit())


SCENARIOS, SCENARIO_FILES = _corpus("scenarios")
NODES, NODE_FILES = _corpus("nodes")
STATES, STATE_FILES = _corpus("state")


@pytest.mark.parametrize("folder", ["scenarios", "nodes", "state"])
def test_every_corpus_file_is_described(folder: str) -> None:
    expected, files = _corpus(folder)
    assert len(files) >= 12
    assert sorted(expected) == [f.name for f in files]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_scenario_is_refused_by_render_and_run(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "render", BURN_IN, "--scenario", str(path)]) == 2
    assert _one_line(capsys) == f"{path}{SCENARIOS[path.name]}"
    state = tmp_path / "state.json"
    assert main(["certification", "run", "--cert-file", BURN_IN, "--scenario", str(path), "--state", str(state), "--wait"]) == 2
    assert _one_line(capsys) == f"{path}{SCENARIOS[path.name]}"
    assert not state.exists()


@pytest.mark.parametrize("path", NODE_FILES, ids=lambda p: p.stem)
def test_nodes_file_is_refused(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "render", BURN_IN, "--nodes", str(path)]) == 2
    assert _one_line(capsys) == f"{path}{NODES[path.name]}"


@pytest.mark.parametrize("path", NODE_FILES, ids=lambda p: p.stem)
def test_nodes_file_is_refused_by_history(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`history nodes --nodes` judges staleness against the file: a nodeInfo that is a list crashed it (exit 70)."""
    history = tmp_path / "h.db"
    from nvcre_tui.engine.history import open_history

    open_history(history).close()
    assert main(["history", "nodes", "--history", str(history), "--nodes", str(path)]) == 2
    assert _one_line(capsys) == f"{path}{NODES[path.name]}"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("path", STATE_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("command", ["report", "run", "console"])
def test_damaged_state_is_one_line_and_left_alone(path: Path, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / path.name
    shutil.copy(path, state)
    before = _files(tmp_path)
    argv = {
        "report": ["certification", "report", "c", "--state", str(state)],
        "run": ["certification", "run", "--cert-file", BURN_IN, "--state", str(state), "--wait"],
        "console": ["--state", str(state)],  # refused before the screen is taken over
    }[command]
    assert main(argv) == 2
    assert _one_line(capsys) == f"{state}{STATES[path.name]}"
    assert _files(tmp_path) == before  # not rewritten, no temporary file left


def test_a_node_of_a_current_cluster_is_taken_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kubectl get nodes -o yaml` from Kubernetes 1.30 on states nodeInfo.swap as an object: not bad input."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump({"items": [{
        "metadata": {"name": f"gpu-{index}", "labels": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
        "status": {"allocatable": {"nvidia.com/gpu": "8"}, "nodeInfo": {"kernelVersion": "6.8.0", "swap": {"capacity": 0}}}}
        for index in range(2)]}))
    assert main(["certification", "render", BURN_IN, "--nodes", str(nodes)]) == 0, capsys.readouterr().err
