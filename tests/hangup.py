"""A child a test hangs up on (SIGHUP) must not inherit an ignored SIGHUP: a suite run under nohup passes SIG_IGN
down to every process it starts, and the engine it means to kill would live on."""

from __future__ import annotations

import signal


def default_hangup() -> None:
    """A Popen preexec_fn: SIGHUP back to its default action in the child."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def default_interrupt() -> None:
    """A Popen preexec_fn for a child a test presses ctrl-c on: SIGINT back to its default in the child. A suite run
    as a background job (a shell without job control: CI) ignores SIGINT, every process it starts inherits that, and
    nvcre rightly leaves an ignored SIGINT ignored: the child ran on to its end (exit 0, not 130)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
