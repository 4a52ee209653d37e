"""The durable embedded store: SQLite in WAL mode, shared by every nvcre process on one machine."""

from .database import FORMAT, StoreFileError
from .imports import IMPORTED_SUFFIX, SESSION_PROPERTY, import_json_state, open_store
from .store import SqliteStore

__all__ = ["SqliteStore", "StoreFileError", "open_store", "import_json_state", "FORMAT", "SESSION_PROPERTY", "IMPORTED_SUFFIX"]
