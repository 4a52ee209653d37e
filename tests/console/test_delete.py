"""Deleting a certification from the console: x asks (No is the default), y deletes through the app's
intent; a running one's Workflows, Jobs and runs go with it and the engine carries on; read-only mode
hides the key and refuses the action; a store that refuses is reported, not raised."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION
from nvcre_tui.engine.session import Session
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.screens.confirm import ConfirmModal
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.help import HelpScreen

from .harness import INTRA_NODE, certification_body, reopen, session_with

HELP_LINE = "Delete the highlighted certification"


async def names(session: Session, kind: Any = CERTIFICATION) -> set[str]:
    """What the store holds of `kind` (read past the console's snapshot)."""
    return {str(obj["metadata"]["name"]) for obj in (await session.store.list(kind)).items}


def rows(app: NvcreApp) -> list[str]:
    table = app.screen.query_one("#certs", DataTable)
    return [str(key.value) for key in table.rows]


def notified(app: NvcreApp) -> list[tuple[str, str, str]]:
    """(severity, title, message) of every notification so far."""
    return [(n.severity, n.title, str(n.message)) for n in app._notifications]


def help_text(app: NvcreApp) -> str:
    """The `?` screen's table as plain text."""
    console = Console(width=200, file=io.StringIO())
    with console.capture() as capture:
        console.print(app.screen.query_one(Static).content)
    return capture.get()


def footer_actions(app: NvcreApp) -> set[str]:
    return {key.action for key in app.screen.query(FooterKey)}


def offered_actions(app: NvcreApp) -> set[str]:
    """The actions the screen's keys offer now, in the footer or only listed by ? (x is out of the footer)."""
    return {active.binding.action for active in app.screen.active_bindings.values() if active.enabled}


async def highlight(app: NvcreApp, pilot: Pilot[None], row: int) -> str:
    """Put the dashboard's cursor on a row; the certification's name."""
    table = app.screen.query_one("#certs", DataTable)
    table.move_cursor(row=row)
    await pilot.pause()
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


async def test_x_then_y_deletes_the_highlighted_certification(finished_intra_node_and_example: Path) -> None:
    session = await reopen(finished_intra_node_and_example)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()  # the footer composes its keys after the screen mounts
        both = await names(session)
        assert len(both) == 2 and set(rows(app)) == both
        assert "delete_certification" in offered_actions(app)
        target = await highlight(app, pilot, 1)  # not the first row: the one highlighted goes, not the top one
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert target in app.screen.question and "finished" in app.screen.question and "still running" not in app.screen.question
        assert "Workflows, Jobs and runs go with it" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert await names(session) == both - {target}
        assert rows(app) == sorted(both - {target})
        owners = [w["metadata"]["labels"][LABEL_CERTIFICATION] for w in (await session.store.list(WORKFLOW)).items]
        assert owners and set(owners) == both - {target}  # its Workflows went with it, the other's stay
        for _ in range(100):  # the notice follows the deletion's last write (a loaded machine: a few turns later)
            if notified(app):
                break
            await pilot.pause(0.05)
        assert notified(app)[-1][:2] == ("information", "")
        assert notified(app)[-1][2].startswith(f"certification {target} deleted from namespace default; its record is kept in the history (")


@pytest.mark.parametrize("answer", ["n", "escape", "enter"])
async def test_x_then_no_keeps_the_certification(answer: str, finished_intra_node: Path) -> None:
    """enter answers the focused button, No: the safe answer is the default."""
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        # The certification's own version, not the store's: the session's Lease renewals (every 5 s) write to the store.
        version = (await session.store.get(CERTIFICATION, "burn-in", "default"))["metadata"]["resourceVersion"]
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press(answer)
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert await names(session) == {"burn-in"} and rows(app) == ["burn-in"]
        assert (await session.store.get(CERTIFICATION, "burn-in", "default"))["metadata"]["resourceVersion"] == version  # nothing written


async def test_x_with_no_certification_says_so() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert notified(app)[-1][2] == "no certification selected"


async def test_deleting_a_running_certification_stops_its_runs_and_the_engine_carries_on() -> None:
    session = await session_with(INTRA_NODE, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=120)  # part way: jobs are running
    assert await names(session, WORKLOADRUN)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "RUNNING" in str(app.screen.query_one("#certs", DataTable).get_row_at(0)[1])
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "burn-in in default (still running: its runs stop)" in app.screen.question
        assert app.screen.query_one("#question").size.height == 2  # wrapped in the modal's 72 columns, not cut off
        await pilot.press("y")
        await pilot.pause()
        assert rows(app) == []
        await session.engine.run_until_settled()  # the engine reconciles the deletion without raising
        for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN):
            assert await names(session, kind) == set(), f"{kind} left behind"
        assert await app.submit(certification_body(INTRA_NODE))  # the same name again: a fresh run
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        assert "FAILED" in str(app.screen.query_one("#certs", DataTable).get_row_at(0)[1])


