"""A child a test hangs up on (SIGHUP) must not inherit an ignored SIGHUP: a suite run under nohup passes SIG_IGN
down to every process it starts, and the engine it means to kill would live on."""

from __future__ import annotations

import signal


def default_hangup() -> None:
    """A Popen preexec_fn: SIGHUP back to its default action in the child."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
