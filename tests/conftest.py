"""Every test: $XDG_STATE_HOME in a temporary folder, so nothing (the simulator state, the certification
history) is ever written under the real ~/.local/state; and an empty trust store in place of the machine's.

No test talks to a server it did not start: every TLS test brings its own CA (tests/kubeapi/tls.py). The
machine's CA bundle would only be parsed, 20 ms each time a client makes an SSL context (two per
Kubernetes client, hundreds of times per suite run), and a test would depend on what that bundle holds."""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """The same for what runs before any test's own fixtures (session and module fixtures, collection): a run of the
    suite wrote 14 test certifications into the real history, which `nvcre history` then merged with an operator's."""
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="nvcre-tests-state-")
    os.environ.pop("NVCRE_HISTORY", None)
    os.environ.pop("NVCRE_STATE", None)
    # The cyclic collector's first generation every 10,000 allocations, not 700: a test process holds every module the
    # suite imports and each test makes apps, sessions and fleets, so full passes came every few tests and walked it
    # all (a sixth of the CPU of a run of console and restart tests; a tenth with this, for 20 % more memory). Garbage
    # is still collected, and what a test asserts never depends on when.
    gc.set_threshold(10_000, 10, 10)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (README's test command): three workers for every two CPUs this process may run on. Many tests wait
    on timers with their CPU idle (emulated API servers, Lease expiry, `--timeout` runs): two workers on two cores kept
    them about 60 % busy, 605 s for the suite; three took 488 s."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, (3 * cpus + 1) // 2)


@pytest.fixture(scope="session")
def _empty_trust_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("trust-store")
    (folder / "ca-certificates.crt").write_text("")
    (folder / "certs").mkdir()
    return folder / "ca-certificates.crt", folder / "certs"


@pytest.fixture(scope="session")
def _state_homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state-homes")


@pytest.fixture(autouse=True)
def _private_state_home(_state_homes: Path, monkeypatch: pytest.MonkeyPatch, _empty_trust_store: tuple[Path, Path]) -> Path:
    # Not tmp_path_factory.mktemp: it numbers a folder by listing every one made before it, and made one per test
    # that is quadratic (5 s of CPU a worker over the suite's 2,700 tests each, and every tmp_path listed them too).
    home = Path(tempfile.mkdtemp(prefix="state-home-", dir=_state_homes))
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    monkeypatch.delenv("NVCRE_HISTORY", raising=False)
    bundle, folder = _empty_trust_store
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # OpenSSL reads these instead of /etc/ssl: nothing to parse
    monkeypatch.setenv("SSL_CERT_DIR", str(folder))
    return home


@pytest.fixture(autouse=True)
def _short_wait_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """How often `run --wait` on a cluster looks whether its certification finished (1 s), a deletion's wait looks at
    the cache (0.5 s), and a viewer's wait asks for the engine Lease (5 s): each wait ended up to a whole interval after
    its condition held (a Lease of 2 or 3 s was taken over after 5), which every emulator test of `run --wait`, `delete
    --wait` and `--cleanup` waited out. A look reads the cache, an ask is one request: a tenth of a second and 1 s here.
    What a test asserts of a wait (its deadline, whom it follows, when a Lease is free) does not depend on them."""
    monkeypatch.setattr("nvcre_tui.cli.run.follow.WATCH_POLL_SECONDS", 0.1)
    monkeypatch.setattr("nvcre_tui.engine.history.deletion.POLL_SECONDS", 0.1)
    monkeypatch.setattr("nvcre_tui.engine.history.deletion.TAKE_OVER_SECONDS", 1.0)
    monkeypatch.setattr("nvcre_tui.cli.run.follow.TAKE_OVER_SECONDS", 1.0)  # cli/run/follow.py's own name for the same interval
