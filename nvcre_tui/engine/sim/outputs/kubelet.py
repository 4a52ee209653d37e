"""The RFC 3339 timestamp kubelet puts in front of every pod-log line (`kubectl logs --timestamps`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


def kubelet_prefix(moment: datetime) -> str:
    """`2026-03-02T10:15:04.123456000Z ` (nanosecond field, Z for UTC, else the offset), with the space."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    offset = moment.utcoffset() or timedelta(0)
    if offset == timedelta(0):
        zone = "Z"
    else:
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}000{zone} "
