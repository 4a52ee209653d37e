"""Reading the history: read-only queries for the CLI and the console (screens never open the DB).

Certifications are ordered by completion time (then archive order). A node's overall verdict in one
certification is the most urgent of its categories; it *passed* when at least one category passed and
none failed, was suspect or inconclusive.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import STATE_PRECEDENCE
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.baseline import Baseline, changes, describe

Obj = dict[str, Any]
NOT_PASSED = {"failed", "suspect", "inconclusive"}


def overall(states: list[str]) -> str:
    """The most urgent state of a node's categories."""
    return next((s.value for s in STATE_PRECEDENCE if s in states), "untested")


def passed(states: list[str]) -> bool:
    """Whether a node passed a certification: some category passed, none convicts or doubts it."""
    return "passed" in states and not NOT_PASSED & set(states)


@dataclass(frozen=True)
class Staleness:
    """Whether a node needs re-certification: its baseline changed since its last pass."""

    status: str                        # stale | current | never-passed | unknown
    last_pass: str | None = None       # the certification it last passed
    changes: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        return self.status == "stale"

    @property
    def detail(self) -> str:
        """One line for tables and the console."""
        if self.status == "stale":
            return f"stale since {self.last_pass}: {describe(self.changes)}"
        if self.status == "current":
            return f"current (baseline unchanged since {self.last_pass})"
        return {"never-passed": "never passed", "unknown": "no baseline recorded"}[self.status]

    def to_json(self) -> Obj:
        return {"status": self.status, "lastPass": self.last_pass,
                "changes": {k: {"from": old, "to": new} for k, (old, new) in self.changes.items()}}


