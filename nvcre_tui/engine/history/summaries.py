"""`history nodes` at scale: what every node's summary (HistoryQuery.nodes) says, from aggregates SQLite works out over the whole
history, and the few whole results a summary shows (each node's latest certification, its last pass, its latest
baseline), not from every result of every node read and decoded in Python (36 s at 10,000 certifications of 32 nodes).

It says what reading the whole history says (`HistoryQuery.nodes_read_whole`, tests/history/test_node_summaries.py),
damage included: the rows it does not decode are first checked in SQL, and where any might be damaged (a check
stricter than `rows._checked`, never looser) the whole history is read as before, which names the damage.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nvcre_tui.engine.api.vocabulary import STATE_PRECEDENCE, NodeState
from nvcre_tui.engine.history.rows import (CERTIFICATION_FIELDS, NOT_PASSED, STATES, DamagedHistory, _certification, _checked,
                                          _RESULTS_SELECT, series_key)
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH

Obj = dict[str, Any]


class Reader(Protocol):
    """What summaries read through: queries.HistoryQuery (not imported: it imports this module)."""

    path: Path

    def _scope(self, alias: str = "c") -> tuple[str, tuple[str, ...]]: ...

    def _rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]: ...

    def certifications(self, last: int | None = None) -> list[Obj]: ...

    def _verdicts(self, node: str | None = None, certifications: Iterable[int] | None = None) -> dict[tuple[int, str, str], str]: ...

    def _history_of(self, name: str, rows: list[sqlite3.Row], verdicts: Mapping[tuple[int, str, str], str]) -> list[Obj]: ...

_LARGEST = "1.7976931348623157e308"  # a finite REAL is no larger (SQLite keeps an overflow as Inf)
_TEXTS = ", ".join(f"'{state}'" for state in sorted(STATES))
_DOUBTED = ", ".join(f"'{state}'" for state in sorted(NOT_PASSED))
# A node's overall state in one certification (queries.overall): the most urgent of its categories', by its place here.
_FAILED, _SUSPECT = STATE_PRECEDENCE.index(NodeState.FAILED), STATE_PRECEDENCE.index(NodeState.SUSPECT)
_WORST = "MIN(CASE r.state " + " ".join(f"WHEN '{state.value}' THEN {i}" for i, state in enumerate(STATE_PRECEDENCE)) + " END)"


def _json_of(column: str, kind: str, parts: str) -> str:
    """SQL true where `column` is not JSON text of `kind` (object | array) whose every member satisfies `parts` (a
    condition on json_each's `p`), as rows._checked would find it."""
    # CASE, not OR: SQLite may evaluate OR's terms in any order, and json_each of what is no JSON is an error. Valid JSON
    # is of the type its first character says (json_type would parse it all again: SQLite parses at every call).
    return (f"CASE WHEN typeof({column}) = 'text' AND json_valid({column}) AND {_first(column)} = '{_OPENS[kind]}' "
            f"THEN EXISTS (SELECT 1 FROM json_each({column}) p WHERE NOT ({parts})) ELSE 1 END")


_WHITESPACE = "char(32, 9, 10, 13)"  # JSON's
_OPENS = {"object": "{", "array": "["}


def _first(text: str) -> str:
    """SQL: the first character of `text` that is not JSON whitespace."""
    return f"substr(ltrim({text}, {_WHITESPACE}), 1, 1)"


# What rows._checked refuses of a result row and of its baseline, in SQL (stricter where the two differ: a number
# SQLite reads as Inf, JSON it does not take, such as NaN, are read whole and judged there).
_DAMAGED_RESULT = " OR ".join((
    "typeof(r.node) != 'text'", "typeof(r.category) != 'text'", "typeof(r.reason) != 'text'", "typeof(r.message) != 'text'",
    f"typeof(r.state) != 'text' OR r.state NOT IN ({_TEXTS})",
    f"(r.bus_bw IS NOT NULL AND (typeof(r.bus_bw) NOT IN ('integer', 'real') OR abs(r.bus_bw) > {_LARGEST}))",
    _json_of("r.measurements", "object", f"p.type IN ('integer', 'real') AND abs(p.value) <= {_LARGEST}"),
    _json_of("r.evidence", "array", "p.type = 'object'"), _json_of("r.jobs", "array", "p.type = 'object'"),
    "(b.baseline IS NOT NULL AND (" + _json_of("b.baseline", "object", "p.type = 'text'") + "))"))


@dataclass(frozen=True)
class NodeParts:
    """What one node's summary says (HistoryQuery._summary), over the window of the last N certifications."""

    node: str
    certifications: int       # all it was in
    failures: int             # in the window: failed, suspect
    suspect: int
    window: int               # the window's it was in
    latest: Obj               # its entry (HistoryQuery.node's) in the window's newest it was in
    passes: list[Obj]         # its entries of its last pass and its latest baseline, oldest first: all staleness reads
    trend: dict[str, list[float]]
    lasts: dict[str, tuple[float, Obj]]  # each series' last value, and the category result that measured it


def summary_parts(query: Reader, last: int | None) -> list[NodeParts] | None:
    """Each node's NodeParts, by name, in six queries whatever the history holds; None where the history might be
    damaged (read it whole: it names the damage)."""
    if last:  # its certifications' damage is said first, as reading them whole does
        query.certifications(last)
    scope, parameters = query._scope()
    ranked = (f"WITH o AS MATERIALIZED (SELECT c.id, ROW_NUMBER() OVER (ORDER BY c.completion_time, c.id) AS rank "
              f"FROM certifications c WHERE 1 = 1{scope})")
    ids = _undamaged(query, ranked, parameters)
    if ids is None:
        return None
    since = max(len(ids) - last, 0) if last else 0  # the window: the certifications ranked after this many
    # Per node: its certifications, those of the window, its failures and suspicions there, its latest one there, its
    # last pass (some category passed, none doubted it: queries.passed) and its latest baseline (a non-empty one).
    rows = query._rows(
        f"{ranked}, e AS (SELECT r.node, r.cert_id, o.rank, {_WORST} AS worst, "
        f"MAX(r.state = 'passed') AND NOT MAX(r.state IN ({_DOUBTED})) AS passed "
        "FROM node_results r JOIN o ON o.id = r.cert_id GROUP BY r.node, r.cert_id) "
        f"SELECT e.node, COUNT(*) AS certifications, SUM(e.rank > ?) AS window, SUM(e.rank > ? AND e.worst = {_FAILED}) AS failures, "
        f"SUM(e.rank > ? AND e.worst = {_SUSPECT}) AS suspect, MAX(CASE WHEN e.rank > ? THEN e.rank END) AS latest, "
        "MAX(CASE WHEN e.passed THEN e.rank END) AS pass, "
        # the latest found from the newest back (the history's order is an index); a baseline is an object (_undamaged):
        # not an empty one where a member follows its brace
        "(SELECT c.id FROM certifications c JOIN node_baselines b ON b.cert_id = c.id AND b.node = e.node "
        f"WHERE {_first(f'substr(ltrim(b.baseline, {_WHITESPACE}), 2)')} != '}}'{scope} "
        "AND EXISTS (SELECT 1 FROM node_results r WHERE r.cert_id = c.id AND r.node = e.node) "
        "ORDER BY c.completion_time DESC, c.id DESC LIMIT 1) AS baseline "
        "FROM e GROUP BY e.node ORDER BY e.node", (*parameters, since, since, since, since, *parameters))
    nodes = [r for r in rows if r["window"]]  # in none of the window: nothing of it to say
    rank = {cert: i for i, cert in enumerate(ids, start=1)}
    trends = {name: _series(found) for name, found in _trend_points(query, ranked, parameters, since).items()}
    # The whole results read: each node's latest certification, last pass and latest baseline, and those that measured
    # the last value of each of its series (their evidence says how it is printed)
    wanted = {(str(r["node"]), cert) for r in nodes for cert in (ids[r["latest"] - 1], r["pass"] and ids[r["pass"] - 1], r["baseline"]) if cert}
    wanted |= {(name, cert) for name, (_, lasts) in trends.items() for _, (cert, _) in lasts.values()}
    entries = _entries(query, sorted(wanted))
    found = []
    for r in nodes:
        name = str(r["node"])
        trend, lasts = trends.get(name, ({}, {}))
        kept = sorted({cert for cert in (r["pass"] and ids[r["pass"] - 1], r["baseline"]) if cert}, key=rank.__getitem__)
        found.append(NodeParts(
            name, r["certifications"], r["failures"], r["suspect"], r["window"], entries[(name, ids[r["latest"] - 1])],
            [entries[(name, cert)] for cert in kept], trend,
            {key: (value, next(c for c in entries[(name, cert)]["categories"] if c["category"] == category))
             for key, (value, (cert, category)) in lasts.items()}))
    return found


def _undamaged(query: Reader, ranked: str, parameters: tuple[str, ...]) -> list[int] | None:
    """The ids of the certifications of `query`'s sources in the history's order; None where a result of the history
    (with its baseline), or one of these that has results, might be one that rows._checked refuses, or a result
    belongs to no certification (queries._refuse_orphans): the certifications are checked as it checks them, the rest
    in SQL, once (an uncorrelated subquery)."""
    orphans = "SELECT 1 FROM node_results r LEFT JOIN certifications c ON c.id = r.cert_id WHERE c.id IS NULL"
    damaged = (f"SELECT 1 FROM node_results r JOIN o ON o.id = r.cert_id "
               f"LEFT JOIN node_baselines b ON b.cert_id = r.cert_id AND b.node = r.node WHERE {_DAMAGED_RESULT}")
    rows = query._rows(f"{ranked} SELECT c.id, c.name, c.namespace, c.result, c.completion_time, "
                       "EXISTS (SELECT 1 FROM node_results r WHERE r.cert_id = c.id) AS has_results, "
                       f"(SELECT EXISTS ({orphans}) OR EXISTS ({damaged})) AS damaged "
                       "FROM o JOIN certifications c ON c.id = o.id ORDER BY o.rank", parameters)
    if not rows or rows[0]["damaged"]:  # none: read whole, which finds a result of no certification too
        return None
    for r in rows:
        if r["has_results"]:
            try:
                _checked(query.path, "certifications", r, CERTIFICATION_FIELDS, _certification(r))
            except DamagedHistory:  # said by reading the whole history, in its order
                return None
    return [int(r["id"]) for r in rows]


def _entries(query: Reader, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], Obj]:
    """(node, certification id) -> the node's entry in that certification (HistoryQuery.node's), for each of `wanted`."""
    if not wanted:
        return {}
    pairs = ("WITH want AS (SELECT json_extract(value, '$[0]') AS node, json_extract(value, '$[1]') AS cert_id FROM json_each(?)) ")
    rows = query._rows(f"{pairs}{_RESULTS_SELECT} JOIN want w ON w.node = r.node AND w.cert_id = r.cert_id "
                       "ORDER BY r.node, c.completion_time, c.id, r.category", (json.dumps(wanted),))
    by_node: dict[str, list[Any]] = {}
    for row in rows:
        by_node.setdefault(str(row["node"]), []).append(row)
    verdicts = query._verdicts(certifications={cert for _, cert in wanted})
    return {(name, entry["id"]): entry for name, found in by_node.items() for entry in query._history_of(name, found, verdicts)}


