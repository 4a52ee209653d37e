"""Another nvcre process on the same SqliteStore, for the cross-process tests: `python sqlite_worker.py VERB PATH ...`.

Each verb prints one line per thing done, flushed, so the test knows what had returned when it killed us.
A worker that prints `ready` waits for a line on stdin before it starts (so two workers start together).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import LEASE, WORKFLOW, AlreadyExists, Conflict, NotFound
from nvcre_tui.engine.store.sqlite import SqliteStore

LEASE_NAMESPACE, LEASE_NAME = "nvcre-system", "nvcre-engine"


def _ready() -> None:
    print("ready", flush=True)
    sys.stdin.readline()


async def create(store: SqliteStore, prefix: str, count: str) -> None:
    """Create Workflows `<prefix>-<i>`; print `<name> <resourceVersion>` after each create returned."""
    _ready()
    for index in range(int(count)):
        created = await store.create(WORKFLOW, {"metadata": {"name": f"{prefix}-{index}", "namespace": "default"},
                                                "spec": {"index": index}})
        print(created["metadata"]["name"], created["metadata"]["resourceVersion"], flush=True)


async def watch(store: SqliteStore, count: str) -> None:
    """Watch Workflows from now; print `<type> <name> <resourceVersion>` for `count` events."""
    events = store.watch(WORKFLOW, resource_version=store.resource_version)
    _ready()
    for _ in range(int(count)):
        event = await asyncio.wait_for(anext(events), 10)
        print(event.type, event.object["metadata"]["name"], event.object["metadata"]["resourceVersion"], flush=True)


async def take_lease(store: SqliteStore, holder: str, rounds: str) -> None:
    """`rounds` times: make `holder` the Lease's holder and count a transition, with resourceVersion
    preconditions (get, change, update; a Conflict means another process won: get again)."""
    _ready()
    conflicts = created = 0
    for _ in range(int(rounds)):
        while True:
            try:
                lease = await store.get(LEASE, LEASE_NAME, LEASE_NAMESPACE)
            except NotFound:
                try:
                    await store.create(LEASE, {"metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
                                               "spec": {"holderIdentity": holder, "leaseTransitions": 1}})
                    created += 1
                    break
                except AlreadyExists:
                    continue
            await asyncio.sleep(0.001)  # think between read and write, as an engine does: the other process may win
            spec = lease["spec"]
            lease["spec"] = {**spec, "holderIdentity": holder, "leaseTransitions": spec["leaseTransitions"] + 1}
            try:
                await store.update(LEASE, lease)
                break
            except Conflict:
                conflicts += 1
    print("done", holder, created, conflicts, flush=True)


async def engine(store: SqliteStore, *names: str) -> None:
    """Run tests/engine/test_restart.py's engine until the named certifications are terminal, its clock
    resumed from the latest write (as a restarted simulator does); print `done`."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.store import CERTIFICATION
    from tests.engine.test_restart import new_engine
    from tests.scenarios.harness import NAMESPACE

    clock = ManualClock(store.last_write_time or ManualClock().now())
    store.clock = clock

    async def done() -> bool:
        return all([cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE)) for name in names])

    assert await new_engine(store, clock).run_until_settled(until=done, max_seconds=2 * 24 * 3600)
    print("done", flush=True)


VERBS: dict[str, Callable[..., Awaitable[None]]] = {"create": create, "watch": watch, "lease": take_lease, "engine": engine}


async def main(verb: str, path: str, *args: str) -> None:
    store = SqliteStore(path, ManualClock())
    try:
        await VERBS[verb](store, *args)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
