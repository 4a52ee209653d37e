"""The wall: its big counters show their digits whole at every size, and its keys do what its footer and
help say (`right` and `space` rotate; the map is a display that takes no key)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.containers import Vertical
from textual.geometry import Region
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.help import HelpScreen
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.wall import COUNTERS, WallScreen
from nvcre_tui.widgets.rack_map import RackMap

from .harness import intra_all_reduce, reopen, session_with


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40), (160, 50), (240, 70)])
async def test_the_counters_show_their_digits_whole(size: tuple[int, int], finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        lines = screen_lines(app)
        for state, title in COUNTERS:
            box = app.screen.query_one(f"#box-{state}", Vertical)
            digits = app.screen.query_one(f"#count-{state}", Digits)
            assert digits.region.height == 3, state
            assert box.content_region.contains_region(digits.region), f"{state}: digits {digits.region} cut by the box {box.content_region}"
            assert title in lines[box.region.y], f"{state}: its title is not on the box's top line"
            drawn = [strip.text.rstrip() for strip in digits.render_lines(Region(0, 0, digits.size.width, 3))]
            shown = [lines[digits.region.y + row][digits.region.x : digits.region.right].rstrip() for row in range(3)]
            assert shown == drawn, f"{state}: the screen shows {shown}, the digits are {drawn}"


async def test_right_and_space_rotate_and_the_map_takes_no_key() -> None:
    session = await session_with(intra_all_reduce("alpha"), intra_all_reduce("beta"), settle=False)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        title = app.screen.query_one("#title", Static)
        assert str(title.render()).lstrip().startswith("beta")  # newest first, as the dashboard (report.shown_order)
        assert not isinstance(app.focused, RackMap) and not app.screen.query_one(RackMap).can_focus
        await pilot.press("right")
        await pilot.pause()
        assert str(title.render()).lstrip().startswith("alpha"), "right did not rotate"
        await pilot.press("space")
        await pilot.pause()
        assert str(title.render()).lstrip().startswith("beta"), "space did not rotate"
        for key in ("left", "down", "enter", "tab", "right"):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.focused, RackMap) and isinstance(app.screen, WallScreen), key
        assert str(title.render()).lstrip().startswith("alpha")


async def test_the_help_lists_only_the_keys_that_work_on_the_wall() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, file=io.StringIO())
        with console.capture() as capture:
            console.print(app.screen.query_one(Static).content)
        section = re.search(r"\nWall *\n(.*?)\n *\n", capture.get(), re.S)
        assert section is not None
        keys = [line.split("  ")[0].strip() for line in section.group(1).splitlines()]
        assert keys == ["right, space", "escape"], section.group(1)
        assert "Open the highlighted node" not in section.group(1)
        # `nvcre wall` reaches no other screen and has no command bar: their keys are not listed (the dashboard's enter,
        # m, f and `:` were, and did nothing there).
        listed = capture.get()
        assert not re.search(r"\n(Dashboard|Drill-down|Topology map|Node|Compose) *\n", listed), listed
        assert not re.search(r"\n: +Command bar", listed) and "command palette: :theme NAME, :q" in listed, listed
        await pilot.press("escape", "colon")  # `:` says what the palette offers, never "escape back" (escape quits the wall)
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said == ["the wall display has no command bar: ctrl+p offers :theme NAME, :q"], said


async def test_the_wall_from_the_dashboard_rotates_on_right_too(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        screen = app.screen
        await pilot.press("right")
        await pilot.pause()
        assert screen.index == 1 and not isinstance(app.focused, RackMap)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WallScreen)


async def test_the_palette_on_the_wall_opens_no_other_screen(finished_intra_node: Path) -> None:
    """`nvcre wall`: ctrl+p pushed the dashboard over the wall (where escape could not get back), and `w` there a
    second wall. On the wall the palette offers what the wall does: no screen, node or certification."""
    from textual.command import CommandPalette

    from nvcre_tui.commands import allowed_commands

    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert [command.name for command in allowed_commands(app)] == ["theme", "q"]
        for query in ("cert", "dashboard", "node gpu"):
            await pilot.press("ctrl+p")
            await pilot.pause()
            assert isinstance(app.screen, CommandPalette)
            await pilot.press(*query)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await pilot.pause()
            if isinstance(app.screen, CommandPalette):
                await pilot.press("escape")
                await pilot.pause()
            assert [type(s).__name__ for s in app.screen_stack[1:]] == ["WallScreen"], (query, app.screen_stack)
        app.run_command("certs")
        await pilot.pause()
        assert [type(s).__name__ for s in app.screen_stack[1:]] == ["WallScreen"]


async def test_the_wall_is_never_stacked_twice(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        app.run_command("wall")  # on the wall: nothing opens
        await pilot.pause()
        await app.push_screen(NodeScreen("gpu-node-07"))  # a screen above the wall (pushed here: the wall opens none)
        await pilot.pause()
        app.run_command("wall")
        await pilot.pause()
        assert sum(isinstance(s, WallScreen) for s in app.screen_stack) == 1, app.screen_stack


async def test_a_certification_on_one_rack_is_counted_on_its_nodes() -> None:
    """The wall said "of 32 nodes: ... + 24 ◦ untested" for a certification of 8: its counters count its own nodes,
    the map still draws the fleet."""
    rack = intra_all_reduce("rack-1").replace('nodeSelector: {nvidia.com/gpu.present: "true"}', 'nodeSelector: {nvidia.com/gpu.clique: "clique-1"}')
    session = await session_with(rack)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        assert "of 8 nodes: the counters above + 0 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded; 24 other nodes not in it" in tally, tally
        shown = sum(int(str(app.screen.query_one(f"#count-{state}", Digits).value)) for state, _ in COUNTERS)
        assert shown == 8
        assert len(app.screen.query_one(RackMap)._cells) == 32  # the fleet, drawn


async def test_suspects_whose_test_waits_for_pods_are_said_waiting_not_running() -> None:
    """examples/diagnose.yaml at `value >= 300` on the default fleet: between rounds, the suspects the next round tests
    wait for their pods (drawn ◷ waiting). The wall's line said "2 running are suspects under test" beside RUNNING 0."""
    import yaml

    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.store import CERTIFICATION
    from nvcre_tui.engine.views.nodes import node_states
    from nvcre_tui.engine.views.snapshot import Snapshot
    from nvcre_tui.engine.views.suspicion import suspects_under_test

    from .harness import default_scenario

    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    body = yaml.safe_load((Path(__file__).parents[2] / "examples" / "diagnose.yaml").read_text().replace("value >= 900", "value >= 300"))
    body["metadata"]["namespace"] = "default"
    await session.store.create(CERTIFICATION, body)
    name = body["metadata"]["name"]

    async def suspects_wait() -> bool:
        snapshot = await Snapshot.read(session.store)
        states = node_states(snapshot, name)
        return any(states[node][0] == "waiting" for node in suspects_under_test(snapshot, states, name))

    assert await session.engine.run_until_settled(until=suspects_wait, max_seconds=900)
    snapshot = await Snapshot.read(session.store)
    states = node_states(snapshot, name)
    waiting = [node for node in suspects_under_test(snapshot, states, name) if states[node][0] == "waiting"]
    running = [node for node in suspects_under_test(snapshot, states, name) if states[node][0] == "running"]
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        shown = int(app.screen.query_one("#count-running", Digits).value)
        said = re.search(r"(\d+) running (?:are|is) under suspicion, tested now", tally)
        assert (int(said.group(1)) if said else 0) == len(running) <= shown, (tally, shown, running)
        assert re.search(rf"\b{len(waiting)} waiting (?:are|is) under suspicion, tested now", tally), (tally, waiting)


EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_certification_waiting_for_another_keeps_its_counts_on_the_tally(size: tuple[int, int]) -> None:
    """The operations room's pair: a burn-in runs, the diagnose (thresholds lowered to 300) waits for its nodes. Its
    three categories' reasons came before the counts, and the two rows of the tally held only them: every counter read
    0 and nothing said that 32 nodes wait. The counts come first, whole; categories waiting alike are named together."""
    diagnose = (EXAMPLES / "diagnose.yaml").read_text().replace("value >= 900", "value >= 300").replace("value >= 800", "value >= 300")
    session = await session_with((EXAMPLES / "burn-in.yaml").read_text(), diagnose, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=600)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        while app.screen.current != "burn-in-diagnose":
            await pilot.press("right")
            await pilot.pause()
        assert [app.screen.query_one(f"#count-{state}", Digits).value for state, _ in COUNTERS] == ["0"] * 5
        tally = app.screen.query_one("#tally", Static)
        lines = screen_lines(app)
        said = " ".join(line.strip() for line in lines[tally.region.y : tally.region.bottom])
        assert said.startswith("nothing runs yet; of 32 nodes targeted: the counters above + 32 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded"), said
        # counted where their reasons would not fit the two rows (waits_said): the line ends in sight, the title says for what
        assert said.endswith("; 3 categories wait") and str(tally.render()).endswith(said.rpartition("excluded")[2]), said