Point = tuple[str, int | None, float, tuple[int, str]]  # (category, size of the group that measured it, busBW, (certification id, category))


def _trend_points(query: Reader, ranked: str, parameters: tuple[str, ...], since: int) -> dict[str, list[Point]]:
    """node -> its bandwidths over the window's certifications (ranked after `since`), oldest first, as
    HistoryQuery._trend_points reads them: each with the size of the group that measured it (the last of the result's
    Jobs that measured that value), worked out in SQL."""
    rows = query._rows(
        f"{ranked} SELECT r.node, r.cert_id, r.category, r.bus_bw, "
        "(SELECT json_type(j.value, '$.groupSize') || ' ' || COALESCE(json_extract(j.value, '$.groupSize'), '') FROM json_each(r.jobs) j "
        f"WHERE json_type(j.value, '$.measurements') = 'object' AND json_extract(j.value, '$.measurements.{BUS_BANDWIDTH}') = r.bus_bw "
        "ORDER BY j.key DESC LIMIT 1) AS size "
        "FROM node_results r JOIN o ON o.id = r.cert_id WHERE r.bus_bw IS NOT NULL AND o.rank > ? ORDER BY r.node, o.rank, r.category",
        (*parameters, since))
    points: dict[str, list[Point]] = {}
    for r in rows:
        category = str(r["category"])
        points.setdefault(str(r["node"]), []).append((category, _size(r["size"]), float(r["bus_bw"]), (int(r["cert_id"]), category)))
    return points


def _series(points: list[Point]) -> tuple[dict[str, list[float]], dict[str, tuple[float, tuple[int, str]]]]:
    """HistoryQuery.trend of one node's points, and each series' last value with the result that measured it."""
    series: dict[str, list[float]] = {}
    lasts: dict[str, tuple[float, tuple[int, str]]] = {}
    for key, (_, _, value, where) in zip(series_key([(category, size) for category, size, _, _ in points]), points, strict=True):
        series.setdefault(key, []).append(value)
        lasts[key] = (value, where)
    return series, lasts


def _size(said: str | None) -> int | None:
    """A group size as `_trend_points` reads the Job's `groupSize` (a whole number; JSON true and false are Python ints)."""
    kind, _, value = (said or "").partition(" ")
    return int(value) if kind == "integer" else True if kind == "true" else False if kind == "false" else None
