"""Errors that reach a user: bad input, described by where it is and what is wrong."""

from __future__ import annotations

from collections.abc import Iterable


class InputError(Exception):
    """Bad input: one or more one-line messages of the form `where: what`.

    The CLI prints each message on its own line and exits with code 2; nothing is created.
    """

    def __init__(self, messages: str | Iterable[str]) -> None:
        self.messages: list[str] = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


class BadValue(ValueError):
    """A value nvcre refuses on purpose (not a duration, not a Kubernetes quantity, an unknown metric, a label selector
    that does not parse): its message is a sentence naming the value and what is wrong, which a user reads as it is
    (store.errors.failure_line). A plain ValueError read as "a bug in nvcre (ValueError: ...)" where it reached one, as
    in an object edited by hand on a cluster (a Job's timeout past the maximum, which the CRD's pattern admits). A
    ValueError still to every caller that catches one (pydantic's validators among them)."""


def field_path(loc: Iterable[str | int]) -> str:
    """Render a location tuple as a field path: ("spec", "categories", 1, "x") -> spec.categories[1].x."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path
