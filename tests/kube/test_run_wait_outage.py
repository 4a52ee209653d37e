"""`run --wait` over an API server whose watch streams drop: one outage, said once, and its end said before the report."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from nvcre_tui.cli.run import progress
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.engine import engine_cache
from tests.kube.cluster import installed, store_on
from tests.kubeapi import Fault


async def test_dropped_watch_streams_are_one_outage_said_once_and_its_end_before_the_report(tmp_path: Path) -> None:
    """Every certification watch dropped at once: each drop moved the outage's "since", and `run --wait` said
    "no answer from the store since ..." again for each, and never "the store answers again" before its report."""
    clock = SystemClock()
    async with installed(tmp_path) as (server, kubeconfig):
        store = await store_on(kubeconfig, clock, "nvcre-test", watch_patience=0.0)  # a dropped stream reaches the cache
        writer = await store_on(kubeconfig, clock, "kubectl")  # another client: its answers are not the cache's
        cache = engine_cache(store)  # every kind a session reads
        try:
            cert = await writer.create(CERTIFICATION, {
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                         "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}})
            await cache.start()
            session: Any = SimpleNamespace(clock=clock, cache=cache, store=store, engine=True)
            console = Console(file=io.StringIO(), width=300)
            finished = progress.progress_check(session, "c", "default", console, SimpleNamespace(requested=False))  # type: ignore[arg-type]
            assert not await finished()
            dropping = server.faults.add(Fault(method="GET", query=r"watch=", drop_stream_after=0))
            seen: set[str] = set()
            deadline, touch = time.monotonic() + 8, 0
            while dropping.hits < 4 and time.monotonic() < deadline:  # several drops in a row
                touch += 1  # a change every watch would send: each stream dropped before it
                cert = await writer.update(CERTIFICATION, {**cert, "metadata": {**cert["metadata"], "annotations": {"touch": str(touch)}}})
                await asyncio.sleep(0.1)
                silence = cache.silence()
                if silence is not None:
                    seen.add(silence)
                    assert not await finished()
                await asyncio.sleep(0.2)
            assert dropping.hits >= 4 and len(seen) == 1, seen  # the outage's "since" moved with each drop: it no longer does
            server.faults.remove(dropping)
            cert["status"] = {"conditions": [{"type": "Succeeded", "status": "True", "reason": "AllPassed", "message": "done",
                                               "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
            await writer.update_status(CERTIFICATION, cert)
            deadline = time.monotonic() + 10
            while not await finished():
                assert time.monotonic() < deadline, console.file.getvalue()  # type: ignore[attr-defined]
                await asyncio.sleep(0.05)
        finally:
            await cache.stop()
            await store.close()
            await writer.close()
    lines = [line for line in console.file.getvalue().splitlines() if "store" in line or "Certification" in line]  # type: ignore[attr-defined]
    assert len(lines) == 3, lines
    assert lines[0].startswith("[watch] no answer from the store since "), lines
    assert lines[1:] == ["[watch] the store answers again", lines[2]] and lines[2].startswith("[watch] Certification succeeded"), lines
