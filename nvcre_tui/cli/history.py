"""`nvcre history nodes | node NAME | certifications`: the local archive of finished certifications.

Reads only the history database ($NVCRE_HISTORY, else $XDG_STATE_HOME/nvcre/history.db; --history PATH):
it outlives the cluster objects. Staleness compares a node's last pass with the latest baseline archived
for it, or with the Nodes of `--nodes FILE` (e.g. `kubectl get nodes -o yaml`) when given.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from nvcre_tui.cli.filepaths import file_path
from nvcre_tui.cli.numbers import positive
from nvcre_tui.cli.output import print_table
from nvcre_tui.engine.api.serialize import to_json
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, BUS_BANDWIDTH, with_unit
from nvcre_tui.engine.printable import printable


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `history` command group."""
    parser = groups.add_parser("history", help="node results across finished certifications: trends, repeat offenders, stale nodes")
    commands = parser.add_subparsers(title="history commands", metavar="COMMAND", required=True)
    nodes = commands.add_parser("nodes", help="every node: failures in the last N certifications (repeat offenders first), staleness, trend")
    node = commands.add_parser("node", help="one node's results across certifications, its baseline and bandwidth trend")
    node.add_argument("name", metavar="NAME")
    certifications = commands.add_parser("certifications", help="the archived certifications")
    for command, func in ((nodes, nodes_command), (node, node_command), (certifications, certifications_command)):
        command.add_argument("-o", "--output", choices=("table", "json"), default="table")
        command.add_argument("--history", metavar="PATH", type=file_path, help="history database (default $NVCRE_HISTORY or ~/.local/state/nvcre/history.db)")
        command.add_argument("--last", metavar="N", type=positive, help="only the last N certifications (by completion time)")
        command.add_argument("--source", metavar="TEXT", help="only certifications of the stores whose source (SOURCE in `history "
                             "certifications`: cluster:<server> or sim:<state file>) contains TEXT")
        command.set_defaults(func=func)
    for command in (nodes, node):
        command.add_argument("--nodes", metavar="NODES.yaml", help="current Node objects to judge staleness against (default: the latest archived baseline)")


def _query(args: argparse.Namespace) -> Any:
    """The history to read (--history, --source). Its note that nodes of several sources are merged is said by
    `_merged_note` once the command has what it prints: bad input after it (`--nodes` missing, no such node) was two
    lines, the note and the error."""
    from nvcre_tui.engine.history import HistoryQuery, default_history_path, open_history

    path = Path(args.history) if args.history else default_history_path()
    open_history(path, create=False).close()  # InputError naming the file when it is absent or not a history
    sources = HistoryQuery(path).all_sources()
    if args.source is None:
        return HistoryQuery(path)
    chosen = [source for source in sources if args.source in source]
    if not chosen:
        raise InputError(f"--source {args.source!r}: no certification in {path} comes from a source containing it "
                         f"(its sources: {', '.join(sources) or 'none'})")
    return HistoryQuery(path, chosen)


def _merged_note(query: Any, args: argparse.Namespace) -> None:
    """Say, on stderr, that nodes of several sources are merged by name (one node name may be two machines)."""
    if args.source is None and len(sources := query.all_sources()) > 1:
        _say(f"nvcre: {query.path} holds certifications of {len(sources)} sources, whose nodes are merged by name: "
             "--source TEXT keeps one (SOURCE in `nvcre history certifications`)")


def _say(message: str) -> None:
    print(printable(message, newlines=False), file=sys.stderr)


def _current(args: argparse.Namespace) -> dict[str, dict[str, str]] | None:
    if not getattr(args, "nodes", None):
        return None
    from nvcre_tui.engine.api.nodes import node_name
    from nvcre_tui.engine.history.baseline import baseline_of
    from nvcre_tui.engine.planning.manifest import load_nodes

    return {node_name(n): baseline_of(n) for n in load_nodes(args.nodes)}


def _trend_text(trend: dict[str, list[float]], last_shown: dict[str, str], most: int | None = None, unit: bool = False) -> str:
    """Each series as a sparkline and its last value as the report prints it (HistoryQuery.trend_last_shown), with its
    unit when `unit` (a line of its own; a table's column says it in its header); the first `most` of them and `+N more`
    when given (a table's cell: `history node NAME` says every one)."""
    from nvcre_tui.engine.history.sparkline import sparkline

    series = [f"{category.split('/')[-1]} {sparkline(values, 12)} {with_unit(BUS_BANDWIDTH, last_shown[category]) if unit else last_shown[category]}"
              for category, values in trend.items()]
    if most is not None and len(series) > most:
        series = [*series[:most], f"+{len(series) - most} more"]
    return "; ".join(series) or "-"


# LAST's widest, and REASON's: a node's verdicts in many categories are cut to `faulty in nccl-all-reduce, +4 more`
# (`history node NAME` says every category; the JSON's lastVerdicts and lastReason too).
LAST_WIDTH = 50  # whole: `faulty in nccl-all-reduce, failed in nccl-loopback`
TREND_SERIES = 2  # BUS BW TREND's series, likewise: a node in five nccl categories had a cell of five sparklines


