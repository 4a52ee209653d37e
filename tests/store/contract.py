"""The ResourceStore contract, written once and run against every store.

Subclass `StoreContract` in a test module (test_memory_store.py, later test_kube_store.py) that provides:
  store          a fresh ResourceStore whose timestamps come from `clock` (it may hold other namespaces' objects)
  clock          the ManualClock the store reads
  history_limit  how many changes the store retains for watch replay (small, e.g. 8)
"""

from __future__ import annotations

from .contract_lifecycle import LifecycleContract
from .contract_model import ModelContract
from .contract_objects import ObjectsContract

__all__ = ["StoreContract"]


class StoreContract(ObjectsContract, LifecycleContract, ModelContract):
    """Every behaviour a ResourceStore must show; test methods only."""
