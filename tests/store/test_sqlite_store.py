"""SqliteStore: the shared contract (fresh and reopened), plus what only a file-backed store has."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import CONFIGMAP, WORKFLOW, ReadOnlyStore, ResourceStore
from nvcre_tui.engine.store.sqlite import SqliteStore

from .contract import StoreContract
from .fixtures import obj

HISTORY_LIMIT = 8


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def history_limit() -> int:
    return HISTORY_LIMIT


async def _leave_traces(path: Path, clock: ManualClock) -> None:
    """A previous process's work: an object the contract never lists, and a Workflow created and deleted."""
    earlier = SqliteStore(path, clock, history_limit=HISTORY_LIMIT)
    await earlier.create(CONFIGMAP, obj("left-over", namespace="elsewhere"))
    await earlier.create(WORKFLOW, obj("gone", namespace="elsewhere"))
    await earlier.delete(WORKFLOW, "gone", "elsewhere")
    await earlier.close()


@pytest.fixture(params=["fresh", "reopened"])
async def store(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> AsyncIterator[SqliteStore]:
    """A new store file, and one reopened after another store wrote and closed it."""
    path = tmp_path / "store.db"
    if request.param == "reopened":
        await _leave_traces(path, clock)
    opened = SqliteStore(path, clock, history_limit=HISTORY_LIMIT)
    yield opened
    await opened.close()


class TestSqliteStoreContract(StoreContract):
    """Every contract test, against SqliteStore."""


def test_sqlite_and_its_read_only_view_satisfy_the_protocol(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    assert isinstance(store, ResourceStore)
    assert isinstance(ReadOnlyStore(store), ResourceStore)
