"""`certification logs` of a run that failed before its workload started, on an API server alone with the Trainer's
CRDs and no JobSet CRD (the run fails at once, WorkloadNotCreated): it said "No output: the run failed, and neither its
pods nor its Job hold any line of its log.", which reads as a log lost, where no pod was ever made. It now says that the
run failed before its workload started, with the run's reason, and why (the run's own message).

Run on the emulator, and on a real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped without)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.kube.bare import SERVERS, Bare, bare_server, trainer_without_jobset
from tests.kube.cluster import first_node
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster


@pytest.fixture(params=SERVERS)
def bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


@pytest.mark.parametrize("follow", [[], ["--follow"]], ids=["once", "follow"])
def test_logs_of_a_run_whose_workload_was_never_made_say_so_and_why(bare: Bare, capsys: pytest.CaptureFixture[str],
                                                                   follow: list[str]) -> None:
    """The Trainer's CRDs without JobSet's: the run fails at once (WorkloadNotCreated) and no pod ever printed a line;
    read once or followed, the log says so."""
    kubeconfig = bare.kubeconfig
    asyncio.run(trainer_without_jobset(kubeconfig))
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "refused", "--wait"]) == 1
    capsys.readouterr()
    node = asyncio.run(first_node(kubeconfig))
    assert main(["certification", "logs", "refused", "--node", node, *follow, "--kubeconfig", str(kubeconfig)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("No output: the run failed before its workload started (WorkloadNotCreated), so it "
                                        "printed nothing. Why: "), err
    if follow:
        return
    assert "neither its pods nor its Job hold any line" not in err, err
    assert err.startswith("No output: the run failed before its workload started (WorkloadNotCreated), so it printed nothing. "
                          "Why: Kubeflow Trainer's TrainJob is served but JobSet"), err
    assert err.count("\n") == 1, err


def test_logs_of_a_certification_none_of_whose_workloads_started_lists_no_job_to_pick(bare: Bare,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`certification logs NAME` listed its one Job as having a log and said "Pick one: ... --job JOB" (exit 2), whose
    log then said there was none: it says at once that none of its workloads started, naming the Job and its reason."""
    kubeconfig = bare.kubeconfig
    asyncio.run(trainer_without_jobset(kubeconfig))
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "refused", "--wait"]) == 1
    capsys.readouterr()
    assert main(["certification", "logs", "refused", "--kubeconfig", str(kubeconfig)]) == 0
    out, err = capsys.readouterr()
    assert out == "", out
    assert err == ("No job of certification refused has a log: none of its workloads started "
                   "(refused-communication-nccl-all-reduce-job: WorkloadNotCreated).\n"), err
