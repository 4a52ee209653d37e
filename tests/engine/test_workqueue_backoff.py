"""A key that fails for ever (a webhook down for a day answers every create 500) backs off at the cap, for ever: the
backoff doubled 2**failures into a float, and after 1,024 consecutive failures (about 17 hours at the 60 s cap)
`OverflowError: int too large to convert to float` ended the engine's loop, every certification with it."""

from __future__ import annotations

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.workqueue import BACKOFF_BASE, BACKOFF_CAP, WorkQueue


def test_backoff_doubles_then_stays_at_the_cap_for_ever() -> None:
    queue = WorkQueue(ManualClock(SIM_START))
    delays = [queue.retry("key") for _ in range(5000)]
    assert delays[:3] == [BACKOFF_BASE, 2 * BACKOFF_BASE, 4 * BACKOFF_BASE]
    assert set(delays[20:]) == {BACKOFF_CAP}
    queue.forget("key")
    assert queue.retry("key") == BACKOFF_BASE
