"""The wall's failures fit their pane: each cut at a word boundary with "…" (never mid-number), as many as its
height holds, and "+N more" in sight when some are left out (found by a console review: a fixed 120-character cut
mid-number, and a "... and N more" line below the screen with 11 of 32 failures shown)."""

from __future__ import annotations

import re
from pathlib import Path

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.fitted_list import Entry, FittedList, cut_at_word, fit

from .harness import reopen

DIAGNOSED = ("communication/nccl-all-reduce: ThresholdViolation: diagnose: faulty, failed 3 of 3 tests (r0-screen-1 at 265.4, "
             "r1-confirm-2 at 271.26, r4-confirm-2 at 243.54); Threshold \"busBandwidthGBps\" violated: measured 243.5400")
NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def test_a_long_reason_is_cut_at_a_word_never_mid_number() -> None:
    for width in range(32, 130):  # the longest word (30 characters) fits a line, with the indent
        for lines in (1, 2, 3):
            cut = cut_at_word(DIAGNOSED, width, lines, indent="  ")
            assert 1 <= len(cut) <= lines and all(len(line) <= width for line in cut), (width, lines, cut)
            words = " ".join(cut).split()
            if cut[-1].endswith("…"):
                words = words[:-1]
            assert words == DIAGNOSED.split()[: len(words)], (width, lines, cut)  # whole words, in order: no number cut
            assert all(NUMBERS.fullmatch(n) for w in words for n in NUMBERS.findall(w))
    assert cut_at_word("short", 40, 2) == ["short"]


def test_entries_fit_the_height_with_the_rest_counted() -> None:
    entries = [Entry("!", f"gpu-node-{i:02d}", DIAGNOSED) for i in range(32)]
    for height in range(1, 40):
        shown, left_out = fit(entries, 40, height, 3)
        assert len(shown) + left_out == 32
        assert sum(len(lines) for lines in shown) + (1 if left_out else 0) <= height
    assert fit(entries[:2], 300, 10, 3) == ([[f"! gpu-node-00  {DIAGNOSED}"], [f"! gpu-node-01  {DIAGNOSED}"]], 0)


async def test_the_wall_shows_what_fits_and_says_how_many_more(finished_diagnose_and_train: Path) -> None:
    for size in ((120, 40), (80, 24), (200, 50)):
        app = NvcreApp(session=await reopen(finished_diagnose_and_train), live=False, wall=True)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, WallScreen)
            pane = app.screen.query_one("#failures", FittedList)
            # the training's threshold out of reach first (test_a_threshold_out_of_reach_is_said_before_the_nodes_it_failed), then 32 nodes
            assert len(pane.entries) == 33 and pane.entries[0].subject == "training/nemotron5-8b", pane.entries[0]
            lines = str(pane.render()).split("\n")
            room = pane.content_size
            assert len(lines) <= room.height and all(len(line) <= room.width for line in lines), (size, room, lines)
            more = re.fullmatch(r"\+(\d+) more", lines[-1])
            assert more is not None, (size, lines)
            shown = [line for line in lines[1:-1] if not line.startswith("  ")]  # each entry's first line
            assert len(shown) + int(more.group(1)) == 33, (size, lines)
            assert re.match(r"✗ training/", lines[1]) and re.match(r"✗ gpu-node-07\b", next(line for line in lines[2:] if not line.startswith("  "))), (size, lines)  # failed first
            # The pane's last line is on the screen: nothing below the terminal.
            assert pane.content_region.bottom <= size[1]


def test_a_catalog_key_too_long_for_the_rest_of_a_line_ends_it_after_its_slash() -> None:
    """On 80 columns the wall's failure list broke "communication/ncc" / "l-all-reduce" (a review saw it)."""
    cut = cut_at_word("✗ gpu-node-14  communication/nccl-all-reduce: WorkloadFailed", 30, 3, indent="  ")
    assert cut == ["✗ gpu-node-14  communication/", "  nccl-all-reduce:", "  WorkloadFailed"]
    assert cut_at_word("a/b c", 30, 1) == ["a/b c"]  # whole where it fits


async def test_a_blamed_node_reads_as_in_the_failures_pane_reason_first(finished_intra_node: Path) -> None:
    """The wall listed the engine's long message (`ThresholdViolation: Threshold "busBandwidthGBps" violated: measured
    …`, its value cut off at 120 columns, `289.2680` at 200) where the failures pane says `busBandwidthGBps 289.27
    (value >= 300)`: the wall says the pane's reason and measured value."""
    for size in ((120, 40), (200, 60)):
        app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, WallScreen) and app.screen.current is not None
            snapshot = app.snapshot
            assert snapshot is not None
            rows = {row.node: row for row in failure_rows(snapshot, app.screen.current)}
            assert {"gpu-node-07", "gpu-node-12"} <= set(rows)
            pane = app.screen.query_one("#failures", FittedList)
            drawn = " ".join(line.strip() for line in str(pane.render()).split("\n"))
            for entry in pane.entries:
                row = rows[entry.subject]
                assert row.measured != "-" and entry.text.startswith(f"{row.reason}: {row.measured}"), (size, entry)
                assert f"{entry.subject}  {row.reason}: {row.measured}" in drawn, (size, drawn)
            assert not re.search(r"\d\.\d{3}", drawn), (size, drawn)  # the pane's precision, not the engine's 4 decimals


