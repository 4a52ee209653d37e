"""The ResourceStore contract, written once and run against every store.

Subclass `StoreContract` in a test module (test_memory_store.py, later test_kube_store.py) that provides:
  store          a fresh ResourceStore whose timestamps come from `clock` (it may hold other namespaces' objects)
  clock          the ManualClock the store reads
  history_limit  how many changes the store retains for watch replay (small, e.g. 8)
and may override (as fixtures in the subclass):
  capabilities   which of fixtures.ALL_CAPABILITIES the store has (default: all); tests needing a
                 missing one skip with its name (a bare kube-apiserver has no GC and no test clock)
  make_namespace an async callable that makes a namespace exist (default: nothing to do); stores on an
                 API server need namespaces before objects go in them
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from .contract_lifecycle import LifecycleContract
from .contract_model import ModelContract
from .contract_objects import ObjectsContract
from .fixtures import ALL_CAPABILITIES

__all__ = ["StoreContract"]


class StoreContract(ObjectsContract, LifecycleContract, ModelContract):
    """Every behaviour a ResourceStore must show; test methods, and two overridable fixtures."""

    @pytest.fixture
    def capabilities(self) -> frozenset[str]:
        return ALL_CAPABILITIES

    @pytest.fixture
    def make_namespace(self) -> Callable[[str], Awaitable[None]]:
        async def nothing_to_do(namespace: str) -> None:
            return None

        return nothing_to_do
