"""The header says first what is most urgent, the session's title last: at 80 columns it read only `nvcre console —
SIMULATED · default: 32 x H100, 4 cliques, on…`, the read-only, viewer and store-warning badges cut off (a review
saw it in an operations room). The wall's title line likewise."""

from __future__ import annotations

from pathlib import Path

import pytest

from rich.cells import cell_len

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.policy import Policy
from nvcre_tui.screens.wall import WallScreen

SINCE = 1_700_000_000.0  # when the store stopped answering (a time of day in the badge)


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def _viewer(path: Path) -> tuple[SimSession, SimSession]:
    """A session holding the engine Lease of a store at `path`, and a second one on it: a viewer."""
    holder = await SimSession.open(default_scenario(), path, history=None)
    viewer = await SimSession.open(default_scenario(), path, history=None)
    assert holder.engine is not None and viewer.engine is None and viewer.viewer_reason
    return holder, viewer


@pytest.mark.parametrize("wall", [False, True])
async def test_read_only_and_viewer_badges_show_at_80_columns(tmp_path: Path, wall: bool) -> None:
    holder, viewer = await _viewer(tmp_path / "sim.db")
    try:
        app = NvcreApp(session=viewer, live=False, read_only=True, wall=wall)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, WallScreen) == wall
            top = screen_lines(app)[0]
            # the wall's line holds its title first: who holds the engine is cut shorter there ("👁 viewer: engine he…")
            assert "🔒 READ-ONLY" in top and ("👁 viewer: engine" if wall else "👁 viewer: engine held by") in top, top
            assert app.sub_title.index("🔒 READ-ONLY") < app.sub_title.index("👁 viewer") < app.sub_title.index("SIMULATED")
    finally:
        await viewer.close()
        await holder.close()


@pytest.mark.parametrize("wall", [False, True])
async def test_the_store_warning_shows_first_at_80_columns(tmp_path: Path, wall: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WatchCache, "unreachable_since", property(lambda self: SINCE))
    holder, viewer = await _viewer(tmp_path / "sim.db")
    try:
        app = NvcreApp(session=viewer, live=False, read_only=True, wall=wall)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            top = screen_lines(app)[0]
            assert "⚠ no answer from the store since " in top, top
            assert app.sub_title.startswith("⚠ no answer from the store since ")
            assert app.sub_title.index("showing the last known state") < app.sub_title.index("🔒 READ-ONLY")
    finally:
        await viewer.close()
        await holder.close()


async def test_the_walls_title_line_says_the_store_warning_before_the_certification_at_80_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall put the certification's title first: `diagnose-and-train  WAITING for certification burn-in  0/2 ...`
    left no room on 80 columns for the warning that everything under it is stale, which the room most needs to see."""
    from textual.widgets import Static

    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import DIAGNOSE_AND_TRAIN, certification_body, intra_all_reduce

    holder, viewer = await _viewer(tmp_path / "sim.db")
    try:
        for text in (intra_all_reduce("burn-in"), DIAGNOSE_AND_TRAIN):
            await holder.store.create(CERTIFICATION, certification_body(text))
        assert holder.engine is not None
        await holder.engine.run_until_settled(max_seconds=60)
        monkeypatch.setattr(WatchCache, "unreachable_since", property(lambda self: SINCE))
        app = NvcreApp(session=viewer, live=False, read_only=True, wall=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, WallScreen)
            warning = app.sub_title.split(": showing", 1)[0]
            assert warning.startswith("⚠ no answer from the store since "), app.sub_title
            seen: list[str] = []
            while str(app.screen.current) not in seen:
                seen.append(str(app.screen.current))
                top = screen_lines(app)[0]
                assert warning in top, top
                title = str(app.screen.query_one("#title", Static).render())
                assert f"{app.screen.current}  " in title, title  # the certification's title follows it
                await pilot.press("right")
                await pilot.pause()
            assert sorted(seen) == ["burn-in", "diagnose-and-train"]
    finally:
        await viewer.close()
        await holder.close()


@pytest.mark.parametrize("wall", [False, True])
async def test_a_viewer_says_nothing_advances_the_running_ones_when_no_engine_holds_the_lease_at_80_columns(tmp_path: Path, wall: bool) -> None:
    """Its engine died mid-run: the header said only `viewer: no engine holds the lease` (cut at 80 columns), and RUNNING
    read as progress; the CLI's stderr says nothing advances them until an engine runs. The header says it first."""
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import certification_body, intra_all_reduce

    holder = await SimSession.open(default_scenario(), tmp_path / "sim.db", history=None)
    await holder.store.create(CERTIFICATION, certification_body(intra_all_reduce("burn-in")))
    assert holder.engine is not None
    await holder.engine.run_until_settled(max_seconds=20)  # running, not finished
    await holder.close()
    viewer = await SimSession.open(default_scenario(), tmp_path / "sim.db", history=None, want_engine=False)
    try:
        assert viewer.viewer_reason == "viewer: no engine holds the lease"
        app = NvcreApp(session=viewer, live=False, read_only=True, wall=wall)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            top = screen_lines(app)[0]
            assert "⚠ no engine: nothing advances RUNNING ones" in top, top
            assert "👁 viewer: no engine holds the lease" in app.sub_title, app.sub_title
    finally:
        await viewer.close()


