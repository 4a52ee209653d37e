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


def test_render_n_renders_in_that_namespace_and_refuses_another_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`-n team1` puts the Workflows in team1, as `run -n team1` would; a file naming another namespace is refused alike."""
    import yaml

    assert main(["certification", "render", str(ROOT / "examples" / "certification.yaml"), "-n", "team1"]) == 0
    documents = list(yaml.safe_load_all(capsys.readouterr().out))
    assert documents and {d["metadata"]["namespace"] for d in documents} == {"team1"}
    cert = tmp_path / "cert.yaml"
    cert.write_text((ROOT / "examples" / "certification.yaml").read_text().replace("metadata:\n", "metadata:\n  namespace: team2\n", 1))
    assert main(["certification", "render", str(cert), "-n", "team1"]) == 2
    assert capsys.readouterr().err.strip() == (f"{cert}: metadata.namespace 'team2' does not match -n 'team1': "
                                                "pass -n team2, or leave the namespace out of the file")


def test_the_install_namespace_is_checked_on_the_simulator_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "list", "--sim", "--state", str(tmp_path / "s.db"), "--install-namespace", "B A D"]) == 2
    assert capsys.readouterr().err.startswith("--install-namespace: must be a lowercase DNS label")
