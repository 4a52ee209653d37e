"""Left running for weeks: what a long-lived engine and console keep after many certifications that came and went, as
ratios against a baseline taken in the same process after a few of them.

An engine runs certification after certification for weeks (a burn-in, `nvcre controller`, the console's own engine on
the simulator) and a wall display watches them; whatever they keep per certification and never forget grows until the
process is restarted. This bench opens the console's session on the simulator (an SQLite store file, the history
archive, the engine) with the console's read model (the Informer, one snapshot and its views per cycle), and runs
cycles of: create a short certification (NCCL loopback on every node of a small fleet), run it to its end, delete it
(archived first, as `certification delete` and the console's `x` do), and let the engine collect what it owned. After
`--warmup` cycles it takes the baseline (memory traced from then on, RSS, asyncio tasks, and the entries of every
dict, set and list held by the session's engine, cache, archiver, runner, fleet and read model), runs `--cycles` more,
and prints each against the baseline: the memory held after half the cycles and after all of them (a ratio of 2.0x
grows with every certification; the bounded memos, such as the simulated runner's 512 run plans, fill up and start
over, so a flat process reads about 1.0x), the tasks, and the collections that grew. Then it times what the console asks of
the history at every refresh or archive (the wall's last archived certification, the map's stale marks, a node's
history) against the same history with `--history-copies` more certifications archived.

    python bench/soak.py                      # 120 cycles after 10 on 8 nodes; a history of 2,000 more
    python bench/soak.py --cycles 400 --nodes 32 --history-copies 10000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nvcre_tui.engine.controllers import conditions as cond  # noqa: E402
from nvcre_tui.engine.history.deletion import delete_certification  # noqa: E402
from nvcre_tui.engine.history.queries import HistoryQuery  # noqa: E402
from nvcre_tui.engine.informer import Informer  # noqa: E402
from nvcre_tui.engine.session import SimSession  # noqa: E402
from nvcre_tui.engine.sim.scenario import Scenario  # noqa: E402
from nvcre_tui.engine.store.protocol import CERTIFICATION, EVENT  # noqa: E402

NAMESPACE = "default"
SHOWN = 8  # collections that grew, listed


def certification(name: str) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}}


def held(roots: dict[str, object]) -> dict[str, int]:
    """`owner.attribute` -> entries, for every dict, set, list and deque reachable from `roots` through nvcre objects'
    attributes (two levels down), each collection once (the first path that reaches it)."""
    found: dict[str, int] = {}
    seen: set[int] = set()

    def walk(obj: object, path: str, depth: int) -> None:
        if id(obj) in seen or depth > 2 or not hasattr(obj, "__dict__"):
            return
        seen.add(id(obj))
        for name, value in vars(obj).items():
            if isinstance(value, dict | set | frozenset | list) or type(value).__name__ in ("deque", "OrderedDict", "defaultdict"):
                if id(value) not in seen:
                    seen.add(id(value))
                    found[f"{path}.{name}"] = len(value)
            elif type(value).__module__.startswith("nvcre_tui"):
                walk(value, f"{path}.{name}", depth + 1)

    for path, root in roots.items():
        walk(root, path, 0)
    return found


def resident_mb() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return float("nan")
    import resource
    return pages * resource.getpagesize() / 1e6


async def cycle(session: SimSession, informer: Informer, name: str) -> None:
    """One certification created, run to its end, deleted and collected; the console's snapshot read meanwhile."""
    engine = session.engine
    assert engine is not None
    await session.store.create(CERTIFICATION, certification(name))

    async def finished() -> bool:
        cert = session.cache.get(CERTIFICATION, name, NAMESPACE)
        return cert is not None and cond.is_terminal(cert)

    if not await engine.run_until_settled(until=finished, max_seconds=6 * 3600):
        raise SystemExit(f"{name} did not finish")
    informer.snapshot().views  # the console's read model, as a refresh reads it
    cert = session.cache.get(CERTIFICATION, name, NAMESPACE)
    assert cert is not None
    await delete_certification(session.store, session.cache, session.archiver, cert)
    await engine.run_until_settled(max_seconds=600)
    informer.snapshot().views


def sample(session: SimSession, informer: Informer) -> tuple[int, int, float, dict[str, int]]:
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    roots: dict[str, object] = {"engine": session.engine, "cache": session.cache, "archiver": session.archiver, "runner": session.runner,
             "fleet": session.fleet, "informer": informer, "session": session}
    return traced, len(asyncio.all_tasks()), resident_mb(), held(roots)


