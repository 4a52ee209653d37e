"""The engine remembers, per Workflow, an episode of failed reads of its nodes' other pods (Context.unread) until a
read answers. A Workflow deleted (or finished) mid-episode is never read again, so its episode stayed for the rest of
the process: a long-running controller on a flaky API server kept one for every such Workflow. They are bounded, as
the runs' progress is (the oldest forgotten: counted anew if its Workflow is read again)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.context import MAX_UNREAD, Context
from nvcre_tui.engine.store import MemoryStore
from nvcre_tui.engine.store.errors import Unavailable
from nvcre_tui.engine.store.protocol import POD


class FailingOccupants:
    """A runner whose pods list answers 503 every time."""

    async def others_on(self, nodes: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        raise Unavailable.about(POD, None, None, "the API server failed: 503 etcdserver: leader changed")


def test_episodes_of_workflows_never_read_again_are_bounded() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    ctx = Context(store=MemoryStore(clock), clock=clock, catalog=default_catalog(), runner=FailingOccupants())  # type: ignore[arg-type]

    async def each_once() -> None:
        for n in range(MAX_UNREAD + 10):
            wf = {"metadata": {"name": f"wf-{n}", "namespace": "default", "uid": f"uid-{n}"}}
            with pytest.raises(Unavailable):
                await asyncio.wait_for(ctx.node_occupants(wf, ["gpu-node-01"]), 5)

    asyncio.run(each_once())
    assert len(ctx.unread) == MAX_UNREAD, len(ctx.unread)
    assert "uid-0" not in ctx.unread and f"uid-{MAX_UNREAD + 9}" in ctx.unread  # the oldest forgotten
