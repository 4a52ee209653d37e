"""The engine on an in-memory store with the default fleet's Nodes and a runner the test supplies: a certification
run to the end, for tests that script what each run prints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, NODE, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore

Obj = dict[str, Any]
RunnerFactory = Callable[[WriteThroughStore, ManualClock], Any]


async def certify(cert_text: str, runner: RunnerFactory, namespace: str = "default") -> tuple[Obj, list[Obj]]:
    """Run the certification in `cert_text` with `runner(store, clock)`; its report and the Jobs left."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    for node in build_nodes(default_scenario()):
        created = await store.create(NODE, node)
        await store.update_status(NODE, {**created, "status": node["status"]})
    cache = engine_cache(store)
    writer = WriteThroughStore(store, cache)
    engine = Engine(writer, clock, default_catalog(), runner(writer, clock), cache=cache)
    cert = certification_from_text("cert", cert_text, default_catalog()).to_wire()
    cert.pop("status", None)
    await store.create(CERTIFICATION, cert)
    await cache.start()
    try:
        await engine.run_until_settled(max_seconds=3600)
    finally:
        await engine.stop()
        await cache.stop()
    final = await store.get(CERTIFICATION, cert["metadata"]["name"], namespace)
    jobs = (await store.list(JOB)).items
    return build_report(final, (await store.list(WORKFLOW)).items, jobs), jobs
