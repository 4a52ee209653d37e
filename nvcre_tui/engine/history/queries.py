"""Reading the history: read-only queries for the CLI and the console (screens never open the DB).

Certifications are ordered by completion time (then archive order). A node's overall verdict in one
certification is the most urgent of its categories; it *passed* when at least one category passed and
none failed, was suspect or inconclusive.

Every row is read through `rows._checked`: a field that is not what the archive writes (a hand edit, a damaged disk)
is a `DamagedHistory` naming the file, the table, the row and the field, before anything is shown. `nodes` works its
summaries out in SQL (summaries.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import STATE_PRECEDENCE
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.baseline import Baseline, changes, describe
from nvcre_tui.engine.history.db import WITH_VERDICTS
from nvcre_tui.engine.history.summaries import NodeParts, summary_parts
from nvcre_tui.engine.history.rows import (CERTIFICATION_FIELDS, NOT_PASSED, RESULT_FIELDS, DamagedHistory, Obj, _certification, _checked,
                                          _name, _RESULTS_SELECT, _shown, series_key)
from nvcre_tui.engine.judging.thresholds import shown_judged, shown_measured
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, whole_count
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.model import excluded_counted
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.units import count

def overall(states: list[str]) -> str:
    """The most urgent state of a node's categories."""
    return next((s.value for s in STATE_PRECEDENCE if s in states), "untested")


def passed(states: list[str]) -> bool:
    """Whether a node passed a certification: some category passed, none convicts or doubts it."""
    return "passed" in states and not NOT_PASSED & set(states)


# The worst first among the words state_said gives the categories that decided a node's result: a diagnosis's
# conviction (persistent, then intermittent) before a failure no diagnosis weighed; any other word after these.
VERDICT_ORDER = ("faulty", "intermittent", "failed", "suspect", "inconclusive")


def last_reason(entry: Obj) -> str:
    """Why the node did not pass this certification, or was left out of it: the distinct reasons of its failed, suspect,
    inconclusive or excluded categories, most urgent first, the verdicts of one state in result_said's order ("" when
    it passed them all). Never an older certification's reason beside this one's result."""
    return ", ".join(last_reasons(entry))


def last_reasons(entry: Obj) -> list[str]:
    """last_reason's parts, most urgent first (a table cuts them: reasons_within)."""
    rank = {state.value: i for i, state in enumerate(STATE_PRECEDENCE)}
    worst = {word: i for i, word in enumerate(VERDICT_ORDER)}  # within a state, in the order result_said names verdicts
    # An inconclusive node has no reason of its own (its group failed, another member was blamed): its message says so
    urgent = sorted((c for c in entry["categories"] if c["state"] in NOT_PASSED | {"excluded"} and reason_said(c)),
                    key=lambda c: (rank[c["state"]], worst.get(state_said(c), len(worst))))
    return list(dict.fromkeys(reason_said(c) for c in urgent))


def reasons_within(reasons: list[str], width: int) -> str:
    """last_reason cut to about `width` characters for a table's cell (`history nodes`' REASON): the most urgent
    reasons whole, as many as fit, then `+N more` (the first always, whatever its length)."""
    said = ", ".join(reasons)
    if len(said) <= width or len(reasons) < 2:
        return said
    for keep in range(len(reasons) - 1, 0, -1):
        shown = ", ".join(reasons[:keep]) + f", +{len(reasons) - keep} more"
        if len(shown) <= width:
            return shown
    return f"{reasons[0]}, +{len(reasons) - 1} more"


SHOWN_VERDICTS = ("faulty", "intermittent", "inconclusive", "suspect")  # a diagnosis's verdicts said in place of the state


def state_said(category: Obj) -> str:
    """A category result's state as the report says it: the diagnosis's verdict on the node where one judged it and it
    did not pass (`intermittent`, `faulty`, `inconclusive`, `suspect`), else its state. An intermittent node read
    `failed WorkloadFailed`, the word intermittent only in its message."""
    verdict = category.get("verdict")
    return str(verdict) if verdict in SHOWN_VERDICTS and category["state"] in NOT_PASSED else str(category["state"])


def verdicts_of(entry: Obj) -> list[Obj]:
    """The categories that decided a node's overall result in one certification (their state is that result), each
    with its verdict as state_said gives it, worst first (VERDICT_ORDER), in category order within a verdict:
    [{"category": "communication/nccl-all-reduce", "verdict": "faulty"}, {"category": "communication/nccl-loopback",
    "verdict": "failed"}]."""
    decided = [{"category": str(c["category"]), "verdict": state_said(c)} for c in entry["categories"] if c["state"] == entry["result"]]
    rank = {word: i for i, word in enumerate(VERDICT_ORDER)}
    return sorted(decided, key=lambda v: rank.get(v["verdict"], len(rank)))


