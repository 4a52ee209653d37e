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

    async def logs(self, run: Any, *, required: bool = True) -> list[str]:
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
        # an error nvcre did not expect, said as one (it read `runner tick failed: RuntimeError: ...`)
        assert line.startswith('runner tick failed: a bug in nvcre (RuntimeError: pods "p-0" is forbidden: unable to create new '
                               "content in namespace team) (retried in "), line
    gaps = [b - a for a, b in zip(runner.ticks, runner.ticks[1:])]
    assert gaps[0] > 0 and gaps[0] < gaps[1] < gaps[2], gaps  # backoff, growing
    assert gaps[3] == 60.0, gaps  # a clean tick starts the backoff over and asks as it asked


class ChangingFailures(FailingTicks):
    """A runner whose tick fails with a different text each time (a counter in the message)."""

    async def tick(self) -> float | None:
        self.ticks.append((self.clock.now() - SIM_START).total_seconds())
        if len(self.ticks) <= self.failures:
            raise RuntimeError(f"conflict at resourceVersion {len(self.ticks)}")
        return 60.0


async def test_a_failing_tick_is_told_once_per_cause_and_a_few_causes_at_most() -> None:
    """The engine tells its session (Engine.tell: the CLI's stderr, the console's notification) once per failure text,
    where `log` says every retry; failures whose text changes each time are told up to TOLD_FAILURES."""
    from nvcre_tui.engine.engine import TOLD_FAILURES

    clock = ManualClock(SIM_START)
    runner = FailingTicks(clock, failures=3)
    told: list[str] = []
    engine = Engine(MemoryStore(clock), clock, default_catalog(), runner)
    engine.tell = told.append

    async def failed_thrice() -> bool:
        return len(runner.ticks) >= 3

    assert await engine.run_until_settled(until=failed_thrice, max_seconds=3600)
    assert engine.runner_failure is not None and engine.runner_failure.startswith("runner tick failed: a bug in nvcre (RuntimeError")
    assert len(told) == 1 and told[0].endswith("(retried with backoff; said once)"), told

    async def recovered() -> bool:
        return len(runner.ticks) >= 4

    assert await engine.run_until_settled(until=recovered, max_seconds=3600)
    await engine.stop()
    assert engine.runner_failure is None and len(told) == 1

    changing = ChangingFailures(clock, failures=TOLD_FAILURES + 5)
    told.clear()
    engine = Engine(MemoryStore(clock), clock, default_catalog(), changing)
    engine.tell = told.append

    async def all_failed() -> bool:
        return len(changing.ticks) > TOLD_FAILURES + 5

    assert await engine.run_until_settled(until=all_failed, max_seconds=10 * 24 * 3600)
    await engine.stop()
    assert len(told) == TOLD_FAILURES, told