def nodes_command(args: argparse.Namespace) -> int:
    """Every node, repeat offenders first."""
    query = _query(args)
    summaries = query.nodes(args.last, _current(args))
    summaries.sort(key=lambda n: (-n["failures"], -n["suspect"], n["node"]))
    _merged_note(query, args)
    if args.output == "json":
        print(to_json([{**{k: v for k, v in n.items() if k not in ("staleness", "trendLastShown", "lastReasons")}, "staleness": n["staleness"].to_json()}
                       for n in summaries]))
        return 0
    from nvcre_tui.engine.history.queries import reasons_within, verdicts_said_within

    window = f"LAST {args.last}" if args.last else "ALL"
    print_table(("NODE", f"CERTS ({window})", "FAILURES", "SUSPECT", "LAST", "REASON", "BASELINE", f"BUS BW TREND ({BANDWIDTH_UNIT})"),
                [(n["node"], n["window"], f"{n['failures']}/{n['window']}", n["suspect"],
                  verdicts_said_within(n["lastVerdicts"], n["lastResultSaid"], LAST_WIDTH), reasons_within(n["lastReasons"], LAST_WIDTH) or "-",
                  ("STALE: " if n["staleness"].stale else "") + n["staleness"].brief, _trend_text(n["trend"], n["trendLastShown"], TREND_SERIES))
                 for n in summaries])
    return 0


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def node_command(args: argparse.Namespace) -> int:
    """One node across certifications."""
    query = _query(args)
    # A name of bytes that are no UTF-8 (lone surrogates in argv) names no node of an archive of text; SQLite cannot
    # even bind it (UnicodeEncodeError, an internal error)
    every = query.node(args.name) if _is_text(args.name) else []
    if not every:
        raise InputError(f"node {args.name!r}: no results in the history {query.path}")
    recent = {c["id"] for c in query.certifications(args.last)} if args.last else None
    history = [e for e in every if recent is None or e["id"] in recent]
    from nvcre_tui.engine.history.queries import current_of, missed_threshold, reason_said, shown_value, state_said

    stale = query.staleness(args.name, current_of(_current(args), args.name), every)
    trend = query.trend(args.name, history)
    last_shown = query.trend_last_shown(args.name, history)
    _merged_note(query, args)
    if args.output == "json":
        print(to_json({"node": args.name, "staleness": stale.to_json(), "trend": trend, "certifications": history}))
        return 0
    rows = []
    for entry in history:
        for category in entry["categories"]:
            # a value with its unit, and one that missed its threshold with the threshold, as the report and the failures
            # pane say it (`busBandwidthGBps 242.64 GB/s (value >= 300)`)
            measured = ", ".join(f"{k} {with_unit(k, shown_value(category, k, v))}" + (f" ({missed})" if (missed := missed_threshold(category, k, v)) else "")
                                 for k, v in sorted(category["measurements"].items()) if isinstance(v, int | float)) or "-"
            rows.append((entry["certification"], entry["completionTime"] or "-", category["category"], state_said(category),
                         reason_said(category) or "-", measured))
    # Every line is made before the first is printed (a failure prints nothing); cluster text (osImage is whatever the
    # kubelet reports) never reaches the terminal raw.
    lines = _why_lines(history)
    lines.append(f"baseline: {'STALE: ' if stale.stale else ''}{stale.detail}")
    latest = next((e["baseline"] for e in reversed(history) if e["baseline"]), None)
    if latest:
        lines.append("software: " + ", ".join(f"{k} {v}" for k, v in sorted(latest.items())))
    lines.append(f"bus bandwidth trend: {_trend_text(trend, last_shown, unit=True)}")
    if not history:  # in none of the last N: said, not an empty table under its headers
        lines.insert(0, f"{args.name}: in none of the last {args.last} certifications (the last it was in: {every[-1]['certification']}, "
                        f"completed {every[-1]['completionTime'] or '-'})")
    else:
        print_table(("CERTIFICATION", "COMPLETED", "CATEGORY", "RESULT", "REASON", "MEASURED"), rows, title=escape(printable(args.name, newlines=False)))
    for line in lines:
        print(printable(line, newlines=False))
    return 0


def _why_lines(history: list[dict[str, Any]]) -> list[str]:
    """Why the latest certification that did not pass the node failed it, each category in its words (the message the
    report gives beside the reason): REASON alone read `WorkloadFailed` with MEASURED `-` for a GPU that fell off the
    bus, the Xid said only in the JSON."""
    from nvcre_tui.engine.report.text import blame_text, failure_detail

    for entry in reversed(history):
        # as the report's failed nodes say them: a suspect's blame is its whole group's (a hung group's Timeout), not its
        # own; the checks that failed from the archived evidence (`busBandwidthGBps measured 264.81, expected value >= 300`),
        # else the message
        said = [f"  {c['category']}: {blame_text(str(c['reason']), c['state'] == 'suspect')} — {failure_detail(c)}" for c in entry["categories"]
                if c["state"] != "passed" and c.get("reason") and c.get("message")]
        if said:
            return [f"why, in {entry['certification']} (the latest that did not pass it):", *said]
    return []


def certifications_command(args: argparse.Namespace) -> int:
    """The archived certifications, oldest first."""
    rows = _query(args).certifications(args.last)
    if args.output == "json":
        print(to_json(rows))
        return 0
    # NODES and EXCLUDED NODES as the report counts them (its Nodes: and Excluded:)
    print_table(("NAME", "NAMESPACE", "RESULT", "COMPLETED", "NODES", "EXCLUDED NODES", "FAILED NODES", "SUSPECT NODES", "INCONCLUSIVE NODES", "SOURCE"),
                [(r["name"], r["namespace"], r["result"] + (" (refused)" if r["refused"] else "") + (" (simulated)" if r["simulated"] else ""),
                  r["completionTime"] or "-",
                  *("-" if r[key] is None else r[key] for key in ("nodes", "excludedNodes", "failedNodes", "suspectNodes", "inconclusiveNodes")),
                  r["source"]) for r in rows])
    return 0