def result_said(entry: Obj) -> str:
    """A node's overall result in one certification as the report says it: the verdict of the categories that decided
    it (verdicts_of), e.g. `intermittent`; its state when no diagnosis judged them. Where they differ, each with its
    categories (their variants), the worst first: `faulty in nccl-all-reduce, failed in nccl-loopback` (it read
    `failed, faulty`: which category said which, and which counts more, were left to guess)."""
    by_verdict: dict[str, list[str]] = {}
    for item in verdicts_of(entry):
        by_verdict.setdefault(item["verdict"], []).append(item["category"].split("/", 1)[-1])
    if len(by_verdict) <= 1:
        return next(iter(by_verdict), str(entry["result"]))
    return ", ".join(f"{verdict} in {' and '.join(categories)}" for verdict, categories in by_verdict.items())


def verdicts_said_within(verdicts: list[Obj], said: str, width: int) -> str:
    """`said` (result_said of the entry whose verdicts_of are `verdicts`: a summary's lastResultSaid and lastVerdicts) cut
    to about `width` characters for a table's cell (`history nodes`' LAST): the categories that decided the result, worst
    first, as many whole as fit, then `+N more` for the rest (`history node NAME` and the JSON say them all). A node with
    many verdicts across categories made the column as wide as all of them."""
    items = [(str(item["verdict"]), str(item["category"]).split("/", 1)[-1]) for item in verdicts]
    if len(said) <= width or len(items) < 2:
        return said
    shown = said
    for keep in range(len(items) - 1, 0, -1):
        by_verdict: dict[str, list[str]] = {}
        for verdict, category in items[:keep]:
            by_verdict.setdefault(verdict, []).append(category)
        shown = ", ".join(f"{verdict} in {' and '.join(categories)}" for verdict, categories in by_verdict.items())
        shown += f", +{len(items) - keep} more"
        if len(shown) <= width:
            break
    return shown  # the worst is always said, whatever its length


def reason_said(category: Obj) -> str:
    """A category result's reason; an inconclusive node's has none of its own (its group failed, another member was
    blamed): its message, which says so."""
    return str(category["reason"] or (category.get("message") if category["state"] == "inconclusive" else "") or "")


def shown_value(category: Obj, metric: str, value: float) -> str:
    """A value `category` (one result of `node`) measured, as the report prints it: judging.thresholds.shown_measured
    against the threshold its stored evidence judged `metric` by, so a value that missed it never reads as one that
    meets it (299.99 against `value >= 300` is not 300.0); two decimals when no threshold judged it. A whole count stays
    whole (parsers.measurements.whole_count: "diagTestsRun 10", not "10.00")."""
    whole = whole_count(metric, value)
    if whole is not None:
        return whole
    checks = [e for e in category.get("evidence") or [] if e.get("metric") == metric and isinstance(e.get("expression"), str)]
    if not checks:
        return f"{value:.2f}"
    check = next((e for e in reversed(checks) if e.get("measured") == value), checks[-1])
    passed = check.get("passed")
    if check.get("measured") != value or not isinstance(passed, bool):  # judged on another run's value: judge this one
        return shown_judged(metric, check["expression"], value)
    return shown_measured(metric, check["expression"], value, passed)


def missed_threshold(category: Obj, metric: str, value: float) -> str | None:
    """The threshold `value` of `metric` missed as `category`'s stored evidence judged that value (`value >= 300`),
    to say beside it; None where the value met it, or no threshold judged it."""
    check = next((e for e in reversed(category.get("evidence") or []) if e.get("metric") == metric and e.get("measured") == value
                  and isinstance(e.get("expression"), str)), None)
    return str(check["expression"]) if check is not None and check.get("passed") is False else None


@dataclass(frozen=True)
class Staleness:
    """Whether a node needs re-certification: its baseline changed since its last pass."""

    status: str                        # stale | current | never-passed | unknown | absent (not among the Nodes given)
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
        return {"never-passed": "never passed", "unknown": "no baseline recorded",
                "absent": "not among the current Nodes given: gone from the cluster, or another fleet"}[self.status]

    @property
    def brief(self) -> str:
        """As `detail`, for a table's cell (`history nodes`): the common statuses in a word, so that the table fits a
        terminal; the certification a current node last passed is `detail`'s, the JSON's and `history node`'s to say."""
        if self.status == "current":
            return "current"
        if self.status == "absent":
            return "not among the Nodes given"
        return self.detail

    def to_json(self) -> Obj:
        return {"status": self.status, "lastPass": self.last_pass,
                "changes": {k: {"from": old, "to": new} for k, (old, new) in self.changes.items()}}


