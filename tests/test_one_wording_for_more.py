"""A list of names cut short says what it left out in one wording, units.listed's ("a, b, c and 2 more"). Two messages
added on one day spelled it each their own way: `setup status`'s unlabelled GPU Nodes ("a, b, c, +2 more") and `logs
NAME` of a certification none of whose workloads started ("..., and 2 more")."""

from __future__ import annotations

from nvcre_tui.cli.logs import JobEntry, none_started
from nvcre_tui.cli.status_rows import unlabelled_said


def _never_started(name: str) -> JobEntry:
    return JobEntry("communication/nccl-all-reduce", "communication/nccl-all-reduce",
                    {"metadata": {"name": name}, "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "WorkloadNotCreated"}]}})


def test_unlabelled_gpu_nodes_past_three_say_how_many_more_as_every_list_does() -> None:
    assert unlabelled_said(["gpu-1", "gpu-2"]) == "2 (gpu-1, gpu-2)"
    assert unlabelled_said([f"gpu-{n}" for n in range(1, 6)]) == "5 (gpu-1, gpu-2, gpu-3 and 2 more)"


def test_jobs_none_of_which_started_past_three_say_how_many_more_as_every_list_does() -> None:
    said = none_started("c1", [_never_started(f"c1-job-{n}") for n in range(5)])
    assert said == ("No job of certification c1 has a log: none of its workloads started (c1-job-0: WorkloadNotCreated, "
                    "c1-job-1: WorkloadNotCreated, c1-job-2: WorkloadNotCreated and 2 more)."), said
