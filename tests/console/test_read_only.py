"""Read-only mode: every binding of every screen and every palette command is driven; the store sees
zero writes, mutating keys are hidden, and a direct submit is refused by the store wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.binding import Binding

from nvcre_tui.app import NvcreApp
from nvcre_tui.commands import COLON_COMMANDS, run_colon_command
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.screens.registry import BY_NAME as NAMED
from nvcre_tui.screens.registry import SCREENS

from .harness import INTRA_NODE, certification_body, reopen, session_with

SKIP_ACTIONS = {"quit", "app.quit"}  # ends the test app; not a write either way


ARGUMENTS = {"drilldown": ("burn-in",), "node": ("gpu-node-07",), "logs": ("burn-in-communication-nccl-all-reduce-group-6-iter-1",),
             "bandwidth": ("burn-in-communication-nccl-all-reduce",)}


def _screen_factories(app: NvcreApp) -> list[tuple[str, object]]:
    """Every screen of the registry (the one table `:`, the palette and `?` use), with arguments where it needs them."""
    return [(entry.cls, lambda c=entry.load(), a=ARGUMENTS.get(entry.name, ()): c(*a)) for entry in SCREENS]


async def test_every_binding_and_command_writes_nothing(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node, readonly=True)  # as `nvcre --read-only` opens it: no engine, no lease
    app = NvcreApp(session=session, live=False, read_only=True)
    version = session.database.resource_version
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.store, ReadOnlyStore)
        assert "READ-ONLY" in app.sub_title
        base = app.screen
        driven = 0
        for name, factory in _screen_factories(app):
            screen = factory()  # type: ignore[operator]
            await app.push_screen(screen)
            await pilot.pause()
            widget_bindings = [b for widget in getattr(screen, "HELP_WIDGETS", ()) for b in widget.BINDINGS]
            for binding in [*screen.BINDINGS, *widget_bindings, *app.BINDINGS]:
                assert isinstance(binding, Binding)
                if binding.action in SKIP_ACTIONS:
                    continue
                while app.screen is not screen and len(app.screen_stack) > 2:
                    app.pop_screen()
                    await pilot.pause()
                if app.screen is not screen:
                    break
                await pilot.press(binding.key.split(",")[0])
                await pilot.pause()
                driven += 1
            while app.screen is not base and len(app.screen_stack) > 1:
                app.pop_screen()
                await pilot.pause()
            assert session.database.resource_version == version, f"{name} wrote to the store"
        for command in COLON_COMMANDS:
            if command.action == "quit":
                continue
            argument = {"node": " gpu-node-01", "cert": " burn-in", "theme": " nvcre-light"}.get(command.name, "")
            run_colon_command(app, command.name + argument)
            await pilot.pause()
            while len(app.screen_stack) > 1 and app.screen is not base:
                app.pop_screen()
                await pilot.pause()
        assert driven > 20
        assert session.database.resource_version == version
        assert not app.policy.allows("compose") and not app.policy.allows("submit")
        assert app.screen.check_action("compose", ()) is False
        assert not await app.submit(certification_body(INTRA_NODE.replace("burn-in", "sneaky")))
        assert app.store.refused_writes == 1
        assert session.database.resource_version == version


async def test_read_only_palette_offers_no_compose() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False, read_only=True)
    async with app.run_test(size=(120, 40)):
        from nvcre_tui.commands import allowed_commands

        names = {c.name for c in allowed_commands(app)}
        assert "compose" not in names and "racks" in names
        assert set(NAMED) >= {"dashboard", "topology", "wall"}


async def test_read_only_refuses_the_log_save_like_every_other_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finished_intra_node: Path) -> None:
    from nvcre_tui.screens.logs import LogsScreen
    from nvcre_tui.widgets.log_view import LogView, SavePrompt

    monkeypatch.chdir(tmp_path)
    session = await reopen(finished_intra_node)
    for wall in (False, True):
        app = NvcreApp(session=session, live=False, read_only=not wall, wall=wall)
        async with app.run_test(size=(120, 40)) as pilot:
            assert not app.policy.allows("save_log") and not app.policy.allows("save_file")
            job = next(j["metadata"]["name"] for j in app.snapshot.jobs)  # type: ignore[union-attr]
            await app.push_screen(LogsScreen(job))
            await app.workers.wait_for_complete()
            await pilot.pause()
            view = app.screen.query_one(LogView)
            assert view.check_action("save_log", ()) is False  # hidden: not in the footer or help
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert not isinstance(app.screen, SavePrompt)
            view.action_save_log()  # a direct call past the hidden binding is refused too
            await pilot.pause()
            assert not isinstance(app.screen, SavePrompt)
            view._save_to("x.log")  # and so is a prompt answered before the mode applied
    assert list(tmp_path.iterdir()) == []


async def test_a_state_save_that_fails_on_exit_is_kept_for_the_cli(tmp_path: Path) -> None:
    session = await session_with(settle=False)
    session.path = tmp_path / "a-folder"
    session.path.mkdir()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)):
        pass
    assert app.save_error is not None
    assert app.save_error.messages == [f"{session.path}: not a regular file; pass --state PATH of a file (it need not exist yet)"]


async def test_read_only_refuses_the_compose_save_and_the_screenshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.screens.compose import ComposeScreen
    from nvcre_tui.screens.confirm import ConfirmModal
    from nvcre_tui.screens.path_prompt import PathModal

    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "state.json"
    existing.write_text("{}")
    session = await session_with(settle=False)
    for wall in (False, True):
        app = NvcreApp(session=session, live=False, read_only=not wall, wall=wall)
        async with app.run_test(size=(120, 40)) as pilot:
            assert not app.policy.allows("save_file") and not app.policy.allows("screenshot")
            screen = ComposeScreen()  # unreachable in read-only (:compose is refused); pushed here to prove its save is refused too
            await app.push_screen(screen)
            await pilot.pause()
            assert screen.check_action("save_file", ()) is False and not screen.query_one("#save").display
            await pilot.press("f2")
            await pilot.pause()
            screen.action_save_file()  # a direct call past the hidden binding and button
            await pilot.pause()
            assert not isinstance(app.screen, PathModal)
            for answer in ("x.yaml", str(existing)):  # a prompt answered before the mode applied: no write, no overwrite question
                screen._save_to(answer)
                await pilot.pause()
                assert not isinstance(app.screen, ConfirmModal)
            assert not [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]
            assert app.deliver_screenshot() is None
            await pilot.pause()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"] and existing.read_text() == "{}"


async def test_a_writable_console_still_offers_the_screenshot() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(120, 40)):
        assert [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]


async def test_a_key_read_only_mode_turned_off_says_so(finished_intra_node: Path) -> None:
    """c and x did nothing at all on a read-only console (a review pressed them): each says why, once per press; a
    key nothing is bound to stays silent."""
    app = NvcreApp(session=await reopen(finished_intra_node, readonly=True), live=False, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for key, said in (("c", "read-only: Compose is off"), ("x", "read-only: Delete is off")):
            before = len(app._notifications)
            await pilot.press(key)
            await pilot.pause()
            messages = [n.message for n in list(app._notifications)[before:]]
            assert len(messages) == 1 and messages[0].startswith(said) and "--read-only" in messages[0], messages
        before = len(app._notifications)
        await pilot.press("z")
        await pilot.pause()
        assert len(app._notifications) == before
