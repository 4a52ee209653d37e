"""`certification render` plans offline on the embedded fleet unless told otherwise; with a cluster configured it says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("configured", [True, False])
def test_render_says_it_planned_on_the_simulated_fleet_when_a_cluster_is_configured(
        configured: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if configured:
        (tmp_path / ".kube").mkdir()
        (tmp_path / ".kube" / "config").write_text("apiVersion: v1\nkind: Config\n")
    assert main(["certification", "render", str(ROOT / "examples" / "certification.yaml")]) == 0
    err = capsys.readouterr().err
    assert "planned offline on the embedded simulated fleet (32 nodes" in err  # its AWS settings are not yours
    assert ("--kubeconfig or --context plans on its Nodes" in err) == configured and ("--nodes FILE" in err) != configured