async def soak(folder: Path, nodes: int, warmup: int, cycles: int, top: int) -> tuple[Path, list[str]]:
    scenario = Scenario.model_validate({"name": f"soak: {nodes} nodes", "seed": 1, "nodes": [{"count": nodes, "cliques": 1}]})
    session = await SimSession.open(scenario, folder / "sim.db", history=folder / "history.db", live=False)
    informer = Informer(session.cache, NAMESPACE)
    lines = []
    try:
        for i in range(warmup):
            await cycle(session, informer, f"warmup-{i}")
        _, tasks_before, rss_before, held_before = sample(session, informer)
        events_before, clock_before = len((await session.store.list(EVENT)).items), session.clock.now()
        tracemalloc.start()
        started = time.perf_counter()
        half = cycles // 2
        for i in range(cycles):
            await cycle(session, informer, f"burn-in-{i}")  # a name per cycle: as a soak names each run
            if i + 1 == half:
                traced_half, tasks_half, _, _ = sample(session, informer)
                events_half = len((await session.store.list(EVENT)).items)
        elapsed = time.perf_counter() - started
        traced, tasks_after, rss_after, held_after = sample(session, informer)
        events_after, simulated = len((await session.store.list(EVENT)).items), session.clock.now() - clock_before
        sites = tracemalloc.take_snapshot().statistics("lineno")[:top] if top else []
        tracemalloc.stop()
        lines.append(f"{cycles} certifications created, run, deleted after {warmup} ({nodes} nodes, {elapsed / cycles * 1000:.0f} ms each "
                     "with memory traced)")
        lines.append(f"memory held since the baseline: {traced_half / 1e3:.1f} kB after {half}, {traced / 1e3:.1f} kB after {cycles} "
                     f"(ratio {traced / max(traced_half, 1):.2f}x; {cycles / half:.1f}x: it grows with every certification)")
        lines.append(f"resident {rss_before:.1f} -> {rss_after:.1f} MB ({rss_after / rss_before:.2f}x)")
        # the store's own growth: Events expire an hour after their last write, as the API server's do (store/events.py)
        lines.append(f"Events in the store {events_before} at the baseline, {events_half} after {half}, {events_after} after {cycles} "
                     f"(ratio {events_after / max(events_half, 1):.2f}x; {simulated.total_seconds() / 3600:.1f} simulated hours)")
        lines.append(f"asyncio tasks {tasks_before} at the baseline, {tasks_half} after {half}, {tasks_after} after {cycles} "
                     f"({tasks_after / max(tasks_before, 1):.2f}x)")
        total_before, total_after = sum(held_before.values()), sum(held_after.values())
        lines.append(f"entries held by the session's collections {total_before} -> {total_after} ({total_after / max(total_before, 1):.2f}x)")
        grew = sorted(((after - held_before.get(path, 0), path, after) for path, after in held_after.items()
                       if after > held_before.get(path, 0)), reverse=True)
        for more, path, after in grew[:SHOWN]:
            lines.append(f"  grew: {path} {held_before.get(path, 0)} -> {after} (+{more / cycles:.2f} per certification)")
        if not grew:
            lines.append("  grew: none")
        lines.extend(f"  held since the baseline: {site}" for site in sites)
    finally:
        await session.close()
    return folder / "history.db", lines


def copy_history(history: Path, copies: int) -> None:
    """Archive the history's first certification `copies` more times (new uids and names), as weeks of burn-in would."""
    connection = sqlite3.connect(history)
    with connection:
        for table in ("node_results", "node_baselines"):
            connection.execute(f"CREATE TEMP TABLE first_{table} AS SELECT * FROM {table} WHERE cert_id = 1")
        for i in range(copies):
            cursor = connection.execute(
                "INSERT INTO certifications (source, uid, name, namespace, result, start_time, completion_time, archived_at, report, run) "
                "SELECT source, uid || ?, name || ?, namespace, result, start_time, completion_time, archived_at, report, run || ? "
                "FROM certifications WHERE id = 1", (f"-copy-{i}", f"-copy-{i}", f"-copy-{i}"))
            for table in ("node_results", "node_baselines"):
                columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")][1:]
                connection.execute(f"INSERT INTO {table} SELECT ?, {', '.join(columns)} FROM temp.first_{table}", (cursor.lastrowid,))
    connection.close()


def time_queries(history: Path) -> dict[str, float]:
    connection = sqlite3.connect(history)
    source = connection.execute("SELECT source FROM certifications LIMIT 1").fetchone()[0]
    connection.close()
    query = HistoryQuery(history, [source])
    asks: dict[str, Callable[[], object]] = {"the wall's last archived (certifications(last=1))": lambda: query.certifications(last=1),
                                             "the map's stale marks (stale_nodes)": query.stale_nodes,
                                             "a node's history (history node)": lambda: query.node("gpu-node-01")}
    timed = {}
    for label, ask in asks.items():
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            ask()
            runs.append(time.perf_counter() - start)
        timed[label] = sorted(runs)[1]
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=10, help="certifications before the baseline")
    parser.add_argument("--cycles", type=int, default=120, help="certifications after it")
    parser.add_argument("--history-copies", type=int, default=2000, help="certifications added to the history for its query times")
    parser.add_argument("--top", type=int, default=0, help="also list the N source lines holding most of the memory traced")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        history, lines = asyncio.run(soak(Path(folder), args.nodes, args.warmup, args.cycles, args.top))
        print("\n".join(lines))
        base = time_queries(history)
        archived = args.warmup + args.cycles
        copy_history(history, args.history_copies)
        grown = time_queries(history)
        print(f"history queries, {archived} certifications archived vs {archived + args.history_copies}:")
        for label, seconds in base.items():
            print(f"  {label:52} {seconds * 1000:8.1f} ms {grown[label] * 1000:8.1f} ms  ratio {grown[label] / seconds:6.1f}x")


if __name__ == "__main__":
    main()
