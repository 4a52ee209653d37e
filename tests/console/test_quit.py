"""q quits the console at once unless it is the engine of certifications still running on a cluster (tests/kube/
test_console_on_cluster.py asks it there): on the embedded simulator, whose time goes on while no process runs and is
caught up when one opens it, quitting with a certification running asks nothing."""

from __future__ import annotations

import asyncio

from nvcre_tui.app import NvcreApp, QuitQuestion
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION

from .harness import INTRA_NODE, certification_body


async def test_the_simulators_engine_quits_at_once_with_a_certification_running() -> None:
    app = NvcreApp(scenario=default_scenario(), state_path=None, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.session is not None and app.session.engine is not None
        assert await app.submit(certification_body(INTRA_NODE))
        await asyncio.sleep(0.3)
        await pilot.pause()
        cert = app.session.cache.get(CERTIFICATION, "burn-in", "default")
        assert cert is not None and not cond.is_terminal(cert)  # running, under this console's engine
        assert any(worker.group == "engine" and worker.is_running for worker in app.workers)
        assert app.running_here() == []
        await pilot.press("q")
        await pilot.pause()
        assert not any(isinstance(screen, QuitQuestion) for screen in app.screen_stack) and app.return_code == 0


async def test_ctrl_c_quits_as_q_does_on_every_screen_and_asks_first_where_q_would() -> None:
    """Textual's own ctrl+c only said "press ctrl+q to quit": an SRE's ctrl-c left the console, wall and read-only
    console running."""
    for command in ("certs", "wall", "racks"):
        app = NvcreApp(scenario=default_scenario(), state_path=None, live=False)
        async with app.run_test(size=(120, 40)) as pilot:
            app.run_command(command)
            await pilot.pause()
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app.return_code == 0, command
    app = NvcreApp(scenario=default_scenario(), state_path=None, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.run_command("compose")
        await pilot.pause()
        await pilot.press("x", "ctrl+c")  # typed into the name field (nothing selected to copy): a changed form
        await pilot.pause()
        assert app.return_code is None and isinstance(app.screen, QuitQuestion)
