"""A path under an unknown user's home (`~someone/x`) typed into a save prompt is said in one line, not a
crash; the log's save prompt says every refusal (audit of the console's messages about bad input)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input

from nvcre_tui.app import NvcreApp

from .harness import compose_path_said, session_with


NO_USER = "~nvcre-no-such-user"  # `~user` of a user this machine does not have


async def test_a_path_under_an_unknown_users_home_is_said_and_the_console_stays(tmp_path: Path) -> None:
    """`~someone/c.yaml` typed into the compose screen's save prompt: pathlib's expanduser raised RuntimeError
    ("Could not determine home directory.") and the console ended with a traceback."""
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        said = await compose_path_said(app, pilot, "f2", f"{NO_USER}/c.yaml")
        assert said == f"{NO_USER}/c.yaml: no user 'nvcre-no-such-user' on this machine, so no home folder {NO_USER}", said
    assert app.return_code is None


async def save_log_to(app: NvcreApp, pilot: Any, path: str) -> None:
    from nvcre_tui.widgets.log_view import SavePrompt

    await pilot.press("ctrl+s")
    await pilot.pause()
    assert isinstance(app.screen, SavePrompt)
    app.screen.query_one("#save-path", Input).value = path
    await pilot.press("enter")
    await pilot.pause()


async def test_the_log_save_prompt_says_every_refusal_in_one_line(tmp_path: Path) -> None:
    """The log's save: `~someone/x.log` ended the console (RuntimeError); a folder was asked "overwrite it?" before
    the write failed; enter on an empty path and "n" to the overwrite question closed the prompt saying nothing."""
    from nvcre_tui.screens.logs import LogsScreen
    from nvcre_tui.widgets.log_view import ConfirmOverwrite, SavePrompt

    from .harness import INTRA_NODE

    app = NvcreApp(session=await session_with(INTRA_NODE), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        workflow = app.snapshot.workflows_of("burn-in")[0]["metadata"]["name"]
        await app.push_screen(LogsScreen(app.snapshot.jobs_of(workflow)[0]["metadata"]["name"]))
        await app.workers.wait_for_complete()
        await pilot.pause()

        def last() -> str:
            return str(list(app._notifications)[-1].message) if len(app._notifications) else ""

        await save_log_to(app, pilot, f"{NO_USER}/x.log")
        assert isinstance(app.screen, LogsScreen) and last() == f"{NO_USER}/x.log: no user 'nvcre-no-such-user' on this machine, so no home folder {NO_USER}"
        await save_log_to(app, pilot, str(tmp_path))
        assert isinstance(app.screen, LogsScreen) and last() == f"{tmp_path}: is a directory, not a file"
        await save_log_to(app, pilot, "  ")
        assert isinstance(app.screen, SavePrompt) and last() == "type a path to save to (escape cancels)"
        await pilot.press("escape")
        existing = tmp_path / "x.log"
        existing.write_text("keep me\n")
        await save_log_to(app, pilot, str(existing))
        assert isinstance(app.screen, ConfirmOverwrite)
        await pilot.press("n")
        await pilot.pause()
        assert last() == f"kept {existing}; not saved" and existing.read_text() == "keep me\n"
    assert app.return_code is None
