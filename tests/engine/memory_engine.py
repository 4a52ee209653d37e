"""The engine on an in-memory store with the default fleet's Nodes and a runner the test supplies: a certification
run to the end, for tests that script what each run prints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, MemoryStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore

Obj = dict[str, Any]
RunnerFactory = Callable[[WriteThroughStore, ManualClock], Any]


class ScriptedRunner:
    """Every run ends at once with `phase` and `exit_code`; its pod log is what `log_of(run)` gives."""

    simulated = False

    def __init__(self, store: WriteThroughStore, clock: ManualClock, phase: str, exit_code: int,
                 log_of: Callable[[Obj], list[str]]) -> None:
        self.store, self.clock, self.phase, self.exit_code, self.log_of = store, clock, phase, exit_code, log_of

    async def reconcile_run(self, run: Obj) -> float | None:
        if (run.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return None
        now = format_time(self.clock.now())
        meta = run["metadata"]
        await self.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"),
                                      {"phase": self.phase, "exitCode": self.exit_code, "startTime": now, "completionTime": now})
        return None

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        return self.log_of(run)

    async def stop(self, run: Obj) -> None:
        return None

    async def release(self, owner: Obj) -> None:
        return None

    async def tick(self) -> float | None:
        return None


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
