"""ctrl-c during a long command: the first asks it to stop at the next step (so it can save and say
what goes on), the second stops at once (nothing saved). SIGTERM (a `kill`, a job scheduler) and SIGHUP (the
terminal went away) ask the same: `run --wait --cleanup` deletes its certification "on every exit".

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


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SAID = {signal.SIGINT: "Interrupted", signal.SIGTERM: "Terminated (SIGTERM)", signal.SIGHUP: "Hung up (SIGHUP)"}


@dataclass
class StopRequest:
    """`requested` by the first ctrl-c (or SIGTERM, SIGHUP); `forced` by the second (which stops at once: nothing
    more is done)."""

    requested: bool = False
    forced: bool = False
    signum: int = signal.SIGINT  # the first signal's

    @property
    def exit_code(self) -> int:
        """128 + the signal, as a shell reports a process it stopped: 130 for ctrl-c, 143 for SIGTERM, 129 for SIGHUP."""
        return 128 + int(self.signum)

    @property
    def said(self) -> str:
        """"Interrupted", "Terminated (SIGTERM)", "Hung up (SIGHUP)"."""
        return _SAID.get(signal.Signals(self.signum), "Stopped")


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[StopRequest]:
    """Within the block, the first SIGINT, SIGTERM or SIGHUP sets `requested`; a second raises KeyboardInterrupt."""
    request = StopRequest()

    def handler(signum: int, frame: FrameType | None) -> None:
        if request.requested:
            request.forced = True  # said before raising: asyncio may turn it into a cancellation elsewhere
            raise KeyboardInterrupt
        request.requested, request.signum = True, signum

    previous = {}
    try:
        for signum in STOP_SIGNALS:
            # An ignored signal stays ignored: `nohup` ignores SIGHUP so the command outlives its terminal (a hang-up
            # must not stop it, nor `--cleanup` delete its certification), and a background job ignores SIGINT.
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread: keep the default behaviour
        yield request
        return
    try:
        yield request
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)
