"""`nvcre history node NAME` and `nvcre history nodes` on a large history, as they are against as they were, in the same
process.

The history is archived as the simulator archives it (the built-in fleet of 32 nodes: a burn-in, a diagnosis, a
loopback of half the fleet), then grown to --certifications by copying the burn-in and the loopback in turn and the
diagnosis every 50th (a minute apart; each copy's bandwidths moved a few percent, with the evidence and the Jobs that
measured them; three nodes' driver upgraded half-way). Each command's queries (what it reads before it prints: the
node's history, staleness and trend; every node's summary) are timed as they are, on the history with its read indexes
(history/db.py INDEXES), and as they were: on a copy without them (as nvcre 0.1.0 left it), `history nodes` from every
result read whole (HistoryQuery.nodes_read_whole) and trend_last_shown judging every value of the node. Both must say
the same, or the bench fails.

    python bench/history.py                                   # 10,000 certifications: 2-3 minutes
    python bench/history.py --rounds 3                        # the median of three timings each
    python bench/history.py --certifications 20               # the smallest (tests/test_benches.py)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402

from nvcre_tui.engine.controllers import conditions as cond  # noqa: E402
from nvcre_tui.engine.history.db import INDEXES, open_history  # noqa: E402
from nvcre_tui.engine.history.queries import HistoryQuery, shown_value  # noqa: E402
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH  # noqa: E402
from nvcre_tui.engine.session import SimSession  # noqa: E402
from nvcre_tui.engine.sim.scenario import default_scenario  # noqa: E402
from nvcre_tui.engine.store.protocol import CERTIFICATION  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "default"
NODE = "gpu-node-07"  # the slow GPU of the built-in fleet: in every certification but the half-fleet loopback
Obj = dict[str, Any]


def certifications() -> list[Obj]:
    """The burn-in and the diagnosis of examples/, and a loopback of the first 16 nodes."""
    found = [yaml.safe_load((ROOT / "examples" / name).read_text()) for name in ("burn-in.yaml", "diagnose.yaml")]
    found.append({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "quick"},
                  "spec": {"target": {"nodeNames": [f"gpu-node-{i:02d}" for i in range(1, 17)]},
                           "categories": [{"domain": "communication", "variant": "nccl-loopback"}],
                           "options": {"thresholds": {BUS_BANDWIDTH: "value >= 100"}}}})
    for body in found:
        body["metadata"]["namespace"] = NAMESPACE
    return found


async def archive(history: Path) -> None:
    """Run each certification on the simulated fleet to its end; the session archives it."""
    session = await SimSession.open(default_scenario(), None, history=history)
    try:
        assert session.engine is not None
        for body in certifications():
            await session.store.create(CERTIFICATION, body)
            name = body["metadata"]["name"]

            async def finished(name: str = name) -> bool:
                cert = session.cache.get(CERTIFICATION, name, NAMESPACE)
                return cert is not None and cond.is_terminal(cert)

            if not await session.engine.run_until_settled(until=finished, max_seconds=48 * 3600):
                raise SystemExit(f"{name} did not finish")
    finally:
        await session.close()


def _moved(row: tuple[Any, ...], i: int) -> tuple[Any, ...]:
    """A result row with its bandwidth moved by up to 6 % (up where it passed, down where it failed: the same side of
    its threshold), in its measurements, its evidence and the Jobs that measured it."""
    node, category, state, reason, message, bus_bw, measurements, evidence, jobs = row
    if bus_bw is None:
        return row
    checks = json.loads(evidence)
    passed = all(check.get("passed") is not False for check in checks if check.get("metric") == BUS_BANDWIDTH)
    moved = round(bus_bw * (1 + (i % 7) / 100 if passed else 1 - (i % 7) / 100), 2)
    found = {**json.loads(measurements), BUS_BANDWIDTH: moved}
    for check in checks:
        if check.get("metric") == BUS_BANDWIDTH and check.get("measured") == bus_bw:
            check["measured"] = moved
    ran = json.loads(jobs)
    for job in ran:
        if isinstance(job.get("measurements"), dict) and job["measurements"].get(BUS_BANDWIDTH) == bus_bw:
            job["measurements"][BUS_BANDWIDTH] = moved
    return (node, category, state, reason, message, moved, json.dumps(found), json.dumps(checks), json.dumps(ran))


def grow(history: Path, total: int) -> None:
    """Copy the archived certifications until the history holds `total`."""
    connection = sqlite3.connect(history)
    ids = [row[0] for row in connection.execute("SELECT id FROM certifications ORDER BY id")]
    diagnosis = connection.execute("SELECT id FROM certifications ORDER BY length(report) DESC LIMIT 1").fetchone()[0]
    others = [cert for cert in ids if cert != diagnosis]
    results = {cert: connection.execute("SELECT node, category, state, reason, message, bus_bw, measurements, evidence, jobs "
                                        "FROM node_results WHERE cert_id = ?", (cert,)).fetchall() for cert in ids}
    baselines = {cert: connection.execute("SELECT node, baseline FROM node_baselines WHERE cert_id = ?", (cert,)).fetchall() for cert in ids}
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with connection:
        for i in range(total - len(ids)):
            source = diagnosis if i % 50 == 49 else others[i % len(others)]
            cert = connection.execute(
                "INSERT INTO certifications (source, uid, name, namespace, result, start_time, completion_time, archived_at, report, run) "
                "SELECT source, uid || ?, name || ?, namespace, result, start_time, ?, archived_at, report, run || ? FROM certifications "
                "WHERE id = ?", (f"-{i}", f"-{i}", (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"), f"-{i}", source)).lastrowid
            connection.executemany("INSERT INTO node_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                   [(cert, *_moved(row, i)) for row in results[source]])
            upgraded = i > (total - len(ids)) // 2
            connection.executemany("INSERT INTO node_baselines VALUES (?, ?, ?)", [
                (cert, node, json.dumps({**json.loads(baseline), "driver": "575.57.08"}, sort_keys=True)
                 if upgraded and node in ("gpu-node-01", "gpu-node-02", NODE) else baseline) for node, baseline in baselines[source]])
    connection.close()


class AsItWas(HistoryQuery):
    """The queries as they were: `nodes` from every result read whole, every value of a trend judged."""

    def nodes(self, last: int | None = None, current: Any = None) -> list[Obj]:
        return self.nodes_read_whole(last, current)

    def trend_last_shown(self, name: str, history: list[Obj] | None = None) -> dict[str, str]:
        return {key: shown_value(category, BUS_BANDWIDTH, value) for key, value, category in self._trend_points(name, history)}


def node_command(query: HistoryQuery) -> object:
    """What `history node NAME` reads before it prints."""
    history = query.node(NODE)
    return history, query.staleness(NODE, None, history), query.trend(NODE, history), query.trend_last_shown(NODE, history)


def nodes_command(query: HistoryQuery) -> object:
    """What `history nodes` reads before it prints."""
    return query.nodes()


def median_s(rounds: int, ask: Callable[[], object]) -> tuple[float, object]:
    times, said = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        said = ask()
        times.append(time.perf_counter() - start)
    return statistics.median(times), said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--certifications", type=int, default=10_000, help="certifications in the history (at least 3)")
    parser.add_argument("--rounds", type=int, default=1, help="timings of each query; the median is printed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        now, was = Path(folder) / "history.db", Path(folder) / "history-0.1.0.db"
        started = time.perf_counter()
        asyncio.run(archive(now))
        grow(now, max(args.certifications, 3))
        shutil.copy(now, was)
        connection = sqlite3.connect(was)
        for index in INDEXES:
            connection.execute(f"DROP INDEX IF EXISTS {index.split()[5]}")
        connection.close()
        open_history(now).close()  # as a command opens it: with its read indexes
        connection = sqlite3.connect(now)
        nodes = connection.execute("SELECT COUNT(DISTINCT node) FROM node_results").fetchone()[0]
        connection.close()
        print(f"a history of {args.certifications:,} certifications of {nodes} nodes ({now.stat().st_size / 1e6:.0f} MB), "
              f"made in {time.perf_counter() - started:.0f} s")
        same = True
        print(f"  {'query':28} {'as it was':>12} {'now':>12} {'ratio':>8}")
        asks: list[tuple[str, Callable[[HistoryQuery], object]]] = [(f"history node {NODE}", node_command), ("history nodes", nodes_command)]
        for label, ask in asks:
            before, said_before = median_s(args.rounds, partial(ask, AsItWas(was)))
            after, said_after = median_s(args.rounds, partial(ask, HistoryQuery(now)))
            same = same and said_before == said_after
            print(f"  {label:28} {before * 1000:9.0f} ms {after * 1000:9.0f} ms {before / after:7.1f}x")
        print(f"the same said both ways: {'yes' if same else 'NO'}")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
