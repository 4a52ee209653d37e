"""`onFailure: diagnose` on an API server alone: every group fails before its workload starts, so the diagnosis does
not start (it would narrow nodes no test measured); the engine said so only in a Warning Event on the Workflow
(DiagnosisSkipped), and the report showed no diagnosis and no word why, as if the option had been ignored. The report
now says it did not start and why (text `Diagnosis: not started: ...`, JSON `diagnoseNotStarted`).

Run on the emulator, and on a real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped without)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.kube.bare import SERVERS, Bare, bare_server, trainer_without_jobset
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster

CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: onfail}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, onFailure: diagnose}
"""


@pytest.fixture(params=SERVERS)
def bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


def test_a_diagnosis_on_failure_that_could_not_start_says_why_in_the_report(bare: Bare, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = bare.kubeconfig
    asyncio.run(trainer_without_jobset(kubeconfig))  # every run fails at once: WorkloadNotCreated
    (tmp_path / "cert.yaml").write_text(CERT)
    flags = ["--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", "--cert-file", str(tmp_path / "cert.yaml"), "--wait", *flags]) == 1
    out = capsys.readouterr().out
    said = [line for line in out.splitlines() if "Diagnosis:" in line]
    assert len(said) == 1, out
    assert said[0].startswith("│ Diagnosis:      not started: group group-0 was not tested (WorkloadNotCreated)"), said
    assert main(["certification", "report", "onfail", "-o", "json", "--kubeconfig", str(kubeconfig)]) == 1
    category = json.loads(capsys.readouterr().out)["categories"][0]
    assert "diagnose" not in category, category
    assert category["diagnoseNotStarted"].startswith("group group-0 was not tested (WorkloadNotCreated)"), category
    assert main(["certification", "report", "onfail", "-o", "html", "--kubeconfig", str(kubeconfig)]) == 1
    assert "Diagnosis: not started: group group-0 was not tested (WorkloadNotCreated)" in capsys.readouterr().out