async def test_a_viewer_whose_engine_runs_says_no_stall(tmp_path: Path) -> None:
    """With a live holder, RUNNING is progress: no such badge."""
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import certification_body, intra_all_reduce

    holder, viewer = await _viewer(tmp_path / "sim.db")
    try:
        await holder.store.create(CERTIFICATION, certification_body(intra_all_reduce("burn-in")))
        assert holder.engine is not None
        await holder.engine.run_until_settled(max_seconds=20)
        app = NvcreApp(session=viewer, live=False, read_only=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.snapshot is not None and app.snapshot.certifications
            assert "nothing advances" not in app.sub_title and "👁 viewer: engine held by" in app.sub_title, app.sub_title
    finally:
        await viewer.close()
        await holder.close()


LONG_CONTEXT = "arn:aws:eks:us-west-2:123456789012:cluster/gpu-prod-cluster-a"


async def _viewer_in(path: Path, namespace: str) -> tuple[SimSession, SimSession]:
    """As _viewer, the viewer showing `namespace`."""
    holder = await SimSession.open(default_scenario(), path, history=None)
    viewer = await SimSession.open(default_scenario(), path, history=None, namespace=namespace)
    assert holder.engine is not None and viewer.engine is None and viewer.viewer_reason
    return holder, viewer


async def test_at_80_columns_the_header_cuts_names_and_keeps_the_namespace_and_the_read_only_mark(tmp_path: Path) -> None:
    """The header was cut at its end: `nvcre console — 🔒 READ-ONLY  👁 viewer: engine held by console@host/…`, the
    namespace the console shows and the scenario's name lost, on every screen; the logs pane's own title hid the
    badges altogether. Names are cut in their middle now, who holds the engine left out last."""
    from nvcre_tui.screens.logs import LogsScreen

    holder, viewer = await _viewer_in(tmp_path / "sim.db", "team-a")
    try:
        app = NvcreApp(session=viewer, live=False, read_only=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            top = screen_lines(app)[0]
            assert "🔒 READ-ONLY" in top and top.endswith(" · team-a"), top
            assert "👁 viewer: engine held by" in top and "SIMULATED, sim time · " in top, top  # the scenario's name cut in its middle
            await app.push_screen(LogsScreen("some-job"))
            await pilot.pause()
            top = screen_lines(app)[0]
            assert "🔒 READ-ONLY" in top and top.endswith(" · team-a"), top
            await pilot.resize_terminal(200, 24)
            await pilot.pause()
            top = screen_lines(app)[0]
            assert f"SIMULATED, sim time · {default_scenario().name} · team-a" in top and "👁 viewer: engine held by" in top, top
    finally:
        await viewer.close()
        await holder.close()


def test_a_long_context_name_is_cut_in_its_middle_before_the_namespace_goes() -> None:
    from nvcre_tui.app import CROWDED_CHROME
    from nvcre_tui.badges import fitted
    from nvcre_tui.engine.kube.session import cluster_title_parts

    app = NvcreApp.__new__(NvcreApp)  # calm_badges reads the policy and the session only
    app.policy = Policy(read_only=True)
    for scenario in (None, "default: 32 x H100, 4 cliques"):
        app.session = type("S", (), {"viewer_reason": "viewer: engine held by nvcre-controller-7f9c5d (renewed 3s ago)",
                                     "title_parts": lambda self, mark="", s=scenario: cluster_title_parts(LONG_CONTEXT, "ml-training", s, mark)})()
        said = fitted(app.calm_badges(), 80 - CROWDED_CHROME)
        # with --sim-runner's scenario too, its name left out first: the context stays, cut in its middle
        assert said.startswith("🔒 READ-ONLY  👁 viewer: engine"), said
        assert "  cluster arn" in said and "…" in said and " · ml-training" in said and cell_len(said) <= 80 - CROWDED_CHROME, said
        assert said.endswith(" · ml-training" if scenario is None else " · ml-training · SIM RUNNER"), said


def test_the_badges_fit_every_width_their_uncut_parts_leave_room_in() -> None:
    """A name cut in its middle to one cell kept a character beside its "…", two cells: at one width the badges came out a
    cell wider than the header's room, and the header cut its end, the namespace ("· team-" on a line fitted to 43)."""
    from nvcre_tui.app import CROWDED_CHROME
    from nvcre_tui.badges import cut_middle, fitted
    from nvcre_tui.engine.kube.session import cluster_title_parts

    assert [cut_middle("default: 32 x H100", width) for width in (0, 1, 2, 3)] == ["", "…", "d…", "d…0"]
    app = NvcreApp.__new__(NvcreApp)
    app.policy = Policy(read_only=True)
    app.session = type("S", (), {"viewer_reason": "viewer: engine held by nvcre-controller-7f9c5d (renewed 3s ago)",
                                 "title_parts": lambda self, mark="": cluster_title_parts(LONG_CONTEXT, "team-a", "default: 32 x H100", mark)})()
    least = cell_len(fitted(app.calm_badges(), 0))
    for width in range(least, 160 - CROWDED_CHROME):
        said = fitted(app.calm_badges(), width)
        assert cell_len(said) <= width and said.startswith("🔒 READ-ONLY") and " · team-a · SIM RUNNER" in said, (width, said)


async def test_the_walls_title_line_keeps_the_read_only_mark_and_the_namespace_at_80_columns(tmp_path: Path) -> None:
    """The wall's line said the certification's title first and fitted the badges to what it left: a running one's
    title (its name, result, categories passed, time left, place in the rotation) left none at 80 columns, and the
    read-only mark and the namespace, which no cut may take, went off the line's end. The title gives up room first."""
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import DIAGNOSE_AND_TRAIN, certification_body, intra_all_reduce

    holder, viewer = await _viewer_in(tmp_path / "sim.db", "team-a")
    try:
        for text in (intra_all_reduce("rack-12-burn-in-r1"), DIAGNOSE_AND_TRAIN):
            await holder.store.create(CERTIFICATION, {**(body := certification_body(text)), "metadata": {**body["metadata"], "namespace": "team-a"}})
        assert holder.engine is not None
        await holder.engine.run_until_settled(max_seconds=20)
        app = NvcreApp(session=viewer, live=False, read_only=True, wall=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, WallScreen)
            seen: list[str] = []
            while str(app.screen.current) not in seen:
                seen.append(str(app.screen.current))
                top = screen_lines(app)[0]
                assert "🔒 READ-ONLY" in top and top.endswith(" · team-a"), top
                assert str(app.screen.current)[:4] in top, top  # the certification's title still leads
                await pilot.press("right")
                await pilot.pause()
            assert sorted(seen) == ["diagnose-and-train", "rack-12-burn-in-r1"]
    finally:
        await viewer.close()
        await holder.close()
