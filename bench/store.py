"""Store write cost: SqliteStore (as opened by default, and power-safe) against MemoryStore, in the same process.

Run `python bench/store.py` (add `--objects N`). Each store gets the same workload: create N Jobs shaped like
the engine's (labels, an owner, a spec with node names), patch each one's status twice (as the engine does
while a job runs), list them all (median of 5), then delete the owner, which cascades to all of them in one transaction. "x" columns are
ratios to MemoryStore. The "10 watches" rows keep that many watches open and read (a live console and
engine); writes/s there counts the watchers' work between writes too. The file size is measured after the creates and status patches, per 1,000 objects:
the whole file, and the objects alone (without the change log that watches replay from).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import JOB, KNOWN_KINDS, WORKFLOW, MemoryStore, ResourceKind, ResourceStore
from nvcre_tui.engine.store.sqlite import SqliteStore

NAMESPACE = "bench"
WATCHES = 10  # about as many as the engine (5 kinds) and the console's informer keep open


def job(index: int, owner: dict[str, Any]) -> dict[str, Any]:
    nodes = [f"gpu-node-{(index * 8 + n) % 512:03d}" for n in range(8)]
    return {
        "metadata": {
            "name": f"wf-job-{index:05d}", "namespace": NAMESPACE,
            "labels": {"nvcre.nvidia.com/workflow": "wf", "nvcre.nvidia.com/iteration": str(index % 3)},
            "ownerReferences": [{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "uid": owner["metadata"]["uid"],
                                 "name": owner["metadata"]["name"], "controller": True}],
        },
        "spec": {"nodes": nodes, "category": "communication/nccl-all-reduce", "timeoutSeconds": 1800,
                 "command": ["all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"]},
    }


async def timed(step: Callable[[], Awaitable[object]], latencies: list[float]) -> None:
    start = time.perf_counter()
    await step()
    latencies.append((time.perf_counter() - start) * 1000)


async def workload(store: ResourceStore, count: int) -> list[float]:
    """Write latencies (ms) of every create and status patch."""
    owner = await store.create(WORKFLOW, {"metadata": {"name": "wf", "namespace": NAMESPACE}, "spec": {}})
    latencies: list[float] = []
    for index in range(count):
        await timed(lambda: store.create(JOB, job(index, owner)), latencies)
        await asyncio.sleep(0)  # let watches read, as between an engine's writes
    for phase in ("Running", "Succeeded"):
        for index in range(count):
            patch = {"phase": phase, "results": {"busBandwidthGBps": 391.5 + index % 7, "message": "x" * 120}}
            await timed(lambda: store.patch_status(JOB, f"wf-job-{index:05d}", NAMESPACE, patch), latencies)
            await asyncio.sleep(0)
    return latencies


async def drain(store: ResourceStore, kind: ResourceKind) -> None:
    """A watch that reads everything, as the engine's and the console's do."""
    async for _ in store.watch(kind):
        pass


async def list_once(store: ResourceStore) -> float:
    """Milliseconds to list every Job (the engine and the informer list whole kinds)."""
    start = time.perf_counter()
    await store.list(JOB, NAMESPACE)
    return (time.perf_counter() - start) * 1000


async def cascade_ms(store: ResourceStore) -> float:
    start = time.perf_counter()
    await store.delete(WORKFLOW, "wf", NAMESPACE)
    return (time.perf_counter() - start) * 1000


def file_bytes(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def object_bytes(store: SqliteStore) -> float:
    """Bytes of the objects and owners tables and their indexes (no change log), if SQLite has dbstat."""
    try:
        row = store._tables.db.execute("SELECT sum(pgsize) FROM dbstat WHERE name NOT IN ('changes', 'changes_by_kind')").fetchone()
    except sqlite3.OperationalError:
        return float("nan")
    return float(row[0])


async def main(count: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="nvcre-bench-store-"))
    rows = []
    stores: list[tuple[str, Callable[[], ResourceStore], int]] = [
        ("MemoryStore", lambda: MemoryStore(ManualClock()), 0),
        ("MemoryStore 10 watches", lambda: MemoryStore(ManualClock()), WATCHES),
        ("SqliteStore", lambda: SqliteStore(folder / "default.db", ManualClock()), 0),
        ("SqliteStore 10 watches", lambda: SqliteStore(folder / "watched.db", ManualClock()), WATCHES),
        ("SqliteStore power-safe", lambda: SqliteStore(folder / "power-safe.db", ManualClock(), power_safe=True), 0),
    ]
    for label, make, watches in stores:
        store = make()
        readers = [asyncio.create_task(drain(store, KNOWN_KINDS[index % len(KNOWN_KINDS)])) for index in range(watches)]
        start = time.perf_counter()
        latencies = await workload(store, count)
        seconds = time.perf_counter() - start
        for reader in readers:
            reader.cancel()
        size = objects_only = float("nan")
        if isinstance(store, SqliteStore):  # checkpointed: the size a reopened store starts from
            store._tables.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size, objects_only = file_bytes(store.path), object_bytes(store)
        list_ms = statistics.median([await list_once(store) for _ in range(5)])
        cascade = await cascade_ms(store)
        await store.close()
        quantiles = statistics.quantiles(latencies, n=20)
        rows.append((label, len(latencies) / seconds, quantiles[9], quantiles[18], list_ms, cascade,
                     size * 1000 / count, objects_only * 1000 / count))
    base = rows[0]
    print(f"{count} Jobs: {count} creates + {2 * count} status patches per store, then one cascade delete of all")
    print(f"{'store':<22}{'writes/s':>10}{'x':>7}{'p50 ms':>9}{'x':>7}{'p95 ms':>9}{'x':>7}"
          f"{'list ms':>9}{'x':>6}{'cascade ms':>12}{'x':>7}{'file KiB/1k':>13}{'objects KiB/1k':>16}")
    for label, rate, p50, p95, list_ms, cascade, per_thousand, objects_per_thousand in rows:
        print(f"{label:<22}{rate:>10.0f}{rate / base[1]:>7.2f}{p50:>9.3f}{p50 / base[2]:>7.1f}{p95:>9.3f}"
              f"{p95 / base[3]:>7.1f}{list_ms:>9.1f}{list_ms / base[4]:>6.1f}{cascade:>12.1f}{cascade / base[5]:>7.1f}"
              f"{per_thousand / 1024:>13.0f}{objects_per_thousand / 1024:>16.0f}")
    print("file: objects plus the change log (3 versions per Job here; at most history_limit rows, 10,000 by default)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000, help="Jobs per store (default 2000)")
    asyncio.run(main(parser.parse_args().objects))
