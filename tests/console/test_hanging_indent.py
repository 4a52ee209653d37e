"""The drill-down's and the node screen's detail wrap a long value under the value (a hanging indent), not at the
pane's left edge under the keys: on 80x24 a fault's Diagnosis and a node's Why went on at column 0 and read as lines
of their own (found driving a diagnosis's drill-down at 80x24). The node screen's summary, a few lines high, wraps them
2 columns in: under the value, its Why took a line more than its pane shows on 80x24."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.detail import LABEL_WIDTH, label
from nvcre_tui.widgets.hanging import hanging

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, open_drilldown, open_node_screen, reopen, session_with


def test_a_label_wraps_under_its_value_and_an_indented_line_under_its_first_word() -> None:
    text = Text()
    label(text, "Verdict", "gpu-node-03  suspect, failed 3 of 3 tests (r0-screen-1 at 240.45, r1-confirm-0 at 243.98)")
    text.append("  ✗ r0-screen-1 (screening) with gpu-node-04, gpu-node-05, gpu-node-06  240.45 GB/s\n")
    lines = hanging(text, 50).plain.splitlines()
    assert lines[0].startswith("Verdict ") and all(len(line) <= 50 for line in lines), lines
    bullet = lines.index(next(line for line in lines if line.startswith("  ✗")))
    verdict, test = lines[1:bullet], lines[bullet + 1:]
    assert verdict and all(line.startswith(" " * LABEL_WIDTH) and line[LABEL_WIDTH] != " " for line in verdict), lines
    assert test and all(line.startswith("    ") and line[4] != " " for line in test), lines
    assert " ".join(" ".join(lines).split()) == " ".join(text.plain.split())  # nothing lost


def region_lines(app: NvcreApp, selector: str) -> list[str]:
    region = app.screen.query_one(selector).content_region
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    return [line[region.x : region.right].rstrip() for line in lines[region.y : region.bottom]]


async def test_the_drilldown_and_node_screen_wrap_values_under_their_values_at_80_columns() -> None:
    app = NvcreApp(session=await session_with(DIAGNOSE, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_drilldown(app, pilot, "isolate")  # opens on the fault: its Diagnosis wraps on 80 columns
        await pilot.pause()
        lines = region_lines(app, "#detail")
        at = next(i for i, line in enumerate(lines) if line.startswith("Diagnosis "))
        assert lines[at + 1].startswith(" " * LABEL_WIDTH) and lines[at + 1].strip(), lines
        evidence = next(i for i, line in enumerate(lines) if line.startswith("  ✗ ") and not line.endswith("GB/s"))
        assert lines[evidence + 1].startswith("    ") and lines[evidence + 1][4] != " ", lines
        await pilot.press("escape")
        await open_node_screen(app, pilot, "gpu-node-03")
        lines = region_lines(app, "#summary")  # a pane a few lines high: its values wrap 2 columns in, off the keys
        at = next(i for i, line in enumerate(lines) if line.startswith("Why "))
        assert lines[at + 1].startswith("  ") and lines[at + 1][2] != " ", lines


def test_a_catalog_key_too_long_for_its_line_breaks_after_its_slash_never_mid_word() -> None:
    """A 120-column drill-down's detail (44 columns) broke a fault's Category mid-word: "communication/nccl-all-r" over
    "educe". It breaks after the "/" now, as the failures pane and the wall do."""
    text = Text()
    label(text, "Category", "communication/nccl-all-reduce")
    lines = hanging(text, 42).plain.splitlines()
    assert [line.strip() for line in lines] == ["Category          communication/", "nccl-all-reduce"], lines
    assert all(len(line) <= 42 for line in lines), lines


async def test_the_fault_detail_of_a_120_column_drill_down_keeps_its_category_whole(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_drilldown(app, pilot, "isolate")  # opens on the fault
        await pilot.pause()
        lines = region_lines(app, "#detail")
        assert lines[0].startswith("Fault "), lines
        words = " ".join(lines).split()
        assert "communication/nccl-all-reduce" in "".join(words) and not any(w.endswith("nccl-all-r") for w in words), lines
        start = next(i for i, line in enumerate(lines) if line.startswith("Category"))
        assert lines[start].rstrip().endswith(("communication/", "communication/nccl-all-reduce")), lines


def test_a_unit_stays_whole_where_a_line_ends_beside_it() -> None:
    """A value with its unit ("264.81 GB/s") broke after the unit's "/" as after a catalog key's: "measured 264.81 GB/"
    over "s, expected value >= 400" in the drill-down's detail; "communication/" still ends a line."""
    text = Text("  busBandwidthGBps: measured 264.81 GB/s, expected value >= 400  ✗ ThresholdViolated")
    lines = hanging(text, 40).plain.splitlines()
    assert lines[0].rstrip() == "  busBandwidthGBps: measured 264.81" and lines[1].strip().startswith("GB/s, expected"), lines
    tflops = hanging(Text("  avgTFLOPsPerGPU: measured 315.32 TFLOP/s"), 38).plain.splitlines()
    assert tflops[1].strip() == "TFLOP/s", tflops
    assert hanging(Text("Category communication/nccl-all-reduce"), 24).plain.splitlines()[0] == "Category communication/"


def test_a_long_hyphenated_name_breaks_after_a_hyphen_between_letters_and_a_range_of_numbers_stays_whole() -> None:
    """An 80-column drill-down's category detail broke its Workflow's name mid-word: "...-nccl-all-red" over "uce"."""
    text = Text()
    label(text, "Category", "diagnose-threshold-out-of-reach-communication-nccl-all-reduce")
    label(text, "Measured", "busBandwidthGBps 185.22-185.99 in 2 tests (value >= -3)")
    lines = hanging(text, 58).plain.splitlines()
    assert all(len(line) <= 58 for line in lines), lines
    assert lines[0].endswith("-") and lines[1].strip()[0].isalpha(), lines  # at a hyphen, between two words
    assert "185.22-185.99" in "".join(lines) and ">= -3" in " ".join(lines), lines
    assert (lines[0] + lines[1].strip()).split(None, 1)[1] == "diagnose-threshold-out-of-reach-communication-nccl-all-reduce", lines
