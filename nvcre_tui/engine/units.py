"""Kubernetes quantities ("500Gi", "64", "250m") and Go durations ("1h30m", "15m")."""

from __future__ import annotations

from collections.abc import Sequence

import math
import re
from decimal import Decimal, InvalidOperation

from nvcre_tui.engine.errors import BadValue

QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$"
RESOURCE_QUANTITY_PATTERN = QUANTITY_PATTERN.replace("^[+-]?", "^[+]?", 1)  # a container's cpu or memory: never negative
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"
MAX_BYTES_PATTERN = r"^[0-9]+(K|M|G|T)?$"

_SUFFIX: dict[str, int | Decimal] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_DURATION_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_BYTE_UNIT = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

# Ranges of what users write (README, "Ranges"): past them a value is a typo, and it would overflow
# the clock's datetime arithmetic long before it meant anything.
MAX_DURATION_SECONDS = 366 * 24 * 3600  # a duration: at most 8784h (366 days)
MAX_BYTES = 2**44  # an nccl-tests size: at most 16T


def parse_quantity(text: str | int | float) -> Decimal:
    """The numeric value of a Kubernetes quantity; ValueError when it is not one."""
    match = _QUANTITY.match(str(text).strip())
    if not match:
        raise BadValue(f"not a Kubernetes quantity: {text!r}")
    number, suffix = str(match.group(1)), str(match.group(2) or "")
    try:
        value = Decimal(number)
    except InvalidOperation as error:  # pragma: no cover - the regex admits only decimals
        raise BadValue(f"not a Kubernetes quantity: {text!r}") from error
    if suffix not in _SUFFIX:  # an exponent ("8e3"); "E" alone is exa, "Ei" exbi
        return value * (Decimal(10) ** int(suffix[1:]))
    return value * Decimal(_SUFFIX[suffix])


def parse_duration(text: str) -> float:
    """Seconds in a Go duration such as "1h30m" or "90s" (or "0", as Go's time.ParseDuration takes it); ValueError
    when it is not one."""
    if text == "0":
        return 0.0
    if re.match(DURATION_PATTERN, text[1:]) and text[:1] == "-":
        raise BadValue(f"a duration cannot be negative, got {text!r}")
    if not re.match(DURATION_PATTERN, text or ""):
        raise BadValue(f"not a duration (e.g. 90s, 15m, 1h30m): {text!r}")
    seconds = sum(float(n) * _DURATION_UNIT[unit] for n, unit in _DURATION_PART.findall(text))
    if not seconds <= MAX_DURATION_SECONDS:
        raise BadValue(f"duration {text!r} is longer than the maximum of {MAX_DURATION_SECONDS // 3600}h (366 days)")
    return seconds


def format_duration(seconds: float) -> str:
    """Compact human duration: 42m18s, 1h05m, 9s."""
    if not math.isfinite(seconds):
        return "∞" if seconds > 0 else "-"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


DAY_HOURS = 24
AGE_DAYS_FROM_HOURS = 48  # kubectl's AGE turns to days at two days; below it, format_duration's hours and minutes


def format_age(seconds: float) -> str:
    """A display age or time since ("finished 9d ago", `list`'s AGE): format_duration below two days, then days as
    kubectl's AGE says them (2d3h under 8 days, 9d, 2y30d past two years): "216h00m" took reading. Never for a value a
    user may copy into a Go duration (timeoutPerJob, --timeout), which has no day unit: format_duration there."""
    if not math.isfinite(seconds) or seconds < AGE_DAYS_FROM_HOURS * 3600:
        return format_duration(seconds)
    hours = int(seconds // 3600)
    days = hours // DAY_HOURS
    if days < 8:
        return f"{days}d{hours % DAY_HOURS}h" if hours % DAY_HOURS else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years, rest = divmod(days, 365)
    return f"{years}y{rest}d" if rest and years < 8 else f"{years}y"


def count(n: int, noun: str) -> str:
    """"1 node", "2 nodes"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def listed(names: Sequence[str], most: int = 5) -> str:
    """"a, b, c" or, past `most`, "a, b, c, d, e and 123 more": a message of bounded size whatever the fleet."""
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def parse_max_bytes(text: str) -> int:
    """nccl-tests -e size such as "16G" in bytes (K/M/G/T are powers of 1024, as nccl-tests reads them)."""
    match = re.match(r"^([0-9]+)(K|M|G|T)?$", text)
    if not match:
        raise BadValue(f"not a byte size (e.g. 16G): {text!r}")
    size = int(match.group(1)) * _BYTE_UNIT[match.group(2) or ""]
    if size > MAX_BYTES:
        raise BadValue(f"byte size {text!r} is larger than the maximum of 16T")
    return size
