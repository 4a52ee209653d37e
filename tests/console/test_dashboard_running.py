"""The dashboard's Running column fits whole category names and counts the rest ("+2"): on 80 columns it read
`nccl-all-reduce, ncc`, hiding nccl-all-gather and dcgm-level4 (a review saw it during a burn-in)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from nvcre_tui.app import NvcreApp

from .harness import session_run_for, session_with

# Three categories on three cliques: disjoint nodes, so the three run at once.
THREE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: three}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, target: {nodeSelector: {nvidia.com/gpu.clique: clique-0}}, options: {testScale: intra-node}}
    - {domain: communication, variant: nccl-all-gather, target: {nodeSelector: {nvidia.com/gpu.clique: clique-1}}, options: {testScale: intra-node}}
    - {domain: diagnostics, variant: dcgm-level4, target: {nodeSelector: {nvidia.com/gpu.clique: clique-2}}}
"""
NAMES = ["nccl-all-reduce", "nccl-all-gather", "dcgm-level4"]


def test_names_fit_whole_and_the_rest_is_counted() -> None:
    from nvcre_tui.screens.dashboard import fit_names

    assert fit_names(NAMES, 100) == "nccl-all-reduce, nccl-all-gather, dcgm-level4"
    assert fit_names(NAMES, 45) == "nccl-all-reduce, nccl-all-gather, dcgm-level4"
    assert fit_names(NAMES, 44) == "nccl-all-reduce, nccl-all-gather, +1"
    assert fit_names(NAMES, 35) == "nccl-all-reduce, +2"
    assert fit_names(NAMES, 19) == "nccl-all-reduce, +2"
    assert fit_names(NAMES, 18) == "nccl-all-redu…, +2"  # no name whole: the first one cut, said so
    assert fit_names(NAMES, 8) == "+3"  # not even 4 cells of it
    assert fit_names(["· nccl-all-reduce"], 17) == "· nccl-all-reduce"
    assert fit_names(["· nccl-all-reduce"], 15) == "· nccl-all-red…"  # it said "+1" beside a long certification name
    assert fit_names([], 10) == ""


def running_cell(app: NvcreApp) -> tuple[str, str]:
    """The Running cell as the table holds it, and the screen line of its row."""
    table = app.screen.query_one("#certs", DataTable)
    cell = str(table.get_row("three")[-1])
    line = next(strip.text.rstrip() for strip in app.screen._compositor.render_strips() if strip.text.lstrip().startswith("three "))
    assert table.virtual_size.width <= table.scrollable_content_region.width, "the table scrolls sideways"
    return cell, line


