"""ctrl-c during a long command: the first asks it to stop at the next step (so it can save and say
what goes on), the second stops at once (nothing saved).

asyncio's own SIGINT handling cancels the main task, which a loop that never waits (the engine on a
manual clock) does not see until the run ends; a flag the loop polls is seen after one engine step.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

EXIT_INTERRUPTED = 130


@dataclass
class StopRequest:
    """`requested` by the first ctrl-c; `forced` by the second (which stops at once: nothing more is done)."""

    requested: bool = False
    forced: bool = False


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[StopRequest]:
    """Within the block, the first SIGINT sets `requested`; a second raises KeyboardInterrupt."""
    request = StopRequest()

    def handler(signum: int, frame: FrameType | None) -> None:
        if request.requested:
            request.forced = True  # said before raising: asyncio may turn it into a cancellation elsewhere
            raise KeyboardInterrupt
        request.requested = True

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: keep the default behaviour
        yield request
        return
    try:
        yield request
    finally:
        signal.signal(signal.SIGINT, previous)
