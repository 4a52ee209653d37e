"""A hostile or careless operator: what is typed and what the cluster's objects say is shown as written, never
read as markup, and never ends the console. Notifications are on here (Textual's run_test turns them off), since
a toast renders its message as markup unless told otherwise."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Label, SelectionList, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.planning.catalog_load import default_catalog, load_catalog
from nvcre_tui.screens.catalog import CatalogScreen
from nvcre_tui.screens.compose import ComposeScreen
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.log_view import LogLines
from nvcre_tui.widgets.rack_map import RackMap

from .harness import reopen, session_with

SLOW_JOB = "burn-in-communication-nccl-all-reduce-group-6-iter-1"


async def settle(app: NvcreApp, pilot: Pilot[None]) -> None:
    """Let toasts mount and render (a toast that cannot render ends the app)."""
    await app.workers.wait_for_complete()
    for _ in range(3):
        await pilot.pause()
    app.export_screenshot()  # renders every toast now


def toasts(app: NvcreApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def test_cert_command_with_markup_in_the_name_says_not_found(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("colon", *"cert [/x]", "enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, DrilldownScreen)
        assert toasts(app)[-1] == "no certification [/x] in namespace default: :certs lists them"
        app.push_screen(DrilldownScreen("[/x]"))  # opened on it all the same: its keys say nothing is there
        await settle(app, pilot)
        assert str(app.screen.query_one(Tree).root.label) == "[/x] (not found)"
        await pilot.press("f", "l", "b", "n")
        await settle(app, pilot)
    assert app.return_code is None


async def test_unknown_commands_and_themes_are_named_as_typed(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("colon", *"[/x]", "enter")
        await settle(app, pilot)
        assert toasts(app)[-1].startswith("unknown command :[/x];")  # read now: a loaded machine can outlast its 5 s
        await pilot.press("colon", *"theme [b]dark[/b]", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DashboardScreen)
        assert toasts(app)[-1].startswith("unknown theme '[b]dark[/b]';")
    assert app.return_code is None


async def test_a_refused_name_is_quoted_in_the_not_submitted_notice(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("c", "f3")
        await pilot.pause()
        assert isinstance(app.screen, ComposeScreen)
        app.screen.query_one("#name", Input).value = "rack[/b]"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ComposeScreen)
        assert "got 'rack[/b]'" in toasts(app)[-1]
    assert app.return_code is None


async def test_a_log_search_that_finds_nothing_names_the_pattern(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await app.push_screen(LogsScreen(SLOW_JOB))
        await settle(app, pilot)
        assert app.screen.query_one(LogLines).lines
        await pilot.press("slash", *"[/]dev", "enter")  # a regex: a slash, then 'dev'
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        assert toasts(app)[-1] == "no match for “[/]dev”"
    assert app.return_code is None


async def test_a_catalog_title_and_description_with_brackets_are_shown_as_written(tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(default_catalog().root, root)
    entry = root / "communication" / "nccl-loopback.yaml"  # a site's own catalog ($NVCRE_CATALOG_DIR)
    text = entry.read_text().replace("title: NCCL loopback (network path)", "title: 'NCCL loopback [/site]'")
    entry.write_text(text.replace("description: >-\n", "description: >-\n  Reads [/dev/infiniband] and [gpu0].\n", 1))
    session = await session_with(settle=False)
    session.catalog = load_catalog(root)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await app.push_screen(CatalogScreen())
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index("communication/nccl-loopback"))
        await settle(app, pilot)
        shown = str(app.screen.query_one("#description", Static).render())
        assert shown.startswith("communication/nccl-loopback · NCCL loopback [/site]\nReads [/dev/infiniband] and [gpu0].")
        await pilot.press("escape", "c")
        await pilot.pause()
        app.screen.query_one("#categories", SelectionList).select("communication/nccl-loopback")
        await settle(app, pilot)
        titles = [str(label.render()) for label in app.screen.query(".panel-title").results(Label)]
        assert "communication/nccl-loopback · NCCL loopback [/site]" in titles
    assert app.return_code is None


@pytest.mark.parametrize(("damage", "said"), [
    (None, "certification.yaml: no such file"),
    (b"x: \xff", "certification.yaml: not UTF-8 text"),
    (b"junk: 1\n", "junk: unknown field"),
])
async def test_a_damaged_default_certification_in_the_catalog_is_one_notification(tmp_path: Path, damage: bytes | None, said: str) -> None:
    """F3 on a site's catalog whose _defaults/certification.yaml is missing, not text, or no Certification: one error
    notification naming the file, the form as it was (it used to end the console with a traceback)."""
    root = tmp_path / "catalog"
    shutil.copytree(default_catalog().root, root)
    default = root / "_defaults" / "certification.yaml"
    default.unlink() if damage is None else default.write_bytes(damage)
    session = await session_with(settle=False)
    session.catalog = load_catalog(root)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ComposeScreen)
        before = app.screen.read_draft()
        await pilot.press("f3")
        await settle(app, pilot)
        assert str(default) in toasts(app)[-1] and said in toasts(app)[-1], toasts(app)
        assert isinstance(app.screen, ComposeScreen) and app.screen.read_draft() == before
    assert app.return_code is None


async def test_map_explains_a_node_whose_message_holds_brackets(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TopologyScreen)
        screen._states["gpu-node-07"] = ("failed", "NCCL WARN cannot open [/dev/shm]")  # as a cluster's message may read
        screen.query_one(RackMap).highlighted = "gpu-node-07"
        await settle(app, pilot)
        assert str(screen.query_one("#explain", Static).render()).endswith("— NCCL WARN cannot open [/dev/shm]")
    assert app.return_code is None


class UnreadableHistory:
    """An archive that answers its version but fails to read (a damaged file, a lock held too long)."""

    def change_key(self) -> int:
        return 1

    def stale_nodes(self, current: object) -> dict[str, object]:
        raise OSError("database disk image is malformed: /srv/[nvcre]/history.db")


async def test_map_says_why_there_are_no_stale_marks_when_the_history_is_unreadable(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    session.history = UnreadableHistory()  # type: ignore[assignment]
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("m")
        await settle(app, pilot)
        marks = app.screen.query_one("#marks", Static)
        assert marks.display
        said = str(marks.render())  # then the map's cell mode
        assert said.startswith("history unreadable, no stale marks: database disk image is malformed: /srv/[nvcre]/history.db "), said
        assert "· cells: auto (full)" in said, said
    assert app.return_code is None


async def test_the_maps_node_line_ends_at_a_word_with_an_ellipsis_when_it_does_not_fit(finished_intra_node: Path) -> None:
    """A long reason (a NCCL warning naming peers) used to be cut mid-word at the third line, with nothing to say so."""
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TopologyScreen)
        words = " ".join(f"peer-{i:03d}<4{i:04d}>" for i in range(40))
        screen._states["gpu-node-07"] = ("failed", f"WorkloadFailed: NCCL WARN NET/IB: {words}")
        screen.query_one(RackMap).highlighted = "gpu-node-07"
        await settle(app, pilot)
        lines = str(screen.query_one("#explain", Static).render()).splitlines()
        assert len(lines) == 3 and lines[-1].endswith(" …"), lines
        assert all(re.fullmatch(r"peer-\d{3}<4\d{4}>", word) for line in lines for word in line.split() if word.startswith("peer-")), lines
