"""Launcher prefixes: kubelet timestamps, mpirun tags and srun labels, alone or mixed, as text and as tokens."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from nvcre_tui.engine.parsers import parse_dcgm, parse_nccl, parse_training
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.parsers.prefixes import prefix_tokens, split_line_prefixes
from tests.parsers.golden import fixture_text

STAMP = "2026-03-02T10:15:04.123456789Z"


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        ("0: # Out of bounds values : 0 OK", "# Out of bounds values : 0 OK"),
        ("  17: #  Rank  0 Group", "#  Rank  0 Group"),
        ("[1,0]<stdout>:0: x", "x"),
        (f"{STAMP} 3: [1,3]<stderr>:host:1:2 [3] NCCL WARN", "host:1:2 [3] NCCL WARN"),
        ("[2026-03-02 11:42:07.513201] iteration 40/ 50 |", "[2026-03-02 11:42:07.513201] iteration 40/ 50 |"),
        ("     1048576        262144     float", "     1048576        262144     float"),
        ("10.0.0.1: not a label", "10.0.0.1: not a label"),
        ("[0] # Out of bounds values : 0 OK", "# Out of bounds values : 0 OK"),  # mpirun -prepend-rank (MPICH, Intel MPI)
        (f"{STAMP} [12]      1024   -1[12]    5.0", "     1024   -1     5.0"),  # its copies before later writes
        ("[0x18] NVIDIA H100", "[0x18] NVIDIA H100"),
        (f"[pod/nccl-launcher-7xq2z/mpi-launcher] {STAMP} [1,0]<stdout>:# Avg", "# Avg"),  # kubectl logs --prefix
        ("[pod/Upper/c] x", "[pod/Upper/c] x"),  # no DNS name: not kubectl's
        ("[default3]:Fatal Python error: Segmentation fault", "Fatal Python error: Segmentation fault"),  # torchrun --tee
        ("[default0]:[rank0]: Traceback (most recent call last):", "[rank0]: Traceback (most recent call last):"),
        ("[rank0]: RuntimeError: boom", "[rank0]: RuntimeError: boom"),  # PyTorch's own: which rank failed, kept
    ],
)
def test_text_prefixes_in_any_mix(line: str, rest: str) -> None:
    assert split_line_prefixes(line)[1] == rest


def test_the_kubelet_time_is_kept_whatever_comes_around_it() -> None:
    when, rest = split_line_prefixes(f"0: {STAMP} payload")
    assert rest == "payload" and when is not None and when.tzinfo == timezone.utc
    assert when.replace(microsecond=0) == datetime(2026, 3, 2, 10, 15, 4, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("tokens", "count", "first"),
    [
        ([STAMP, "0:", "1024"], 2, "1024"),
        (["[1,0]<stdout>:#", "size"], 0, "#"),  # a glued tag is cut off in place
        (["[1,0]<stdout>:123456789012", "3"], 0, "123456789012"),
        (["gpu-n01:4101:4160", "[0]", "NCCL"], 0, "gpu-n01:4101:4160"),
        (["[3]", "8", "-1[3]", "5.0", "0[3]", "4.9"], 1, "8"),
        (["[pod/nccl-worker-1/node]", STAMP, "1024"], 2, "1024"),
        (["[default0]:#", "size"], 0, "#"),  # torchrun --tee, glued
        (["[default0]:", "1024"], 1, "1024"),
    ],
)
def test_token_prefixes(tokens: list[str], count: int, first: str) -> None:
    assert prefix_tokens(tokens) == count and tokens[count] == first


def test_a_rank_tag_glued_to_cells_is_cut_out_of_every_token() -> None:
    tokens = ["[3]", "1048576", "262144", "float", "sum", "-1[3]", "1626.5", "0.64", "1.24", "0[3]", "2302.3"]
    assert prefix_tokens(tokens) == 1
    assert tokens[1:] == ["1048576", "262144", "float", "sum", "-1", "1626.5", "0.64", "1.24", "0", "2302.3"]


def kubectl_prefixed(text: str, stamps: bool) -> str:
    """`text` as `kubectl logs --prefix [--timestamps]` prints it: the source first, then the kubelet time."""
    stamp = f"{STAMP} " if stamps else ""
    return "".join(f"[pod/nccl-tests-launcher-7xq2z/mpi-launcher] {stamp}{line}" for line in text.splitlines(keepends=True))


@pytest.mark.parametrize("stamps", [False, True])
@pytest.mark.parametrize("max_rows", [2048, 0])
def test_kubectl_logs_prefix_reads_as_the_bare_log(stamps: bool, max_rows: int) -> None:
    """`kubectl logs -l ... --prefix` (as NVIDIA's AICR docs tell users to read NCCL workers) put
    "[pod/NAME/CONTAINER] " before every line: nccl-tests read no row and dcgmi no table (NoDataCollected, WrongFormat)."""
    bare = fixture_text("nccl_real_eks_mpijob_launcher.txt")
    expected = parse_nccl(bare, max_rows=max_rows)
    result = parse_nccl(kubectl_prefixed(bare, stamps), max_rows=max_rows)
    assert result.measurements() == expected.measurements() == {BUS_BANDWIDTH: 437.79, "algBandwidthGBps": 233.49}
    assert (result.row_count, result.avg_bus_bandwidth, result.out_of_bounds, result.incomplete) == (7, 52.9753, 0, None)
    table = fixture_text("dcgm_table_4x_pcie_fail.txt")
    assert parse_dcgm(kubectl_prefixed(table, stamps)).to_dict() == parse_dcgm(table).to_dict()


def test_torchrun_tee_prefix_reads_as_the_bare_log() -> None:
    """`torchrun --tee 3` relays each worker's lines behind "[default{local_rank}]:" (pytorch/pytorch#75087 shows it
    on a crash). The error after a run's last step went unseen behind it (PyTorch's "[rank0]: " follows the tee's), so
    a run that failed after its last step read whole; and nccl-tests read no row (NoDataCollected)."""
    steps = fixture_text("training_real_megatron_mixtral_moe.log").replace("73/     100", "100/     100")
    crash = ("[rank0]: Traceback (most recent call last):\n"
             "[rank0]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n")
    tee = "".join(f"[default0]:{line}" for line in (steps + crash).splitlines(keepends=True))
    bare, teed = parse_training(steps + crash), parse_training(tee)
    assert bare.incomplete is not None and "failed after its last step (100 of 100)" in bare.incomplete
    assert (teed.incomplete, teed.measurements()) == (bare.incomplete, bare.measurements())
    nccl = "".join(f"[default0]:{line.removeprefix('[1,0]<stdout>:')}"
                   for line in fixture_text("nccl_real_eks_mpijob_launcher.txt").splitlines(keepends=True))
    for max_rows in (2048, 0):
        assert parse_nccl(nccl, max_rows=max_rows).measurements() == {BUS_BANDWIDTH: 437.79, "algBandwidthGBps": 233.49}