# Six categories on the same nodes: one runs, five wait for it.
SIX_IN_A_ROW = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: weekly}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node}}
    - {domain: communication, variant: nccl-all-gather, options: {testScale: intra-node}}
    - {domain: communication, variant: nccl-alltoall, options: {testScale: intra-node}}
    - {domain: communication, variant: nccl-loopback}
    - {domain: communication, variant: nccl-loopback-nvswitch}
    - {domain: diagnostics, variant: dcgm-level4}
"""
WAITING_FIVE = ("communication/nccl-all-gather, communication/nccl-alltoall, communication/nccl-loopback, "
                "communication/nccl-loopback-nvswitch, diagnostics/dcgm-level4 wait for an earlier category on the same nodes")


@pytest.mark.parametrize(("size", "said"), [
    ((80, 24), "; 5 categories wait for an earlier category on the same nodes"),
    ((120, 40), "; communication/nccl-all-gather +4 more wait for an earlier category on the same nodes"),
    ((240, 67), "; " + WAITING_FIVE),
])
async def test_many_waiting_categories_are_counted_where_their_names_would_cut_what_they_wait_for(size: tuple[int, int], said: str) -> None:
    """The operations room's weekly certification of six categories on the same nodes: five wait for the first. Named
    whole, their names ran past the tally's two rows on 80 and 120 columns, and the cut took what they wait for
    ("...; communication/nccl-all-gather, communication/nccl-alltoall,"). Where the names do not fit, the first is named
    and the others counted, else all are counted; the whole line stays in sight."""
    session = await session_with(SIX_IN_A_ROW, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=60)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        tally = app.screen.query_one("#tally", Static)
        shown = " ".join(line.strip() for line in screen_lines(app)[tally.region.y : tally.region.bottom])
        assert shown.startswith("of 32 nodes: the counters above") and shown.endswith(said), shown


async def test_the_title_says_what_its_fractions_count() -> None:
    """`alpha  FAILED  0/1  (1/2)` read from across the room as a count of failures; it says categories passed, and
    which of the rotation's certifications this is."""
    # beta fails on gpu-node-07 alone, after alpha: not every node alpha held, so alpha's failure stays beside it
    beta = intra_all_reduce("beta").replace('target: {nodeSelector: {nvidia.com/gpu.present: "true"}}', "target: {nodeNames: [gpu-node-07]}")
    session = await session_with(intra_all_reduce("alpha"), beta)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        title = str(app.screen.query_one("#title", Static).render())
        assert title.startswith(f"{app.screen.current}  FAILED  0/1 categories passed  ("), title
        assert re.search(r"\((1|2) of 2\)  finished \d", title), title


def test_waiting_categories_said_to_the_room_fit_or_are_counted() -> None:
    """waits_said's last resort: beside a running diagnosis's note, one category's reason was cut to "...;
    communication/nccl-all-gather waits" on 80 columns; counted without its reason, the line ends whole."""
    from nvcre_tui.screens.wall import waits_said

    earlier = "waits for an earlier category on the same nodes"
    before = ("3 running are under suspicion, tested now; of 32 nodes: the counters above + 0 ◷ waiting + 0 ◦ untested + "
              "0 ⊘ excluded")
    assert waits_said(before, {earlier: ["communication/nccl-all-gather"]}, 78) == "; 1 category waits"
    assert waits_said(before, {earlier: ["a/b", "c/d"], "waits: no eligible nodes match": ["e/f"]}, 78) == "; 3 categories wait"
    assert waits_said(before, {earlier: ["communication/nccl-all-gather"]}, 238) == f"; communication/nccl-all-gather {earlier}"
    assert waits_said(before * 3, {}, 78) == ""  # none waits: nothing said, however long the counts


async def test_the_certification_shown_stays_when_another_joins_the_rotation() -> None:
    """The room watches burn-in run; someone submits alpha, which sorts before it. The wall chose by position and
    showed alpha at once (and a certification leaving the rotation skipped the one after it for a round): the one
    shown stays until the rotation moves on."""
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import INTRA_NODE, certification_body, session_run_for

    session = await session_run_for(INTRA_NODE, 120)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen) and app.screen.current == "burn-in"
        await session.store.create(CERTIFICATION, certification_body(intra_all_reduce("alpha")))
        await app.refresh_snapshot()
        await pilot.pause()
        assert app.screen.current == "burn-in"
        assert "(2 of 2)" in str(app.screen.query_one("#title", Static).render())
        await pilot.press("right")  # the rotation moves on: to alpha, then back
        await pilot.pause()
        assert app.screen.current == "alpha"
        await pilot.press("right")
        await pilot.pause()
        assert app.screen.current == "burn-in"
