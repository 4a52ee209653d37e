"""Per-node results in NVCRE's ConfigMap formats, so NVSentinel's certification monitor reads ours unchanged.

failed-nodes-<uid8>:    binaryData["failed-nodes.json.gz"]    gzip JSON [{name, reason, message}] sorted by (name, reason)
succeeded-nodes-<uid8>: binaryData["succeeded-nodes.csv.gz"]  gzip of one comma-joined line of sorted names
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterable, Mapping
from typing import Any

from nvcre_tui.engine.api.bodies import job_status
from nvcre_tui.engine.api.vocabulary import HARDWARE_FAILURE_DETECTED, THRESHOLD_VIOLATION, WORKLOAD_FAILED
from nvcre_tui.engine.judging.thresholds import INVALID_EXPRESSION


FAILED_KEY = "failed-nodes.json.gz"
# NVCRE's NodeFailureReason enum, which NVSentinel's certification monitor filters on. Our finer reasons
# are written as the nearest NVCRE reason, with the precise one leading the message.
NVCRE_REASONS = {HARDWARE_FAILURE_DETECTED, THRESHOLD_VIOLATION, WORKLOAD_FAILED}
SUCCEEDED_KEY = "succeeded-nodes.csv.gz"


def job_failures(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A Job's failedNodes as readers want them: each ThresholdViolation entry with the thresholds its group missed
    (the Job's status.evidence, stored once: a copy per entry was 0.23 KiB a node, and a full-scale Job of 3,300
    cloud-named nodes missing a threshold passed the 1.5 MiB an object may hold; 6,400 fit now)."""
    status = job_status(job)
    checked = status.get("evidence")
    # A threshold that could not be evaluated convicts no node: its evidence is the Job's, not the nodes'.
    missed = [item for item in checked if isinstance(item, Mapping) and not item.get("passed", True)
              and item.get("reason") != INVALID_EXPRESSION] if isinstance(checked, list) else []
    return [{**entry, "evidence": [dict(item) for item in missed]} if entry.get("reason") == THRESHOLD_VIOLATION and "evidence" not in entry and missed
            else dict(entry) for entry in status.get("failedNodes") or []]


def merge_failed(*lists: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Union of failed-node entries, one per (name, reason), sorted. The first message wins, unless it came without
    evidence (from a group's record, its Job deleted, or a failure that measured nothing) and a later entry has
    some: that entry's message and evidence then go together, so a message never sits beside another Job's
    measurements."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for items in lists:
        for item in items:
            kept = merged.setdefault((item["name"], item["reason"]), dict(item))
            if "evidence" not in kept and item.get("evidence"):
                kept["evidence"] = item["evidence"]
                kept["message"] = item.get("message", "")
    return [merged[key] for key in sorted(merged)]


MESSAGE_CUT = 160  # characters a shortened entry keeps of its message


def within_room(entries: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """Failed-node entries that fit in `room` bytes of JSON, shortened only as far as they must be: as they are; else
    without their evidence; else with messages cut to MESSAGE_CUT characters; else names and reasons alone (an empty
    message, as the API server defaults it); else as many of those as fit, the first. (A diagnosis stores its
    verdicts in its Workflow, one object of at most 1.5 MiB; the failed-nodes ConfigMap keeps every one whole.)"""
    def fits(items: list[dict[str, Any]]) -> bool:
        return len(json.dumps(items, separators=(",", ":"))) <= room

    if fits(entries):
        return entries
    shorter = [{key: value for key, value in entry.items() if key != "evidence"} for entry in entries]
    if fits(shorter):
        return shorter
    shorter = [{**entry, "message": _cut(str(entry.get("message") or ""))} for entry in shorter]
    if fits(shorter):
        return shorter
    bare = [{"name": entry["name"], "reason": entry["reason"], "message": ""} for entry in entries]
    used = 2  # the list's brackets
    for kept, entry in enumerate(bare):
        used += len(json.dumps(entry, separators=(",", ":"))) + (kept > 0)
        if used > room:
            return bare[:kept]
    return bare


def _cut(message: str) -> str:
    return message if len(message) <= MESSAGE_CUT else message[:MESSAGE_CUT - 1] + "…"


def _gzip_b64(data: bytes) -> str:
    # mtime=0 keeps the bytes identical for identical content (deterministic objects).
    return base64.b64encode(gzip.compress(data, mtime=0)).decode("ascii")


def result_configmap_names(workflow: Mapping[str, Any]) -> tuple[str, str]:
    """(failed, succeeded): the names of a Workflow's result ConfigMaps, from its uid."""
    uid8 = str(workflow["metadata"].get("uid", "")).replace("-", "")[:8]
    return f"failed-nodes-{uid8}", f"succeeded-nodes-{uid8}"


def failed_nodes_configmap(name: str, failed: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The failed-nodes ConfigMap body (NVCRE fields only: name, reason, message)."""
    rows = [
        {"name": f["name"], "reason": f["reason"], "message": f.get("message", "")} if f["reason"] in NVCRE_REASONS
        else {"name": f["name"], "reason": WORKLOAD_FAILED, "message": f"{f['reason']}: {f.get('message', '')}"}
        for f in merge_failed(failed)
    ]
    payload = json.dumps(rows, separators=(",", ":")).encode()
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "binaryData": {FAILED_KEY: _gzip_b64(payload)}}


def succeeded_nodes_configmap(name: str, nodes: Iterable[str]) -> dict[str, Any]:
    """The succeeded-nodes ConfigMap body."""
    payload = ",".join(sorted(set(nodes))).encode()
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "binaryData": {SUCCEEDED_KEY: _gzip_b64(payload)}}


def read_failed_nodes(configmap: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Decode a failed-nodes ConfigMap (as NVSentinel does)."""
    raw = (configmap.get("binaryData") or {}).get(FAILED_KEY)
    return json.loads(gzip.decompress(base64.b64decode(raw))) if raw else []


def read_succeeded_nodes(configmap: Mapping[str, Any]) -> list[str]:
    """Decode a succeeded-nodes ConfigMap (as NVSentinel does: gunzip, split on commas)."""
    raw = (configmap.get("binaryData") or {}).get(SUCCEEDED_KEY)
    text = gzip.decompress(base64.b64decode(raw)).decode() if raw else ""
    return [name for name in text.split(",") if name]
