"""The ResourceStore: the engine's only window on the world (see protocol.py for the contract).

Implementations: memory (tests, benches), sqlite (the simulator's durable store), kube (a real API server over
kubernetes-asyncio); cache.py is the one watch cache over any of them, writethrough.py feeds our own writes into
it, cacheview.py keeps one kind of it as a reader sorts, filters and groups it, from the keys it notes as they
change. Imports from the engine only its leaves (clock, errors, names, printable) and, as a type, the KubeTarget
that KubeStore connects to: everything above depends on it, never the other way.
"""

from .errors import AlreadyExists, Conflict, Forbidden, Gone, Invalid, NotFound, NotKubernetes, RetryableError, ServerError, StoreError, Timeout, TooManyRequests, Unavailable
from .memory import DEFAULT_HISTORY_LIMIT, MemoryStore
from .protocol import (
    BATCH_JOB,
    CERTIFICATION,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CONFIGMAP,
    CRD,
    EVENT,
    JOB,
    KNOWN_KINDS,
    LEASE,
    NAMESPACE,
    NODE,
    NVCRE_GROUP,
    POD,
    ROLE,
    ROLE_BINDING,
    SERVICE,
    SERVICE_ACCOUNT,
    WORKFLOW,
    WORKLOADRUN,
    LabelSelectorInput,
    ListResult,
    ResourceKind,
    ResourceStore,
    WatchEvent,
    WatchEventType,
    kind_of,
)
from .readonly import ReadOnlyStore
from .selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from .sqlite import SqliteStore, StoreFileError, import_json_state, open_store

__all__ = [
    "StoreError", "NotFound", "AlreadyExists", "Conflict", "Gone", "Forbidden", "Invalid", "NotKubernetes",
    "RetryableError", "TooManyRequests", "ServerError", "Timeout", "Unavailable",
    "ResourceStore", "ResourceKind", "WatchEvent", "WatchEventType", "ListResult", "LabelSelectorInput",
    "NVCRE_GROUP", "CERTIFICATION", "WORKFLOW", "JOB", "WORKLOADRUN", "NODE", "CONFIGMAP", "EVENT", "POD", "LEASE",
    "NAMESPACE", "SERVICE_ACCOUNT", "SERVICE", "CLUSTER_ROLE", "CLUSTER_ROLE_BINDING", "ROLE", "ROLE_BINDING",
    "CRD", "BATCH_JOB", "KNOWN_KINDS", "kind_of",
    "MemoryStore", "DEFAULT_HISTORY_LIMIT", "ReadOnlyStore", "SqliteStore", "StoreFileError", "open_store",
    "import_json_state",
    "LabelSelector", "FieldSelector", "parse_label_selector", "parse_field_selector",
]
