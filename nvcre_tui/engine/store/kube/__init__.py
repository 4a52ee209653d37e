"""KubeStore: the ResourceStore on a Kubernetes API server, over kubernetes-asyncio.

Modules: paths (REST layout of any kind), answers (Status -> store errors), retry (backoff policy and
request counts), transport (the one ApiClient; requests and watch streams), watch (streams that last),
store (the protocol itself).
"""

from .retry import RequestStats, RetryPolicy
from .store import DEFAULT_PAGE_SIZE, DEFAULT_WATCH_TIMEOUT, KubeStore

__all__ = ["KubeStore", "RetryPolicy", "RequestStats", "DEFAULT_PAGE_SIZE", "DEFAULT_WATCH_TIMEOUT"]