async def test_deleting_a_running_certification_under_the_live_engine() -> None:
    """The console's own engine loop (a scaled clock) keeps running after its certification went mid-run."""
    from nvcre_tui.engine.sim.scenario import default_scenario

    fast = default_scenario().model_copy(update={"speed": 2000.0})
    app = NvcreApp(scenario=fast, state_path=None, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        session = app.session
        assert session is not None
        assert await app.submit(certification_body(INTRA_NODE))
        for _ in range(100):  # at most ~10 s of real time
            await asyncio.sleep(0.1)
            if await names(session, WORKLOADRUN):
                break
        assert await names(session, WORKLOADRUN), "no run started"
        assert await app.delete_certification("burn-in", "default")
        await asyncio.sleep(1.0)  # the engine sees the deletion and its runs' ends
        await pilot.pause()
        engine = [w for w in app.workers if w.group == "engine"]
        assert engine and not [w for w in engine if w.error] and all(w.is_running for w in engine)
        for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN):
            assert await names(session, kind) == set(), f"{kind} left behind"


async def test_drilldown_x_deletes_its_certification_and_goes_back(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        drilldown = app.screen
        await pilot.press("x", "n")  # n in the question is No, not the drill-down's Node
        await pilot.pause()
        assert app.screen is drilldown and await names(session) == {"burn-in"}
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "burn-in" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen) and rows(app) == []
        assert await names(session) == set()


async def test_read_only_hides_delete_and_refuses_it(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node, readonly=True)
    app = NvcreApp(session=session, live=False, read_only=True)
    version = session.database.resource_version
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()  # the footer composes its keys after the screen mounts
        screen = dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        assert not app.policy.allows("delete_certification")
        assert screen.check_action("delete_certification", ()) is False
        assert "delete_certification" not in offered_actions(app) and "compose" not in footer_actions(app)
        await pilot.press("x")
        await pilot.pause()
        assert app.screen is screen
        dashboard.action_delete_certification()  # a direct call past the hidden binding
        await pilot.pause()
        assert app.screen is screen
        assert notified(app)[-1] == ("warning", "not deleted", "read-only: deleting a certification is refused")
        assert not await app.delete_certification("burn-in", "default")  # and the store wrapper refuses the intent
        await pilot.pause()
        assert notified(app)[-1][:2] == ("error", "not deleted")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert HELP_LINE not in help_text(app) and "Drill down" in help_text(app)
    assert session.database.resource_version == version
    assert await names(session) == {"burn-in"}


async def test_help_lists_delete_when_writable(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert HELP_LINE in help_text(app)


async def test_a_store_that_refuses_is_reported_in_one_line(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        app.ui_store = ReadOnlyStore(session.store)  # a store that refuses every write (RBAC would, on a cluster)
        await pilot.press("x", "y")
        await pilot.pause()
        severity, title, message = notified(app)[-1]
        assert (severity, title) == ("error", "not deleted") and "burn-in" in message and "\n" not in message
        assert not await app.delete_certification("burn-in", "default")
        assert await names(session) == {"burn-in"} and rows(app) == ["burn-in"]


async def test_a_certification_someone_else_deleted_is_a_warning(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await session.store.delete(CERTIFICATION, "burn-in", "default")  # another console, or kubectl
        assert not await app.delete_certification("burn-in", "default")
        await pilot.pause()
        assert notified(app)[-1] == ("warning", "not deleted", "certification burn-in is already gone: someone else deleted it")
        assert rows(app) == []


async def test_drilldown_x_on_a_certification_not_found_says_so(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        app.push_screen(DrilldownScreen("[/x]"))  # `:cert [/x]` refuses it (test_registry.py)
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        assert notified(app)[-1][2] == "no certification [/x]"  # as typed, not read as markup


def job_namespaces(app: NvcreApp) -> set[str]:
    """The namespaces of the Jobs the console's view of burn-in joined (none: no Job at all)."""
    assert app.snapshot is not None
    return {str(job["metadata"]["namespace"]) for category in app.snapshot.views["burn-in"].categories for job in category.jobs}


async def test_a_namesake_in_another_namespace_is_another_certification(finished_intra_node: Path) -> None:
    """The console shows its session's namespace (-n, else default): x deletes the burn-in shown, and the burn-in
    of team-b, with its own Workflows and Jobs, stays; a console on team-b shows that one and submits there."""
    session = await reopen(finished_intra_node)
    twin = certification_body(INTRA_NODE)
    twin["metadata"]["namespace"] = "team-b"
    await session.store.create(CERTIFICATION, twin)
    assert session.engine is not None
    await session.engine.run_until_settled()
    team_b = [w for w in (await session.store.list(WORKFLOW, "team-b")).items]
    assert team_b and all(w["metadata"]["labels"][LABEL_CERTIFICATION] == "burn-in" for w in team_b)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        assert rows(app) == ["burn-in"]
        assert app.snapshot is not None and {c["metadata"]["namespace"] for c in app.snapshot.certifications} == {"default"}
        assert job_namespaces(app) == {"default"}
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "burn-in in default" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert rows(app) == []
    assert [c["metadata"]["namespace"] for c in (await session.store.list(CERTIFICATION)).items] == ["team-b"]
    session.namespace = "team-b"  # as `nvcre -n team-b` opens it
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        assert rows(app) == ["burn-in"]
        assert job_namespaces(app) == {"team-b"}
        other = certification_body(INTRA_NODE)
        other["metadata"]["name"] = "burn-in-2"
        del other["metadata"]["namespace"]
        assert await app.submit(other)
        assert (await session.store.get(CERTIFICATION, "burn-in-2", "team-b"))["metadata"]["namespace"] == "team-b"