class HistoryQuery:
    """Read-only queries over one history database (absent: an empty history)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        if not self.path.exists():
            return []
        try:
            connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        except sqlite3.Error as error:
            raise InputError(f"{self.path}: cannot open the history database ({error})") from None
        try:
            connection.row_factory = sqlite3.Row
            return connection.execute(sql, parameters).fetchall()
        except sqlite3.DatabaseError as error:
            raise InputError(f"{self.path}: not a readable history database ({error})") from None
        finally:
            connection.close()

    def version(self) -> tuple[int, int]:
        """(certifications, last id): changes whenever something is archived (screens redraw on it)."""
        rows = self._rows("SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM certifications")
        return (rows[0]["n"], rows[0]["last"]) if rows else (0, 0)

    # ----- certifications ---------------------------------------------------------------------------

    def certifications(self, last: int | None = None) -> list[Obj]:
        """Archived certifications, oldest first (the `last` N when given)."""
        rows = self._rows(
            "SELECT c.id, c.name, c.namespace, c.result, c.start_time, c.completion_time, c.source, "
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id) AS nodes, "
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state = 'failed') AS failed, "
            # suspect: in a failed group the evidence does not narrow down (and failed in no category)
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state = 'suspect' AND r.node NOT IN "
            "(SELECT node FROM node_results f WHERE f.cert_id = c.id AND f.state = 'failed')) AS suspect "
            "FROM certifications c ORDER BY c.completion_time, c.id")
        found = [{"id": r["id"], "name": r["name"], "namespace": r["namespace"], "result": r["result"], "startTime": r["start_time"],
                  "completionTime": r["completion_time"], "source": r["source"], "nodes": r["nodes"], "failedNodes": r["failed"],
                  "suspectNodes": r["suspect"]} for r in rows]
        return found[-last:] if last else found

    def report(self, name: str, namespace: str | None = None) -> Obj | None:
        """The report of the latest archived certification of that name."""
        rows = self._rows("SELECT report, namespace FROM certifications WHERE name = ? ORDER BY completion_time DESC, id DESC", (name,))
        row = next((r for r in rows if namespace in (None, r["namespace"])), None)
        return json.loads(row["report"]) if row else None

    # ----- nodes ------------------------------------------------------------------------------------

    def node_names(self) -> list[str]:
        return [r["node"] for r in self._rows("SELECT DISTINCT node FROM node_results ORDER BY node")]

    def node(self, name: str) -> list[Obj]:
        """One node's results per certification, oldest first: overall state, each category, the baseline."""
        rows = self._rows(
            "SELECT c.id, c.name, c.namespace, c.result, c.completion_time, r.category, r.state, r.reason, r.message, r.bus_bw, "
            "r.measurements, r.evidence, r.jobs, b.baseline FROM node_results r JOIN certifications c ON c.id = r.cert_id "
            "LEFT JOIN node_baselines b ON b.cert_id = r.cert_id AND b.node = r.node WHERE r.node = ? "
            "ORDER BY c.completion_time, c.id, r.category", (name,))
        history: dict[int, Obj] = {}
        for r in rows:
            entry = history.setdefault(r["id"], {
                "id": r["id"], "certification": r["name"], "namespace": r["namespace"], "certificationResult": r["result"],
                "completionTime": r["completion_time"], "baseline": json.loads(r["baseline"]) if r["baseline"] else None, "categories": []})
            entry["categories"].append({"category": r["category"], "state": r["state"], "reason": r["reason"], "message": r["message"],
                                        "busBW": r["bus_bw"], "measurements": json.loads(r["measurements"]),
                                        "evidence": json.loads(r["evidence"]), "jobs": json.loads(r["jobs"])})
        for entry in history.values():
            states = [c["state"] for c in entry["categories"]]
            entry["result"], entry["passed"] = overall(states), passed(states)
        return list(history.values())

    def trend(self, name: str, history: list[Obj] | None = None) -> dict[str, list[float]]:
        """Bus bandwidth (GB/s) per category across certifications, oldest first (categories without one left out)."""
        series: dict[str, list[float]] = {}
        for entry in history if history is not None else self.node(name):
            for category in entry["categories"]:
                if category["busBW"] is not None:
                    series.setdefault(category["category"], []).append(float(category["busBW"]))
        return series

    def staleness(self, name: str, current: Baseline | None = None, history: list[Obj] | None = None) -> Staleness:
        """Compare the baseline of the node's last pass with `current` (the live Node), else with the
        latest baseline archived for it."""
        history = history if history is not None else self.node(name)
        last_pass = next((e for e in reversed(history) if e["passed"]), None)
        if last_pass is None:
            return Staleness("never-passed")
        latest = current if current else next((e["baseline"] for e in reversed(history) if e["baseline"]), None)
        if not last_pass["baseline"] or not latest:
            return Staleness("unknown", last_pass["certification"])
        diff = changes(last_pass["baseline"], latest)
        return Staleness("stale" if diff else "current", last_pass["certification"], diff)

    def nodes(self, last: int | None = None, current: Mapping[str, Baseline] | None = None) -> list[Obj]:
        """Every node's summary: certifications seen, failures in the last N, last verdict, staleness, trend."""
        recent = {c["id"] for c in self.certifications(last)} if last else None
        summaries = []
        for name in self.node_names():
            history = self.node(name)
            window = [e for e in history if recent is None or e["id"] in recent]
            stale = self.staleness(name, (current or {}).get(name), history)
            summaries.append({
                "node": name, "certifications": len(history),
                "failures": sum(1 for e in window if e["result"] == "failed"),
                "suspect": sum(1 for e in window if e["result"] == "suspect"),
                "window": len(window),
                "lastResult": history[-1]["result"] if history else "untested",
                "lastCertification": history[-1]["certification"] if history else None,
                "lastReason": next((c["reason"] for e in reversed(window) for c in e["categories"] if c["reason"] and c["state"] in NOT_PASSED), ""),
                "staleness": stale, "trend": self.trend(name, history),
            })
        return summaries

    def offenders(self, last: int = 10) -> list[Obj]:
        """Nodes that failed (or were suspect) in the last N certifications, most failures first."""
        found = [n for n in self.nodes(last) if n["failures"] or n["suspect"]]
        return sorted(found, key=lambda n: (-n["failures"], -n["suspect"], n["node"]))

    def stale_nodes(self, current: Mapping[str, Baseline] | None = None) -> dict[str, Staleness]:
        """Every node whose baseline changed since its last pass."""
        found = {}
        for name in self.node_names():
            stale = self.staleness(name, (current or {}).get(name))
            if stale.stale:
                found[name] = stale
        return found
