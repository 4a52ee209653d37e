"""Store errors, one per API-server answer the engine reacts to; each names the object it is about."""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "StoreError",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Forbidden",
    "Invalid",
    "describe",
]


def describe(kind: object, name: str | None = None, namespace: str | None = None) -> str:
    """`Workflow default/wf-1`, `Node gpu-01`, or just `Workflow` when there is no name."""
    if not name:
        return f"{kind}" + (f" in namespace {namespace}" if namespace else "")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


class StoreError(Exception):
    """Base of every store error; `status` is the matching HTTP code (KubeStore maps both ways)."""

    status: ClassVar[int] = 500

    def __init__(self, message: str, *, kind: object = "", name: str = "", namespace: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = str(kind)
        self.name = name
        self.namespace = namespace

    @classmethod
    def about(cls, kind: object, name: str | None, namespace: str | None, what: str) -> StoreError:
        """Build the error as `<Kind> <namespace>/<name>: <what>`."""
        return cls(f"{describe(kind, name, namespace)}: {what}", kind=kind, name=name or "", namespace=namespace)


class NotFound(StoreError):
    """The object does not exist (404)."""

    status = 404


class AlreadyExists(StoreError):
    """An object with that name already exists (409 AlreadyExists)."""

    status = 409


class Conflict(StoreError):
    """Optimistic-concurrency failure: stale or missing resourceVersion, or a UID precondition (409)."""

    status = 409


class Gone(StoreError):
    """The requested resourceVersion is older than the retained history; list again (410)."""

    status = 410


class Forbidden(StoreError):
    """The write was refused (403); the read-only wrapper raises it for every write."""

    status = 403


class Invalid(StoreError, ValueError):
    """The object or request is malformed (422): missing name or namespace, wrong kind, bad selector."""

    status = 422
