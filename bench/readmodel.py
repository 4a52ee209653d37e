"""The console's certification read model per refresh: joined from the snapshot's lists (every refresh redoes
the whole join) against the informer's join over the watch cache (a view is rebuilt only when one of its own
objects changed), on one certification of 4 categories with 1,024 Jobs each, while one Job changes per refresh.
A namesake certification of the same size in a second namespace is there too; the console's informer shows one
namespace (its -n) and filters each kind to it when the kind changed: printed against the all-namespace informer.

Run: `python bench/readmodel.py [--rounds N]`. Prints the median milliseconds per refresh of each and the ratios,
measured in this process. Not run by pytest.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import ENGINE_KINDS, engine_cache
from nvcre_tui.engine.informer import Informer
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.views import Snapshot

CATEGORIES, JOBS_PER_CATEGORY = 4, 1024
BURN_IN = Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml"


class Fleet:
    """A watch cache fed by hand, as the engine's write-through feeds it."""

    def __init__(self) -> None:
        self.cache = engine_cache(MemoryStore(ManualClock(SIM_START)))
        assert set(self.cache.kinds) == set(ENGINE_KINDS)
        self.rv = 0

    def put(self, kind: Any, name: str, labels: dict[str, str], namespace: str = "default", **body: Any) -> None:
        self.rv += 1
        self.cache.observe(kind, {"metadata": {"name": name, "namespace": namespace, "labels": labels, "resourceVersion": str(self.rv)}, **body})


def _specs() -> tuple[dict[str, Any], dict[str, Any]]:
    """A Workflow's spec and a Job's, as render makes them (the console leaves out objects its models refuse)."""
    catalog = default_catalog()
    cert = certification_from_text("burn-in.yaml", BURN_IN.read_text(), catalog)
    workflow = render_certification(cert, build_nodes(default_scenario()), catalog, "burn-in.yaml")[0].workflow.to_wire()
    return workflow["spec"], workflow["spec"]["jobTemplate"]["spec"]


def job_status(phase: str) -> dict[str, Any]:
    """A Job's status in `phase` (InProgress, Succeeded), as its conditions say it."""
    return {"conditions": [{"type": phase, "status": "True", "reason": phase, "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


def fleet(namespaces: tuple[str, ...] = ("default", "team-b")) -> Fleet:
    world = Fleet()
    workflow_spec, job_spec = _specs()
    names = [f"bench-cat-{c}" for c in range(CATEGORIES)]
    for namespace in namespaces:
        world.put(CERTIFICATION, "bench", {}, namespace, spec={"categories": [{"domain": "d", "variant": n} for n in names]},
                  status={"categoryStatuses": [{"domain": "d", "variant": n, "status": "InProgress", "workflowRef": {"name": n}}
                                               for n in names]})
        for name in names:
            jobs = [f"{name}-job-{j:04d}" for j in range(JOBS_PER_CATEGORY)]
            # the read model counts the Jobs the Workflow's groups ran
            groups = [{"name": f"group-{j}", "nodes": [f"node-{j}"], "phase": "Running", "jobRef": job} for j, job in enumerate(jobs)]
            world.put(WORKFLOW, name, {LABEL_CERTIFICATION: "bench"}, namespace, spec=workflow_spec,
                      status={"orchestration": {"groups": groups}})
            for job in jobs:
                world.put(JOB, job, {LABEL_WORKFLOW: name}, namespace, spec=job_spec, status=job_status("InProgress"))
    return world


def per_refresh_ms(world: Fleet, rounds: int, snapshot_of: Any) -> float:
    """Median ms of one refresh (snapshot + every certification's view) after one Job changed."""
    timings = []
    for i in range(rounds):
        workflow = f"bench-cat-{i % CATEGORIES}"
        job = f"{workflow}-job-{i % JOBS_PER_CATEGORY:04d}"
        spec = (world.cache.get(JOB, job, "default") or {}).get("spec")
        world.put(JOB, job, {LABEL_WORKFLOW: workflow}, spec=spec, status=job_status("Succeeded"))
        start = time.perf_counter()
        views = snapshot_of().views
        assert sum(len(c.jobs) for v in views.values() for c in v.categories) == CATEGORIES * JOBS_PER_CATEGORY
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    rounds = parser.parse_args().rounds
    world = fleet()
    informer = Informer(world.cache)
    console = Informer(world.cache, "default")  # the console's: one namespace

    def from_lists() -> Snapshot:
        cache = world.cache
        return Snapshot(nodes=cache.list(NODE), certifications=cache.list(CERTIFICATION), workflows=cache.list(WORKFLOW),
                        jobs=cache.list(JOB), runs=cache.list(WORKLOADRUN))

    lists = per_refresh_ms(world, rounds, from_lists)
    cached = per_refresh_ms(world, rounds, informer.snapshot)
    one = per_refresh_ms(world, rounds, console.snapshot)
    print(f"{CATEGORIES * JOBS_PER_CATEGORY} Jobs in each of 2 namespaces, one changed per refresh: list join {lists:.2f} ms, "
          f"cache join {cached:.2f} ms, ratio {lists / cached:.1f}x; one namespace (the console's) {one:.2f} ms, "
          f"{one / cached:.2f}x the cache join")


if __name__ == "__main__":
    main()