async def test_the_running_column_fits_whole_names_at_80_columns() -> None:
    app = NvcreApp(session=await session_run_for(THREE, 30), live=False)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        cell, line = running_cell(app)
        assert cell == ", ".join(NAMES) and line.endswith(cell), line
        await pilot.resize_terminal(80, 24)  # narrower: the column shrinks with it
        await pilot.pause()
        await pilot.pause()
        cell, line = running_cell(app)
        assert cell == "nccl-all-reduce, +2" and line.endswith(cell), line
    app = NvcreApp(session=await session_run_for(THREE, 30), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        cell, line = running_cell(app)
        assert cell == "nccl-all-reduce, +2" and line.endswith(cell), line


async def test_the_one_running_category_is_named_beside_a_long_certification_name_at_80_columns() -> None:
    """DIAGNOSE_AND_TRAIN at 80x24 while its all-reduce waits for pods: the Running column (15 cells beside
    "diagnose-and-train") read "+1", hiding the one category that ran (found watching it at 80x24), then
    "· nccl-all-red…" where README says whole names: the certification's name gives up the 2 cells, cut in its middle."""
    from .harness import DIAGNOSE_AND_TRAIN

    app = NvcreApp(session=await session_run_for(DIAGNOSE_AND_TRAIN, 60), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        name, *_, cell = (str(shown) for shown in table.get_row("diagnose-and-train"))
        assert cell == "· nccl-all-reduce", cell
        assert name.startswith("diagnose") and name.endswith("-train") and "…" in name and len(name) >= 16, name
        assert table.virtual_size.width <= table.scrollable_content_region.width, "the table scrolls sideways"


async def test_a_certification_that_waited_keeps_its_running_category_named_at_80_columns() -> None:
    """examples/burn-in.yaml, then the diagnose (thresholds lowered to 300) queued behind it on the same nodes: 30
    simulated minutes in, the diagnose runs after waiting 27m44s. Its Runtime, "2m16s (+27m44s waited)", took 22 cells,
    and on 80 columns Running read "nc" (its header "Ru"): the one column a team watching the run reads. There, Runtime
    shows the run alone and the line under the table says the wait of the highlighted certification."""
    examples = Path(__file__).parents[2] / "examples"
    diagnose = (examples / "diagnose.yaml").read_text().replace("value >= 900", "value >= 300").replace("value >= 800", "value >= 300")
    session = await session_with((examples / "burn-in.yaml").read_text(), diagnose, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=1800)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        runtime = str(table.get_row("burn-in-diagnose")[4])
        assert runtime.endswith(" (+27m44s waited)"), runtime  # room enough: said in the cell
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        _the_wait_said_apart(app, runtime.removesuffix(" (+27m44s waited)"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        _the_wait_said_apart(app, runtime.removesuffix(" (+27m44s waited)"))
        await pilot.press("down")  # burn-in waited for nothing: nothing said of it
        await pilot.pause()
        assert "waited" not in str(app.screen.query_one("#waiting", Static).render())


def _the_wait_said_apart(app: NvcreApp, ran: str) -> None:
    table = app.screen.query_one("#certs", DataTable)
    *_, runtime, _, cell = (str(shown) for shown in table.get_row("burn-in-diagnose"))
    assert cell == "nccl-all-reduce" and runtime == ran, (runtime, cell)
    line = next(strip.text.rstrip() for strip in app.screen._compositor.render_strips() if strip.text.startswith(" burn-in-diagnose "))
    assert line.endswith(" nccl-all-reduce"), line
    assert table.virtual_size.width <= table.scrollable_content_region.width, "the table scrolls sideways"
    waited = str(app.screen.query_one("#waiting", Static).render())
    assert "burn-in-diagnose waited 27m44s for nodes before it ran (not in its Runtime)" in waited, waited


async def test_categories_waiting_alike_share_one_line_under_the_table_at_80_columns() -> None:
    """A weekly certification of six categories on the same nodes: five wait for the first. One line each under the
    table, its three rows held three of them, the third cut mid-sentence ("waits for an earlier category on the"), and
    dcgm-level4 went unsaid. Waiting alike, they share a line: named while it fits, the rest counted."""
    from .test_wall_keys_and_counters import SIX_IN_A_ROW

    app = NvcreApp(session=await session_run_for(SIX_IN_A_ROW, 60), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        line = app.screen.query_one("#waiting", Static)
        shown = " ".join(strip.text.strip() for strip in app.screen._compositor.render_strips()[line.region.y : line.region.bottom]
                         if strip.text.strip("─ "))
        assert shown == "· communication/nccl-all-gather +4 more: waits for an earlier category on the same nodes", shown
    app = NvcreApp(session=await session_run_for(SIX_IN_A_ROW, 60), live=False)
    async with app.run_test(size=(240, 67)) as pilot:  # room enough: all five named
        await pilot.pause()
        said = str(app.screen.query_one("#waiting", Static).render())
        assert said == ("· communication/nccl-all-gather, communication/nccl-alltoall, communication/nccl-loopback, "
                        "communication/nccl-loopback-nvswitch, diagnostics/dcgm-level4: waits for an earlier category on the same nodes"), said
