"""Shared pieces of the result parsers: the one error type, failures, line handling, strict numbers."""

from __future__ import annotations

import io
import itertools
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

#: Reasons a ParseError carries; callers branch on these, the message is for people.
NO_DATA = "NoDataCollected"
WRONG_FORMAT = "WrongFormat"
#: The failure of a result whose output reads a value no hardware can measure (measurements.Bound): no measurement.
IMPLAUSIBLE = "ImplausibleMeasurement"

BOM = "\ufeff"

_DEFAULT_MESSAGES = {
    NO_DATA: "no result data found in the input",
    WRONG_FORMAT: "input is not in the expected format",
}


# Values each finite whose sum is not (1e308 and up): no tool prints them, and their average read inf, a pass of any
# threshold written `value >= X`, and JSON no reader takes (Infinity).
PAST_FLOAT = "add up past the largest number a float holds (no tool prints such values)"


class ParseError(ValueError):
    """The only exception a parser raises for any input text.

    `reason` is a stable machine word (NoDataCollected, WrongFormat); `message` says what is
    wrong and where, in one line, without a traceback.
    """

    def __init__(self, reason: str, message: str = "") -> None:
        self.reason = reason
        self.message = message or _DEFAULT_MESSAGES.get(reason, reason)
        super().__init__(f"{self.message} ({self.reason})")


@dataclass(frozen=True)
class Failure:
    """Why a parsed result means the node (or group) failed: a reason word and a readable message."""

    reason: str
    message: str
    gpus: tuple[int, ...] = ()


def as_lines(source: Iterable[str] | str) -> Iterator[str]:
    """Lines of `source`: a whole text is split at "\n" only (keeping it); any other iterable is used as is.

    Carriage returns stay inside their line (progress bars rewrite a line with them): open files with
    `newline="\n"` so Python does not turn them into line breaks either. A UTF-8 byte order mark before the first
    line is dropped (Windows editors write one), as the YAML and JSON readers drop it.
    """
    if isinstance(source, str):
        return _without_bom(iter(io.StringIO(source, newline="\n")))
    if isinstance(source, io.TextIOBase):
        # yields text lines; decoding errors are turned by `reading` (no per-line wrapper)
        return _without_bom(iter(source))
    return _without_bom(_checked(source))


def _without_bom(lines: Iterator[str]) -> Iterator[str]:
    """`lines` with a byte order mark removed from the first (the rest are passed on untouched, at C speed)."""
    first = next(lines, None)
    if first is None:
        return iter(())
    return itertools.chain((first.removeprefix(BOM),), lines)


@contextmanager
def reading() -> Iterator[None]:
    """Around a parse: a text stream's undecodable bytes become ParseError(WrongFormat)."""
    try:
        yield
    except UnicodeDecodeError as error:
        raise ParseError(WRONG_FORMAT, f"input is not UTF-8 text ({error.reason})") from None


def _checked(lines: Iterable[str]) -> Iterator[str]:
    """Iterate `lines`, turning undecodable bytes into a ParseError instead of UnicodeDecodeError."""
    iterator = iter(lines)
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError as error:
            raise ParseError(WRONG_FORMAT, f"input is not UTF-8 text ({error.reason})") from None
        if not isinstance(line, str):
            raise ParseError(WRONG_FORMAT, f"expected text lines, got {type(line).__name__}")
        yield line


# kubelet prefixes every pod-log line with an RFC 3339 timestamp (nanoseconds, Z or an offset).
_KUBELET = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ", re.ASCII)
def split_kubelet_prefix(line: str) -> tuple[datetime | None, str]:
    """(timestamp, rest) of a pod-log line; (None, line) when it carries no kubelet timestamp."""
    # Cheap test first: this runs on every line of logs that can be hundreds of megabytes.
    if len(line) < 21 or line[4] != "-" or line[10] != "T" or not line[:4].isdigit():
        return None, line
    match = _KUBELET.match(line)
    if match is None:
        return None, line
    return parse_timestamp(match.group(1)), line[match.end() :]


def strip_kubelet_prefix(line: str) -> str:
    """The line without its kubelet timestamp: no regex and no datetime, it runs on every line.

    It checks the shape (date, 'T', a zone before the first space) rather than every digit; the rest
    of the line is validated by whoever reads it.
    """
    if line[10:11] != "T" or line[4:5] != "-" or line[7:8] != "-":
        return line
    cut = line.find(" ", 19, 40)
    if cut < 0 or not (line[cut - 1] == "Z" or line[cut - 6] in "+-"):
        return line
    return line[cut + 1 :]


def parse_timestamp(text: str) -> datetime | None:
    """An ISO/RFC 3339 or `YYYY-mm-dd HH:MM:SS[.f]` timestamp; None if invalid.

    A timestamp with a zone becomes UTC. One without (Megatron, NeMo) stays naive: it is the
    cluster's local time, whatever that is, and must never be compared with an aware time.
    """
    try:
        value = datetime.fromisoformat(text.strip())
        if value.tzinfo is None:
            return value
        return value.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 shifted out of range by an offset
        return None


# Python's float()/int() accept "nan", "inf", "1_000" and non-ASCII digits; tool output never holds
# those, so numbers are matched strictly first and a cell that is anything else makes the row invalid.
_UNSIGNED = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)
_SIGNED = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)


def unsigned_number(token: str) -> float | None:
    """The value of a non-negative decimal token, or None when the token is not one."""
    if _UNSIGNED.fullmatch(token) is None:
        return None
    value = float(token)
    return value if value != float("inf") else None


def unsigned_magnitude(token: str) -> float | None:
    """Like unsigned_number, but inf ("inf", or a number too large for a float) is a value: for cells where an
    infinite reading means something (a data check's error or count), never an unreadable cell to leave out."""
    if _UNSIGNED.fullmatch(token) is not None:
        return float(token)
    return math.inf if token.lower() in ("inf", "infinity") else None


def signed_number(token: str) -> float | None:
    """The value of a decimal token that may carry a sign, or None."""
    if _SIGNED.fullmatch(token) is None:
        return None
    value = float(token)
    return value if abs(value) != float("inf") else None


def overflows(token: str) -> bool:
    """Whether `token` is a decimal number (sign allowed) too large for a float: float() reads it as inf."""
    return _SIGNED.fullmatch(token) is not None and math.isinf(float(token))


def unsigned_int(token: str) -> int | None:
    """The value of an ASCII-digit token, or None."""
    # The length cap keeps int() away from its 4300-digit limit (a ValueError) on hostile input.
    if len(token) <= 40 and token.isascii() and token.isdigit():
        return int(token)
    return None


def signed_int(token: str) -> int | None:
    """The value of an optionally negative ASCII-digit token, or None."""
    digits = token[1:] if token[:1] == "-" else token
    if digits and len(digits) <= 40 and digits.isascii() and digits.isdigit():
        return int(token)
    return None


def iso(value: datetime | None) -> str | None:
    """A datetime as ISO 8601 text for JSON output."""
    return None if value is None else value.isoformat()
