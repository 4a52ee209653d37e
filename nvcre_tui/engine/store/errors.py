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
    "NamespaceTerminating",
    "ReadOnlyRefusal",
    "Unauthorized",
    "Invalid",
    "NotKubernetes",
    "RetryableError",
    "TooManyRequests",
    "ServerError",
    "Timeout",
    "Unavailable",
    "describe",
    "failure_line",
    "said",
    "CUT_SHORT",
]


def describe(kind: object, name: str | None = None, namespace: str | None = None) -> str:
    """`Workflow default/wf-1`, `Node gpu-01`, or just `Workflow` when there is no name."""
    if not name:
        return f"{kind}" + (f" in namespace {namespace}" if namespace else "")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


class StoreError(Exception):
    """Base of every store error; `status` is the matching HTTP code (KubeStore maps both ways)."""

    status: ClassVar[int] = 500
    # True for a transient answer (overload, server error, timeout, lost connection): the same request
    # may succeed later, so callers requeue with backoff instead of failing the object.
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, kind: object = "", name: str = "", namespace: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = str(kind)
        # (API group, resource) of a ResourceKind: its kind name alone is ambiguous (nvcre's Job and batch's)
        group, plural = getattr(kind, "group", None), getattr(kind, "plural", None)
        self.resource = (group, plural) if isinstance(group, str) and isinstance(plural, str) else None
        self.read: bool | None = None  # the refused request was a read (GET), as KubeStore knows it; None: not known
        # The answer to a repeat of a write whose earlier try may have been applied, its answer lost (a 5xx, a timeout, a
        # cut connection): an AlreadyExists may then be of this very request's making (KubeStore sets it).
        self.repeated = False
        self.name = name
        self.namespace = namespace
        # Seconds the server asked us to wait (Retry-After), when it said so.
        self.retry_after = retry_after

    @classmethod
    def about(cls, kind: object, name: str | None, namespace: str | None, what: str,
              retry_after: float | None = None) -> StoreError:
        """Build the error as `<Kind> <namespace>/<name>: <what>`."""
        return cls(f"{describe(kind, name, namespace)}: {what}", kind=kind, name=name or "", namespace=namespace,
                   retry_after=retry_after)


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


class ReadOnlyRefusal(Forbidden):
    """A write the read-only wrapper refused (the wall, `--read-only`, a command that only looks): no RBAC said it."""


class NamespaceTerminating(Forbidden):
    """A create in a namespace being deleted (403 with the cause NamespaceTerminating, from the NamespaceLifecycle
    admission): never admitted again, as a Terminating namespace never becomes Active."""


class Unauthorized(Forbidden):
    """The server did not accept the credentials at all (401): a wrong or expired token, a client certificate it does
    not trust. A Forbidden to every caller that handles one; its own name where it is told."""

    status = 401
    CAUSE = ("the API server refused the kubeconfig's credentials: a wrong or expired token, or a client certificate it "
             "does not trust")

    @classmethod
    def about(cls, kind: object, name: str | None, namespace: str | None, what: str,
              retry_after: float | None = None) -> StoreError:
        """As StoreError's, saying what was refused: every message that carries it names the cause."""
        return super().about(kind, name, namespace, f"{what} ({cls.CAUSE})", retry_after)

    def without_credentials(self, who: str) -> Unauthorized:
        """This refusal where the kubeconfig gave no credentials at all (`who`: which kubeconfig and user): there was
        no token to be wrong or expired, so the cause says what is missing instead."""
        cause = (f"{who}, holds no credentials (no token, tokenFile, client certificate, username and password, exec "
                 "plugin or auth-provider), and the API server takes no anonymous requests: give that user credentials")
        error = Unauthorized(self.message.replace(self.CAUSE, cause), kind=self.kind, name=self.name,
                             namespace=self.namespace, retry_after=self.retry_after)
        error.resource, error.read = self.resource, self.read
        return error


