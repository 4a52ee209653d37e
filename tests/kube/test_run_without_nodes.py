"""`certification run` on an API server with no Node at all (no kubelet ever registered one) said "none of the 0 Nodes
matches the target", blaming the target: it says the cluster has no Nodes, in one line, exit 2, creating nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.planning.discovery import unmatched_reason
from tests.kube.cluster import certification_names, installed_in_thread
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster


def test_run_on_a_cluster_without_nodes_says_it_has_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db"),
                "--category", "communication/nccl-all-reduce"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        said = [line for line in err.splitlines() if line.strip()]
        assert len(said) == 1 and said[0].endswith(
            "the cluster has no Nodes at all (an API server without kubelets registers none): nothing to certify"), err
        assert "none of the 0 Nodes" not in err
        assert asyncio.run(certification_names(kubeconfig)) == []


def test_a_target_with_no_node_to_match_says_there_is_none() -> None:
    """What the engine's Workflow says of a certification applied with kubectl to such a cluster."""
    reason = unmatched_reason([], TargetSpec.model_validate({"nodeSelector": {"rack": "r9"}}))
    assert reason == "there is no Node at all: an API server without kubelets registers none"
