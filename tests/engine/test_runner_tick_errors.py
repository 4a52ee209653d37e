"""An unexpected error out of the runner's fleet tick (the test kubelet's pod create refused, a bug) has no object to
fail: it ended the engine's loop with a traceback on the user's terminal. It is logged in one line and the tick is
retried with backoff; the loop goes on."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import MemoryStore


class FailingTicks:
    """A runner whose tick raises `failures` times, then asks to be ticked again in 60 s."""

    simulated = False

    def __init__(self, clock: ManualClock, failures: int) -> None:
        self.clock, self.failures = clock, failures
        self.ticks: list[float] = []

    async def reconcile_run(self, run: Any) -> float | None:
        return None

    async def logs(self, run: Any) -> list[str]:
        return []

    async def stop(self, run: Any) -> None:
        return None

    async def release(self, owner: Any) -> None:
        return None

    async def tick(self) -> float | None:
        self.ticks.append((self.clock.now() - SIM_START).total_seconds())
        if len(self.ticks) <= self.failures:
            raise RuntimeError('pods "p-0" is forbidden: unable to create new content\nin namespace team')
        return 60.0


async def test_a_failing_runner_tick_is_logged_in_one_line_and_retried_with_backoff() -> None:
    clock = ManualClock(SIM_START)
    runner = FailingTicks(clock, failures=3)
    logged: list[str] = []
    engine = Engine(MemoryStore(clock), clock, default_catalog(), runner)
    engine.log = logged.append

    async def ticked_after_failures() -> bool:
        return len(runner.ticks) >= 5

    assert await engine.run_until_settled(until=ticked_after_failures, max_seconds=3600)
    await engine.stop()
    assert len(logged) == 3, logged
    for line in logged:
        assert "\n" not in line and line.startswith("runner tick failed: RuntimeError: pods \"p-0\" is forbidden"), line
    gaps = [b - a for a, b in zip(runner.ticks, runner.ticks[1:])]
    assert gaps[0] > 0 and gaps[0] < gaps[1] < gaps[2], gaps  # backoff, growing
    assert gaps[3] == 60.0, gaps  # a clean tick starts the backoff over and asks as it asked
