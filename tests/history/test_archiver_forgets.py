"""An archiver left running for weeks (a console's or `nvcre controller`'s engine) remembers nothing of the
certifications deleted after it archived them, and keeps only its latest lines of what it archived and what failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import engine_cache
from nvcre_tui.engine.history import Archiver, HistoryQuery
from nvcre_tui.engine.history import archive
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION

Obj = dict[str, Any]
DONE = [{"type": "Failed", "status": "True", "reason": "X", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def _finished(name: str, uid: str) -> Obj:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "1"},
            "spec": {"target": {}, "categories": [{"domain": "communication", "variant": "nccl-loopback"}]},
            "status": {"conditions": DONE, "summary": {"result": "FAILED"}}}


async def test_deleted_certifications_leave_nothing_behind_in_the_archiver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "KEPT", 4, raising=False)  # the lines kept (a write to the history per certification is what costs)
    cache = engine_cache(MemoryStore(ManualClock()))
    await cache.start()
    history = tmp_path / "history.db"
    archiver = Archiver(history, cache, "test").attach()
    cycles = 10
    try:
        for i in range(cycles):
            cert = _finished("burn-in", f"uid-{i}")  # one name for ever, as a nightly burn-in
            cache.observe(CERTIFICATION, cert)  # finished: archived as it is seen (it has no Workflow to wait for)
            if i % 2:
                assert archiver.archive_now(cert)  # as `certification delete` and the console's `x` do first
            cache.forget(CERTIFICATION, cert)
        assert archiver._done == set() and archiver._pending == {}
        assert len(archiver.archived) == 4 and archiver.archived[-1] == "default/burn-in"
    finally:
        archiver.close()
        await cache.stop()
    assert len(HistoryQuery(history).certifications()) == cycles  # every one archived, once
