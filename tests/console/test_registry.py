"""One screen registry: the `:` commands, the command palette and `?` all come from it, so none misses
a screen (the catalog screen was missing from `?`)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.commands import COLON_COMMANDS, NvcreCommands, allowed_commands
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.help import HelpScreen
from nvcre_tui.screens.registry import SCREENS
from nvcre_tui.widgets.command_bar import CommandBar

from .harness import reopen, session_with


def test_every_screen_module_is_in_the_registry() -> None:
    folder = Path(__file__).resolve().parents[2] / "nvcre_tui" / "screens"
    full_screens = {p.stem for p in folder.glob("*.py")} - {"__init__", "base", "own_toasts", "registry", "help", "confirm", "path_prompt", "connecting"}  # modals and plumbing
    assert {entry.module for entry in SCREENS} == full_screens
    for entry in SCREENS:
        assert entry.load().__name__ == entry.cls


def test_every_named_screen_has_its_colon_command_and_nothing_else_does() -> None:
    screen_commands = {c.name for c in COLON_COMMANDS} - {"theme", "q"}
    assert screen_commands == {entry.command for entry in SCREENS if entry.command}
    assert {"certs", "racks", "node", "cert", "compose", "catalog", "wall"} <= screen_commands


async def test_help_lists_every_registered_screen_and_every_allowed_command() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=120, file=io.StringIO(), record=True)
        console.print(app.screen.query_one(Static).content)
        text = console.export_text()
        for entry in SCREENS:
            assert entry.title in text, entry.title
        assert "Catalog" in text  # the screen `?` used to miss
        # A widget's keys say where they apply: the dashboard listed enter twice, for its table and its failures pane.
        assert "in the failures pane: the highlighted node's evidence" in " ".join(text.split()), text
        for command in allowed_commands(app):
            assert command.usage in text


async def test_palette_and_bar_offer_the_same_commands(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        provider = NvcreCommands(app.screen)
        discovered = {hit.help async for hit in provider.discover()}
        assert discovered == {c.usage for c in allowed_commands(app) if not c.takes_argument}
        hits = [hit.help async for hit in provider.search("cert: burn")]
        assert "drill into the certification" in hits
        await pilot.press("colon")
        bar = app.screen.query_one(CommandBar)
        assert all(c.usage in bar.placeholder for c in allowed_commands(app))
        await pilot.press(*"cert burn-in", "enter")  # the bar posts a message; the app runs it
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen) and app.screen.certification == "burn-in"


async def test_a_name_nothing_holds_is_said_and_nothing_opens(finished_intra_node: Path) -> None:
    """`:cert nosuch` and `:node nosuch` notify and stay on the screen they were typed on (found by a console review:
    each opened a screen with nothing on it, unexplained)."""
    from nvcre_tui.screens.dashboard import DashboardScreen
    from nvcre_tui.screens.node import NodeScreen

    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        for typed, said in (("cert nosuch", "no certification nosuch in namespace default: :certs lists them"),
                            ("node nosuch", "no node nosuch: :racks shows them all")):
            await pilot.press("colon", *typed, "enter")
            await pilot.pause()
            assert isinstance(app.screen, DashboardScreen) and len(app.screen_stack) == 2, typed
            assert str(list(app._notifications)[-1].message) == said
        await pilot.press("colon", *"node gpu-node-07", "enter")  # a node the fleet has opens as before
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen) and app.screen.node == "gpu-node-07"


async def test_the_catalog_screen_shows_the_sessions_catalog() -> None:
    import dataclasses

    from textual.widgets import DataTable

    from nvcre_tui.engine.planning.catalog_load import default_catalog
    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.sim.scenario import default_scenario

    shipped = default_catalog()
    only = dataclasses.replace(shipped, entries={k: v for k, v in shipped.entries.items() if k == "communication/nccl-all-reduce"})
    app = NvcreApp(session=await SimSession.open(default_scenario(), None, only), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.run_command("catalog")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1 and [str(cell) for cell in table.get_row_at(0)[:2]] == ["communication", "nccl-all-reduce"]


async def test_a_node_gone_from_the_cluster_still_opens_with_its_record(finished_intra_node: Path) -> None:
    """A failed node drained and deleted is the record an on-call engineer wants: its Jobs and its history."""
    from nvcre_tui.engine.store.protocol import NODE
    from nvcre_tui.screens.node import NodeScreen

    session = await reopen(finished_intra_node)
    await session.store.delete(NODE, "gpu-node-07")
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        assert app.snapshot is not None and not any(n["metadata"]["name"] == "gpu-node-07" for n in app.snapshot.nodes)
        await pilot.press("colon", *"node gpu-node-07", "enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen) and app.screen.node == "gpu-node-07"


async def test_a_screen_without_a_command_bar_does_not_offer_one_yet_colon_says_where_they_are(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        def footer_offers_colon() -> bool:
            return any(binding.key == "colon" and binding.show for _, binding, enabled, _ in app.screen.active_bindings.values() if enabled)

        assert footer_offers_colon()  # the dashboard has its bar
        app.run_command("compose")
        await pilot.pause()
        assert type(app.screen).__name__ == "ComposeScreen" and not app.screen.query(CommandBar)
        assert not footer_offers_colon()
        app.screen.query_one("#categories").focus()  # in a field `:` is text
        await pilot.press("colon")
        await pilot.pause()
        assert any("no command bar on this screen: ctrl+p has the same commands" in str(n.message) for n in app._notifications)
