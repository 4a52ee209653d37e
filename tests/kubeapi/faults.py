"""Injected failures: answer a matching request with an error Status, slowly, by resetting the connection,
by cutting (or stalling) an answer part-way through its body, or by dropping a watch stream after N events;
optionally after the write was committed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Fault", "Faults", "DEFAULT_MESSAGES"]

DEFAULT_MESSAGES = {
    409: "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest "
         "version and try again",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


@dataclass
class Fault:
    """What to break and for which requests (regexes searched in the method, path, raw query, user agent).

    `times` None means every matching request; `after_commit` lets a write happen before the error answer
    (a server that timed out after committing); `drop_stream_after` ends a watch abruptly after N events;
    `expire_stream_after` ends it after N events with an ERROR event carrying 410 Expired (what a watch
    served from etcd sends after a compaction).
    """

    method: str | None = None
    path: str | None = None
    query: str | None = None
    user_agent: str | None = None
    status: int | None = None
    reason: str | None = None
    message: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    drop_stream_after: int | None = None
    expire_stream_after: int | None = None  # a watch sends an ERROR 410 Expired event after N events, then ends
    end_stream_after: int | None = None  # a watch ends cleanly (its last chunk sent) after N events
    send_first: tuple[bytes, ...] = ()  # raw lines a watch stream sends before its events (a hostile proxy's, a buggy server's)
    reset_connection: bool = False
    cut_body_after: int | None = None  # bytes of a (not already streamed) answer's body sent before the connection ends
    stall: float = 0.0                 # seconds of silence at the cut before the connection ends (real seconds)
    after_commit: bool = False
    times: int | None = None
    hits: int = field(default=0, compare=False)

    def matches(self, method: str, path: str, query: str, user_agent: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        return all(pattern is None or re.search(pattern, value) for pattern, value in (
            (self.method and f"^(?:{self.method})$", method), (self.path, path), (self.query, query),
            (self.user_agent, user_agent)))

    @property
    def spent(self) -> bool:
        return self.times is not None and self.hits >= self.times


class Faults:
    """The active faults; the first one that matches a request is used (and counted)."""

    def __init__(self) -> None:
        self.active: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        self.active.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        self.active = [f for f in self.active if f is not fault]

    def clear(self) -> None:
        self.active.clear()

    def take(self, method: str, path: str, query: str, user_agent: str) -> Fault | None:
        for fault in self.active:
            if fault.matches(method.upper(), path, query, user_agent):
                fault.hits += 1
                return fault
        return None