ABSENT: Baseline = {}  # a node the current Nodes given do not hold (compared by identity)


def current_of(current: Mapping[str, Baseline] | None, name: str) -> Baseline | None:
    """The node's baseline among the current Nodes given; ABSENT when they were given and it is not among them; None
    when none were given (the latest archived baseline stands in)."""
    if current is None:
        return None
    return current.get(name, ABSENT)


class HistoryQuery:
    """Read-only queries over one history database (absent: an empty history), over the certifications of the given
    `sources` only (None: every source). A session's query holds its own store's: node names repeat across clusters
    and simulated fleets (every simulated fleet has a gpu-node-07), and one node's record must not merge two."""

    def __init__(self, path: Path, sources: Iterable[str] | None = None) -> None:
        self.path = path
        self.sources = None if sources is None else tuple(sorted(set(sources)))

    def _scope(self, alias: str = "c") -> tuple[str, tuple[str, ...]]:
        """An SQL condition (to follow WHERE ... ) keeping the certifications of `sources`, and its parameters."""
        if self.sources is None:
            return "", ()
        return f" AND {alias}.source IN ({', '.join('?' * len(self.sources))})", self.sources

    def all_sources(self) -> list[str]:
        """Every source the database holds certifications of (whatever `sources` keeps), in order."""
        return [str(r["source"]) for r in self._rows("SELECT DISTINCT source FROM certifications ORDER BY source")]

    def sources_of(self, name: str, namespace: str) -> list[str]:
        """Every source whose certification `name` (of `namespace`) the database archived, whatever `sources` keeps,
        newest first: where to look for one the current cluster or simulator does not hold."""
        rows = self._rows("SELECT source, MAX(completion_time) AS latest FROM certifications WHERE name = ? AND namespace = ? "
                          "GROUP BY source ORDER BY latest DESC", (name, namespace))
        return [str(r["source"]) for r in rows]

    def sources_of_store(self, store_id: str) -> list[str]:
        """Every source under which the simulator store `store_id` had certifications archived (its records' run key,
        db.py), whatever `sources` keeps: the paths it was copied or moved from. InputError on a history without the key."""
        prefix = f"{store_id}/"
        rows = self._rows("SELECT DISTINCT source FROM certifications WHERE substr(run, 1, ?) = ? ORDER BY source", (len(prefix), prefix))
        return [str(r["source"]) for r in rows]

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
        except UnicodeDecodeError:  # SQLite's message quoted a schema that is not UTF-8: the file is damaged
            raise InputError(f"{self.path}: not a readable history database (malformed database schema: not UTF-8 text)") from None
        finally:
            connection.close()

    def version(self) -> tuple[int, int]:
        """(certifications, last id): changes whenever something is archived (screens redraw on it)."""
        rows = self._rows("SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM certifications")
        return (rows[0]["n"], rows[0]["last"]) if rows else (0, 0)

    def change_key(self) -> object:
        """`version()`, or why the archive cannot be read: a screen's memo key that never raises (the query it
        guards says why, where the screen handles it)."""
        try:
            return self.version()
        except InputError as error:
            return "; ".join(error.messages)

    # ----- certifications ---------------------------------------------------------------------------

    def certifications(self, last: int | None = None) -> list[Obj]:
        """Archived certifications, oldest first (the `last` N when given)."""
        scope, sources = self._scope()
        parameters: tuple[Any, ...] = sources
        if last:  # only theirs worked out (each row's counts read its results and report): the wall asks for the newest
            # at every refresh while its store holds none, and the whole history took seconds at 10,000 certifications
            inner, inner_parameters = self._scope("l")
            scope = (f"{scope} AND c.id IN (SELECT l.id FROM certifications l WHERE 1 = 1{inner} "
                     "ORDER BY l.completion_time DESC, l.id DESC LIMIT ?)")
            parameters = (*parameters, *inner_parameters, last)
        rows = self._rows(
            "SELECT c.id, c.name, c.namespace, c.result, c.start_time, c.completion_time, c.source, "
            # the report says whether the simulated fleet played its runs (made-up measurements); unreadable: unknown
            "CASE WHEN json_valid(c.report) THEN json_extract(c.report, '$.simulated') END AS simulated, "
            # why nvcre refused it (a status another hand wrote: record.refused_record), else none
            "CASE WHEN json_valid(c.report) THEN json_extract(c.report, '$.refused') END AS refused, "
            # a report that is no JSON object is damage, named: read as none, a simulated run would pass for a real one
            "CASE WHEN json_valid(c.report) THEN json_type(c.report) = 'object' ELSE 0 END AS report_readable, "
            # the nodes the report counts (its totalNodes: those held, less those excluded) and leaves out (its
            # excludedNodes); a report without them (not an nvcre report): the same from the node results.
            # One node, one state per certification, the worst first: an excluded node the report also lists among its
            # failedNodes (cordoned mid-run) is a failed node only; a report archived before the report said so listed it.
            "CASE WHEN json_valid(c.report) THEN json_extract(c.report, '$.totalNodes') END AS \"report.totalNodes\", "
            "CASE WHEN json_valid(c.report) AND json_type(c.report, '$.excludedNodes') = 'array' "
            "THEN (SELECT COUNT(*) FROM json_each(c.report, '$.excludedNodes') e WHERE NOT EXISTS ("
            "SELECT 1 FROM json_each(c.report, '$.failedNodes') f WHERE e.type = 'object' "
            "AND f.value = json_extract(c.report, e.fullkey || '.name'))) END AS \"report.excludedNodes\", "
            # NODES from the results themselves wherever there are some: every node a category held, less those
            # counted excluded (the report's totalNodes since it counts a node once; a report archived before said the
            # eligible nodes of its largest category: 4 of two disjoint categories of 4, a node excluded later in both)
            # (excluded: in some category, and failed, suspect or inconclusive in none: one node, one state, the worst
            # first; the report's own count where there are none)
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.node NOT IN "
            "(SELECT e.node FROM node_results e WHERE e.cert_id = c.id AND e.state = 'excluded' AND e.node NOT IN "
            "(SELECT f.node FROM node_results f WHERE f.cert_id = c.id AND f.state IN ('failed', 'suspect', 'inconclusive')))) AS nodes, "
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state = 'excluded' AND r.node NOT IN "
            "(SELECT node FROM node_results f WHERE f.cert_id = c.id AND f.state IN ('failed', 'suspect', 'inconclusive'))) AS excluded, "
            "EXISTS (SELECT 1 FROM node_results r WHERE r.cert_id = c.id) AS has_results, "
            # failed: every node a category blamed, as the report and the Certification count them (suspects among them)
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state IN ('failed', 'suspect')) AS failed, "
            # suspect: in a failed group the evidence does not narrow down (and failed in no category)
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state = 'suspect' AND r.node NOT IN "
            "(SELECT node FROM node_results f WHERE f.cert_id = c.id AND f.state = 'failed')) AS suspect, "
            # inconclusive: ran and proved nothing in some category, failed or suspect in none (the report's
            # inconclusiveNodes); a report without results: its own list, where it has one
            "(SELECT COUNT(DISTINCT node) FROM node_results r WHERE r.cert_id = c.id AND r.state = 'inconclusive' AND r.node NOT IN "
            "(SELECT node FROM node_results f WHERE f.cert_id = c.id AND f.state IN ('failed', 'suspect'))) AS inconclusive, "
            "CASE WHEN json_valid(c.report) AND json_type(c.report, '$.inconclusiveNodes') = 'array' "
            "THEN json_array_length(c.report, '$.inconclusiveNodes') END AS \"report.inconclusiveNodes\", "
            # and so the failed nodes and the suspects among them (it read 0 beside a report that listed them)
            "CASE WHEN json_valid(c.report) AND json_type(c.report, '$.failedNodes') = 'array' "
            "THEN json_array_length(c.report, '$.failedNodes') END AS \"report.failedNodes\", "
            "CASE WHEN json_valid(c.report) AND json_type(c.report, '$.suspectNodes') = 'array' "
            "THEN json_array_length(c.report, '$.suspectNodes') END AS \"report.suspectNodes\" "
            f"FROM certifications c WHERE 1 = 1{scope} ORDER BY c.completion_time, c.id", parameters)
        found = []
        for r in rows:
            c = _checked(self.path, "certifications", r, CERTIFICATION_FIELDS | {
                "start_time": "time?", "source": "text", "report.totalNodes": "count?", "report.excludedNodes": "count?", "nodes": "count",
                "excluded": "count", "failed": "count", "suspect": "count", "inconclusive": "count",
                "report.inconclusiveNodes": "count?", "report.failedNodes": "count?", "report.suspectNodes": "count?"}, _certification(r))
            if not r["report_readable"]:
                raise DamagedHistory(printable(f"{self.path}: damaged history: certifications row ({_certification(r)}): report is not "
                                               "a JSON object (its simulated mark and node counts are unknown)", newlines=False))
            # Without results, the report's own counts and lists; None (unknown) where it has none, never a 0 it does
            # not say (NODES and EXCLUDED NODES read 0 for a report that counts no node).
            nodes = c["nodes"] if r["has_results"] else c["report.totalNodes"]
            excluded = c["excluded"] if r["has_results"] else c["report.excludedNodes"]
            inconclusive = c["inconclusive"] if r["has_results"] else c["report.inconclusiveNodes"]
            failed = c["failed"] if r["has_results"] else c["report.failedNodes"]
            suspect = c["suspect"] if r["has_results"] else c["report.suspectNodes"]
            found.append({"id": c["id"], "name": c["name"], "namespace": c["namespace"], "result": c["result"], "startTime": c["start_time"],
                          "completionTime": c["completion_time"], "source": c["source"], "simulated": bool(r["simulated"]),
                          "refused": None if r["refused"] is None else str(r["refused"]),
                          "nodes": nodes, "excludedNodes": excluded, "failedNodes": failed, "suspectNodes": suspect,
                          "inconclusiveNodes": inconclusive})
        return found[-last:] if last else found

    def archived_at(self, cert_id: int) -> str | None:
        """When the archive recorded the certification of that row id (certifications()' `id`), on the wall clock of the
        process that archived it (archive.write_record): on a cluster the clock its Age counts on, where its completionTime
        may be a --sim-runner fleet's simulated time, ahead of it. None when the row is gone or holds none."""
        rows = self._rows("SELECT archived_at FROM certifications WHERE id = ?", (cert_id,))
        return str(rows[0]["archived_at"]) if rows and rows[0]["archived_at"] else None

    def report(self, name: str, namespace: str | None = None) -> Obj | None:
        """The report of the latest archived certification of that name."""
        scope, parameters = self._scope("certifications")
        rows = self._rows(f"SELECT id, name, report, namespace FROM certifications WHERE name = ?{scope} ORDER BY completion_time DESC, id DESC",
                          (name, *parameters))
        row = next((r for r in rows if namespace in (None, r["namespace"])), None)
        if row is None:
            return None
        report: Obj = _checked(self.path, "certifications", row, {"report": "object"}, _certification(row))["report"]
        if isinstance(report.get("excludedNodes"), list):  # archived before a failed node left the list: counted by the rule
            report["excludedNodes"] = excluded_counted(report)
        return report

    # ----- nodes ------------------------------------------------------------------------------------

    def _refuse_orphans(self, node: str | None = None) -> None:
        """A result of no certification (the archive writes both in one transaction) would drop out of every join."""
        for r in self._rows("SELECT r.cert_id, r.node FROM node_results r LEFT JOIN certifications c ON c.id = r.cert_id "
                            "WHERE c.id IS NULL AND (? IS NULL OR r.node = ?) LIMIT 1", (node, node)):
            raise DamagedHistory(printable(f"{self.path}: damaged history: node_results row (node {_name(r['node'])}): cert_id is "
                                           f"{_shown(r['cert_id'])}, the id of no certifications row", newlines=False))

    def node_names(self) -> list[str]:
        self._refuse_orphans()
        scope, parameters = self._scope()
        rows = self._rows("SELECT r.node, c.id, c.name FROM node_results r JOIN certifications c ON c.id = r.cert_id "
                          f"WHERE 1 = 1{scope} GROUP BY r.node ORDER BY r.node", parameters)
        return [_checked(self.path, "node_results", r, {"node": "text"}, f"{_certification(r)}, node {_name(r['node'])}")["node"]
                for r in rows]

    def node(self, name: str) -> list[Obj]:
        """One node's results per certification, oldest first: overall state, each category (with its diagnosis's
        verdict), the baseline."""
        return self._node(name)

    def _node(self, name: str, verdicts: Mapping[tuple[int, str, str], str] | None = None) -> list[Obj]:
        """`node`, with the verdicts of `_verdicts` when given (read here for this node when not)."""
        self._refuse_orphans(name)
        scope, parameters = self._scope()
        rows = self._rows(f"{_RESULTS_SELECT} WHERE r.node = ?{scope} ORDER BY c.completion_time, c.id, r.category", (name, *parameters))
        if verdicts is None:
            verdicts = self._verdicts(name) if rows else {}
        return self._history_of(name, rows, verdicts)

    def _histories(self) -> dict[str, list[Obj]]:
        """Every node's `node`, by name, read in one query (and each report's verdicts once): a map of 1024 nodes read
        them node by node, four queries each, for 12 s on the console's screen (`stale_nodes`)."""
        self._refuse_orphans()
        scope, parameters = self._scope()
        rows = self._rows(f"{_RESULTS_SELECT} WHERE 1 = 1{scope} ORDER BY r.node, c.completion_time, c.id, r.category", parameters)
        by_node: dict[str, list[sqlite3.Row]] = {}
        for r in rows:
            name = _checked(self.path, "node_results", r, {"node": "text"}, f"{_certification(r)}, node {_name(r['node'])}")["node"]
            by_node.setdefault(name, []).append(r)
        verdicts = self._verdicts() if rows else {}
        return {name: self._history_of(name, found, verdicts) for name, found in by_node.items()}

    def _history_of(self, name: str, rows: list[sqlite3.Row], verdicts: Mapping[tuple[int, str, str], str]) -> list[Obj]:
        """One node's results per certification from its `_RESULTS_SELECT` rows (oldest first), checked."""
        history: dict[int, Obj] = {}
        for r in rows:
            if r["id"] not in history:
                c = _checked(self.path, "certifications", r, CERTIFICATION_FIELDS, _certification(r))
                b = _checked(self.path, "node_baselines", r, {"baseline": "baseline?"}, f"{_certification(r)}, node {_name(name)}")
                history[r["id"]] = {
                    "id": c["id"], "certification": c["name"], "namespace": c["namespace"], "certificationResult": c["result"],
                    "completionTime": c["completion_time"], "baseline": b["baseline"], "categories": []}
            n = _checked(self.path, "node_results", r, RESULT_FIELDS,
                         f"{_certification(r)}, node {_name(name)}, category {_name(r['category'])}")
            history[r["id"]]["categories"].append({
                "category": n["category"], "state": n["state"], "reason": n["reason"], "message": n["message"], "busBW": n["bus_bw"],
                "measurements": n["measurements"], "evidence": n["evidence"], "jobs": n["jobs"]})
        for entry in history.values():
            for category in entry["categories"]:
                category["verdict"] = verdicts.get((entry["id"], category["category"], name))
            states = [c["state"] for c in entry["categories"]]
            entry["result"], entry["passed"] = overall(states), passed(states)
            entry["resultSaid"] = result_said(entry)
            entry["verdicts"] = verdicts_of(entry)  # resultSaid's parts, for JSON: each category that decided it
        return list(history.values())

    def _verdicts(self, node: str | None = None, certifications: Iterable[int] | None = None) -> dict[tuple[int, str, str], str]:
        """(certification id, category title, node) -> the verdict the report's diagnosis of that category gave the node
        (its `diagnose.verdicts` rows: every node not plainly healthy), for `node` (None: every node, read once for all:
        each report is parsed once, not once per node; `certifications`: of these ids only); read from the archived report, so a history archived before this
        was shown says it too. A report not of this shape gives none (what is unreadable is not said)."""
        scope, parameters = self._scope()
        # Only reports with a diagnosis's verdicts are parsed, found by the partial index that holds them (db.py): parsing
        # each report of the node was most of `history node`, 0.36 of 0.6 s at 2,000 certifications, and looking for the
        # key in each of its reports most of what was left (2.7 s at 10,000).
        mine = f"c.id IN (SELECT id FROM certifications WHERE {WITH_VERDICTS})"
        if node is not None:
            mine += " AND c.id IN (SELECT cert_id FROM node_results WHERE node = ?)"
        if certifications is not None:
            mine += f" AND c.id IN ({', '.join(str(int(cert)) for cert in sorted(set(certifications))) or 'NULL'})"
        chosen = (node,) if node is not None else ()
        # The report's categories as JSON rows: a report that is no JSON object, or without a categories array, has none.
        categories = ("json_each(CASE WHEN json_valid(c.report) AND json_type(c.report, '$.categories') = 'array' "
                      "THEN json_extract(c.report, '$.categories') ELSE '[]' END) cat")
        titles: dict[int, list[Obj]] = {}
        for r in self._rows(f"SELECT c.id, cat.key AS idx, CASE WHEN cat.type = 'object' THEN json_extract(cat.value, '$.domain') END AS domain, "
                            "CASE WHEN cat.type = 'object' THEN json_extract(cat.value, '$.variant') END AS variant "
                            f"FROM certifications c, {categories} WHERE {mine}{scope} ORDER BY c.id, cat.key", (*chosen, *parameters)):
            titles.setdefault(int(r["id"]), []).append({"domain": r["domain"], "variant": r["variant"]})
        named = {cert: category_titles(found) for cert, found in titles.items()}
        found: dict[tuple[int, str, str], str] = {}
        for r in self._rows(
                f"SELECT c.id, cat.key AS idx, json_extract(v.value, '$.node') AS node, json_extract(v.value, '$.verdict') AS verdict "
                f"FROM certifications c, {categories}, "
                "json_each(CASE WHEN cat.type = 'object' AND json_type(cat.value, '$.diagnose.verdicts') = 'array' "
                "THEN json_extract(cat.value, '$.diagnose.verdicts') ELSE '[]' END) v "
                f"WHERE v.type = 'object' AND {mine}{scope}", (*chosen, *parameters)):
            cert_titles = named.get(int(r["id"]), [])
            if isinstance(r["verdict"], str) and isinstance(r["node"], str) and 0 <= r["idx"] < len(cert_titles) and node in (None, r["node"]):
                found[(int(r["id"]), cert_titles[r["idx"]], r["node"])] = r["verdict"]
        return found

    def trend(self, name: str, history: list[Obj] | None = None) -> dict[str, list[float]]:
        """Bus bandwidth (GB/s) per category across certifications, oldest first (categories without one left out). A
        category measured in groups of different sizes (intra-node, then full-scale) is one series per size, keyed
        `category (N nodes)`: a node alone and 32 nodes across the network are no trend of one another."""
        series: dict[str, list[float]] = {}
        for key, value, _ in self._trend_points(name, history):
            series.setdefault(key, []).append(value)
        return series

    def trend_last_shown(self, name: str, history: list[Obj] | None = None) -> dict[str, str]:
        """The last value of each `trend` series as the report prints it (shown_value: judged by its own threshold)."""
        last = {key: (value, category) for key, value, category in self._trend_points(name, history)}  # each series' last only:
        return {key: shown_value(category, BUS_BANDWIDTH, value) for key, (value, category) in last.items()}  # it judged every point

    def _trend_points(self, name: str, history: list[Obj] | None) -> list[tuple[str, float, Obj]]:
        """(series, busBW, the category result that measured it) of `trend`, oldest first."""
        points: list[tuple[str, int | None, float, Obj]] = []
        for entry in history if history is not None else self.node(name):
            for category in entry["categories"]:
                if category["busBW"] is not None:
                    size = next((job.get("groupSize") for job in reversed(category["jobs"])
                                 if (job.get("measurements") or {}).get(BUS_BANDWIDTH) == category["busBW"]), None)
                    points.append((category["category"], size if isinstance(size, int) else None, float(category["busBW"]), category))
        keys = series_key([(key, size) for key, size, _, _ in points])
        return [(key, value, category) for key, (_, _, value, category) in zip(keys, points, strict=True)]

    def staleness(self, name: str, current: Baseline | None = None, history: list[Obj] | None = None) -> Staleness:
        """Compare the baseline of the node's last pass with `current` (the live Node), else with the
        latest baseline archived for it."""
        history = history if history is not None else self.node(name)
        if current is ABSENT:
            return Staleness("absent")
        last_pass = next((e for e in reversed(history) if e["passed"]), None)
        if last_pass is None:
            return Staleness("never-passed")
        latest = current if current else next((e["baseline"] for e in reversed(history) if e["baseline"]), None)
        if not last_pass["baseline"] or not latest:
            return Staleness("unknown", last_pass["certification"])
        diff = changes(last_pass["baseline"], latest)
        return Staleness("stale" if diff else "current", last_pass["certification"], diff)

    def nodes(self, last: int | None = None, current: Mapping[str, Baseline] | None = None) -> list[Obj]:
        """Every node's summary over the last N certifications (all when None; a node in none of them is left out):
        certifications it was in, failures, last verdict and trend within them; staleness compares its last pass ever
        with its software now. Worked out in SQL (summaries.py); a history that might be damaged is read whole
        (`nodes_read_whole`, which says the same of one that is not, and names the damage)."""
        parts = summary_parts(self, last)
        if parts is None:
            return self.nodes_read_whole(last, current)
        return [self._summary(p, self.staleness(p.node, current_of(current, p.node), p.passes)) for p in parts]

    def nodes_read_whole(self, last: int | None = None, current: Mapping[str, Baseline] | None = None) -> list[Obj]:
        """`nodes` from every node's whole history read and decoded (36 s at 10,000 certifications of 32 nodes)."""
        recent = {c["id"] for c in self.certifications(last)} if last else None
        summaries = []
        histories = self._histories()  # every result and report read once, not once per node
        for name in self.node_names():
            history = histories.get(name, [])
            window = [e for e in history if recent is None or e["id"] in recent]
            if not window:  # in none of the last N: nothing of them to say (it read `untested`, a state it never had in them)
                continue
            trend: dict[str, list[float]] = {}
            lasts: dict[str, tuple[float, Obj]] = {}
            for key, value, category in self._trend_points(name, window):
                trend.setdefault(key, []).append(value)
                lasts[key] = (value, category)
            parts = NodeParts(name, len(history), sum(1 for e in window if e["result"] == "failed"),
                              sum(1 for e in window if e["result"] == "suspect"), len(window), window[-1], history, trend, lasts)
            summaries.append(self._summary(parts, self.staleness(name, current_of(current, name), history)))
        return summaries

    def _summary(self, parts: NodeParts, stale: Staleness) -> Obj:
        """One node's summary (`nodes`): `certifications` all it was in, the rest within the window."""
        latest = parts.latest
        return {
            "node": parts.node, "certifications": parts.certifications, "failures": parts.failures, "suspect": parts.suspect,
            "window": parts.window, "lastResult": latest["result"],
            "lastResultSaid": latest["resultSaid"],  # the diagnosis's verdict where one judged it
            "lastVerdicts": latest["verdicts"],  # each category that decided it, worst first
            "lastCertification": latest["certification"], "lastReason": last_reason(latest),
            "lastReasons": last_reasons(latest),  # its parts, for a table to cut (not in the JSON)
            "staleness": stale, "trend": parts.trend,
            # each series' last value as printed (trend_last_shown)
            "trendLastShown": {key: shown_value(category, BUS_BANDWIDTH, value) for key, (value, category) in parts.lasts.items()}}

    def offenders(self, last: int = 10) -> list[Obj]:
        """Nodes that failed (or were suspect) in the last N certifications, most failures first."""
        found = [n for n in self.nodes(last) if n["failures"] or n["suspect"]]
        return sorted(found, key=lambda n: (-n["failures"], -n["suspect"], n["node"]))

    def stale_nodes(self, current: Mapping[str, Baseline] | None = None) -> dict[str, Staleness]:
        """Every node whose baseline changed since its last pass (`staleness`). Read in two queries whatever the history
        holds: each node's last pass and its baseline then, and (where no current one is given) its latest baseline
        archived. The map asks again whenever a certification is archived, and reading every node's whole history
        (`nodes`) took 36 s of the console's loop at 10,000 certifications of 32 nodes (now about 0.5 s)."""
        self._refuse_orphans()
        scope, parameters = self._scope()
        # Each certification's place in the history's order (completion time, then id), of `sources`.
        ranked = (f"WITH o AS MATERIALIZED (SELECT c.id, c.name, ROW_NUMBER() OVER (ORDER BY c.completion_time, c.id) AS rank "
                  f"FROM certifications c WHERE 1 = 1{scope})")
        # A node passed a certification: some category passed, none failed, suspected or doubted it (`passed`).
        doubted = ", ".join(f"'{state}'" for state in sorted(NOT_PASSED))
        passes = self._rows(
            f"{ranked}, p AS MATERIALIZED (SELECT r.node, r.cert_id FROM node_results r GROUP BY r.node, r.cert_id "
            f"HAVING MAX(r.state = 'passed') AND NOT MAX(r.state IN ({doubted}))), "
            "last AS (SELECT p.node, MAX(o.rank) AS rank FROM p JOIN o ON o.id = p.cert_id GROUP BY p.node) "
            "SELECT last.node, o.id, o.name, b.baseline FROM last JOIN o ON o.rank = last.rank "
            "LEFT JOIN node_baselines b ON b.cert_id = o.id AND b.node = last.node", parameters)
        latest: dict[str, Baseline | None] = {}
        if current is None or not all(current.values()):  # the latest baseline archived stands in for the software now
            for r in self._rows(f"{ranked}, last AS (SELECT b.node, MAX(o.rank) AS rank FROM node_baselines b JOIN o ON o.id = b.cert_id "
                                "WHERE b.baseline IS NOT NULL AND b.baseline NOT IN ('{}', 'null') GROUP BY b.node) "
                                "SELECT last.node, o.id, o.name, b.baseline FROM last JOIN o ON o.rank = last.rank "
                                "JOIN node_baselines b ON b.cert_id = o.id AND b.node = last.node", parameters):
                name = _checked(self.path, "node_baselines", r, {"node": "text"}, f"{_certification(r)}, node {_name(r['node'])}")["node"]
                latest[name] = _checked(self.path, "node_baselines", r, {"baseline": "baseline?"}, f"{_certification(r)}, node {_name(name)}")["baseline"]
        found = {}
        for r in passes:
            name = _checked(self.path, "node_results", r, {"node": "text"}, f"{_certification(r)}, node {_name(r['node'])}")["node"]
            then = _checked(self.path, "node_baselines", r, {"baseline": "baseline?"}, f"{_certification(r)}, node {_name(name)}")["baseline"]
            now = current_of(current, name)
            if now is not ABSENT and not now:
                now = latest.get(name)
            if now is ABSENT or not then or not now:
                continue  # absent, or unknown: not stale
            if diff := changes(then, now):
                found[name] = Staleness("stale", _checked(self.path, "certifications", r, {"name": "text"}, _certification(r))["name"], diff)
        return found
