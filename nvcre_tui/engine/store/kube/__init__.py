"""KubeStore: the ResourceStore on a Kubernetes API server, over kubernetes-asyncio.

Modules: paths (REST layout of any kind), answers (Status -> store errors), retry (backoff policy and
request counts), transport (the one ApiClient; requests and watch streams), watch (streams that last),
store (the protocol itself).

KubeStore and its defaults are imported from store.py on first use: importing this package (as answers' and
paths' parent) must not import kubernetes-asyncio and aiohttp, about 0.5 s of CPU a simulated run or `--help` never
needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .retry import RequestStats, RetryPolicy

if TYPE_CHECKING:
    from .store import DEFAULT_PAGE_SIZE, DEFAULT_WATCH_TIMEOUT, KubeStore

__all__ = ["KubeStore", "RetryPolicy", "RequestStats", "DEFAULT_PAGE_SIZE", "DEFAULT_WATCH_TIMEOUT"]

_FROM_STORE = frozenset({"KubeStore", "DEFAULT_PAGE_SIZE", "DEFAULT_WATCH_TIMEOUT"})


def __getattr__(name: str) -> Any:
    if name in _FROM_STORE:
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