def test_a_failed_workload_is_said_by_its_reason_and_verdict_not_the_engine_message() -> None:
    """Found on the wall after diagnose-flaky-and-fabric: gpu-node-06's line was the engine's raw message ("... NCCL
    WARN NET/IB : Got completion from peer 10.0.53.212<53079> with status=12 opcode=0 len=0 vendor err 129 ..."),
    where the failures pane says WorkloadFailed."""
    from nvcre_tui.engine.views.failures import FailureRow
    from nvcre_tui.screens.wall import said

    raw = ("nccl output unreadable: no nccl-tests result rows: NCCL failed: 'gpu-node-06:86110:86117 [0] NCCL WARN NET/IB : Got "
           "completion from peer 10.0.53.212<53079> with status=12 opcode=0 len=0 vendor err 129 (Recv)'; a container of the workload "
           "exited with code 1 (Error)")
    diagnosed = f"diagnose: intermittent, failed 4 of 5 tests (r0-screen-1 WorkloadFailed, r1-confirm-1 WorkloadFailed); passed at 403.50; {raw}"
    category = "communication/nccl-all-reduce"
    row = FailureRow("gpu-node-06", category, "WorkloadFailed", "-", diagnosed, "wf", "job")
    assert said(row) == f"WorkloadFailed: intermittent, failed 4 of 5 tests · {category}"
    assert said(FailureRow("gpu-node-06", category, "WorkloadFailed", "-", raw, "wf", "job")) == \
        f"WorkloadFailed: nccl output unreadable: no nccl-tests result rows: NCCL failed · {category}"
    warn = ("gpu-node-02 GPU 0: NCCL WARN NET/IB : Got completion from peer 10.0.98.193<41508> with status=12 opcode=0 len=0 vendor err "
            "129 (Recv) localGid ::ffff:10.0.0.1; a container of the workload exited with code 1 (Error)")
    assert said(FailureRow("gpu-node-02", category, "WorkloadFailed", "-", warn, "wf", "job")) == \
        f"WorkloadFailed: gpu-node-02 GPU 0: NCCL WARN NET/IB · {category}"
    xid = ("memory failed on GPU 5: Xid 79 (GPU has fallen off the bus) detected; the GPU is not accessible (and 1 more failures); a "
           "container of the workload exited with code 1 (Error)")  # what an operator reads first stays
    assert said(FailureRow("gpu-node-02", "diagnostics/dcgm-level4", "WorkloadFailed", "-", xid, "wf", "job")) == \
        "WorkloadFailed: memory failed on GPU 5: Xid 79 (GPU has fallen off the bus) detected · diagnostics/dcgm-level4"
    # Other reasons keep their message (an operator's words: the timeout, the XID), a measured value its value.
    timeout = FailureRow("gpu-node-02", category, "Timeout", "-", "no result within timeoutPerJob 3m (ran 3m00s)", "wf", None)
    assert said(timeout) == f"Timeout: no result within timeoutPerJob 3m (ran 3m00s) · {category}"
    # Blamed by three categories: the wall named the first alone where the failures pane reads "... +2".
    thrice = FailureRow("gpu-node-02", category, "Timeout", "-", "no result within timeoutPerJob 3m (ran 3m00s)", "wf", None,
                        also=("communication/nccl-all-gather", "diagnostics/dcgm-level4"))
    assert said(thrice) == f"Timeout: no result within timeoutPerJob 3m (ran 3m00s) · {category} +2" == \
        f"Timeout: no result within timeoutPerJob 3m (ran 3m00s) · {thrice.categories_said}"


async def test_a_threshold_out_of_reach_is_said_before_the_nodes_it_failed() -> None:
    """GB200 figures on the H100 fleet: every node alone misses `value >= 900` (the best 483 GB/s) and is blamed. The
    wall listed 32 ✗ nodes, "busBandwidthGBps 479.58 …" each on 80 columns: a fleet-wide failure to the room, while the
    drill-down says first under the category that the threshold is above anything measured. The wall says it first too,
    in sight on 80 columns."""
    from .harness import session_with

    session = await session_with(intra_all_reduce_against("gb200", 900))
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        entries = app.screen.query_one("#failures", FittedList).entries
        assert entries[0].subject == "communication/nccl-all-reduce", entries[:2]
        assert entries[0].text.startswith("threshold value >= 900 is above anything measured on this fleet: best "), entries[0]
        assert [entry.subject for entry in entries[1:]] == [f"gpu-node-{i:02d}" for i in range(1, 33)]  # the nodes still listed
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        said = " ".join(" ".join(line.rpartition("│")[2].split()) for line in lines if "│" in line)
        assert "Failures ✗ communication/ nccl-all-reduce threshold value >= 900 is above" in said, said
    app = NvcreApp(session=await session_with(intra_all_reduce_against("h100", 400)), live=False, wall=True)
    async with app.run_test(size=(80, 24)) as pilot:  # within reach (gpu-node-07 alone misses it): nodes only
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        assert [entry.subject for entry in app.screen.query_one("#failures", FittedList).entries] == ["gpu-node-07"]


def intra_all_reduce_against(name: str, gbps: int) -> str:
    from .harness import intra_all_reduce

    return intra_all_reduce(name).replace("value >= 400", f"value >= {gbps}")


async def test_a_threshold_out_of_reach_names_a_category_run_twice_as_the_failures_pane_does() -> None:
    from .harness import session_with
    from .test_drilldown import TWICE

    session = await session_with(TWICE.replace("value >= 400", "value >= 900").replace("value >= 300", "value >= 950"))
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        entries = app.screen.query_one("#failures", FittedList).entries
        assert [(entry.subject, entry.text.split(" is above")[0]) for entry in entries[:2]] == [
            ("communication/nccl-all-reduce #1", "threshold value >= 900"), ("communication/nccl-all-reduce #2", "threshold value >= 950")], entries[:2]