class NoCredentials(Unauthorized):
    """No credentials could be had for the request, which was never sent: a kubeconfig exec credential plugin failed
    (one that needs a login while the console holds the terminal). An Unauthorized to every caller (no RBAC word), but
    not the server's refusal: the message is the plugin's failure alone."""

    @classmethod
    def about(cls, kind: object, name: str | None, namespace: str | None, what: str,
              retry_after: float | None = None) -> StoreError:
        return StoreError.about.__func__(cls, kind, name, namespace, what, retry_after)  # type: ignore[attr-defined]


class Invalid(StoreError, ValueError):
    """The object or request is malformed (422): missing name or namespace, wrong kind, bad selector."""

    status = 422


class NotKubernetes(StoreError):
    """The server the kubeconfig names is no Kubernetes API server (its /api answers 404, or no APIVersions): a wrong
    port or URL, a web server or a proxy. The message names the server; never retried, never taken as "not found"."""

    status = 404

    def __init__(self, server: str, answer: str) -> None:
        """`answer`: what /api answered (`404`, `HTTP 200 text/html: Welcome to nginx!`)."""
        self.server, self.detail = server, f"not a Kubernetes API server (/api answers {answer})"
        super().__init__(f"{server}: {self.detail}", kind="discovery")


class RetryableError(StoreError):
    """Base of the transient errors: retrying the same request later may succeed."""

    retryable = True


class TooManyRequests(RetryableError):
    """The server is overloaded or rate-limits us (429); `retry_after` says how long to wait."""

    status = 429


class ServerError(RetryableError):
    """The server failed (500, 502, 503 and other 5xx); the request may or may not have taken effect."""

    status = 503


class Timeout(RetryableError):
    """No answer in time: the client gave up, or the server answered 504 / reason Timeout."""

    status = 504


class Unavailable(RetryableError):
    """No connection: refused, reset, or dropped before the answer was complete."""

    status = 503


# What failed, for the store errors whose message is the server's own words and does not say it (`etcdserver: leader
# changed`); every other one says it (`connection lost`, `no answer within 10s`, `is forbidden`, `not found`).
FAILED_AS: tuple[tuple[type[StoreError], str], ...] = (
    (ServerError, "the API server failed"), (TooManyRequests, "the API server is throttling requests (429)"))
# What an error nvcre did not expect is (a KeyError, a TypeError out of its own code): its class and words follow, in
# parentheses, as the detail a report of it needs.
BUG = "a bug in nvcre"
NVCRE_PACKAGE = "nvcre_tui."


# What a lost connection was, in words (store/kube/lost.py): where the client library's error has none at all (an
# OSError aiohttp passes on with the arguments of one the socket or TLS layer raised bare), its class name was said
# instead (`connection lost (ClientOSError)`); where it has Python's repr of its parser's error, that.
CUT_SHORT = "the connection closed before the answer ended"


def said(error: BaseException, otherwise: str) -> str:
    """An error's own words on one line, or `otherwise` (what happened, in words) where it has none: never its class
    name, which is Python's word, not a reason."""
    return " ".join(str(error).split()) or otherwise


def failure_line(error: BaseException, *, unexpected: str = BUG, about: str = "", limit: int | None = None) -> str:
    """Any error as a user reads it, on one line: what failed and where, never a Python class name leading it
    (`Forbidden: ...`, `KeyError: 'x'` read as no other message does). The one place for this wording: the CLI's last
    line (cli.store_error_line), the engine's ReconcileError conditions and told failures, `run --cleanup`, `setup
    reset`. A store error says its own message (the object it names, and why), `the API server failed` before a 5xx's
    words; an error nvcre raises to be told (a RenderError, a DiagnoseError, a BadValue: its message is a sentence) says its message;
    anything else is `unexpected`, its class and words in parentheses. `about`: the object the line is said of already
    (`Workflow default/x`), not named again where the error's message starts with it. `limit`: at most that many
    characters."""
    words = said(error, "")
    if about and words.startswith(f"{about}: "):
        words = words[len(about) + 2:]
    if isinstance(error, StoreError):
        what = next((said for kind, said in FAILED_AS if isinstance(error, kind)), None)
        line = f"{what}: {words}" if what else words
    elif type(error).__module__.startswith(NVCRE_PACKAGE) and words:
        line = words
    else:
        line = f"{unexpected} ({type(error).__name__}{': ' + words if words else ''})"
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"
