"""The console's certification read model per refresh, on one certification of 4 categories with 1,024 Jobs each, while
one Job changes per refresh. First the console's informer as it is (each kind and each Workflow's Jobs kept from the
cache's changes: store/cacheview.py, views.join.CachedJoin) against as it was (`WholeKinds`: a kind that changed
sorted, kept to the namespace and split whole, a changed Workflow's Jobs sorted and filtered again), by turns on the
same changes. Then joined from the snapshot's lists (every refresh redoes the whole join) against the informer's join
over the watch cache (a view is rebuilt only when one of its own objects changed).
A namesake certification of the same size in a second namespace is there too; the console's informer shows one
namespace (its -n) and keeps each kind to it as its objects change: printed against the all-namespace informer.

Then the node states the map and the dashboard draw from it (every certification of the namespace; a Node per group),
when a batch of Jobs starts: a Workflow gets a group more and its Job, so its category's Jobs change and the incremental
model (report/nodestates.py) lays its sources out again. Timed: that update, as the model is (it takes the marks of
every object that is the same one, and works a changed Workflow's out once) against as it was (`EveryMarkAgain`: every
Workflow's marks twice, before and after its Jobs, and every Job's, again), each fed the same snapshots.

Run: `python bench/readmodel.py [--rounds N] [--jobs N]` (--jobs: per category, 1,024 by default; 2,500 for 10,000). Prints the median milliseconds per refresh of each and the ratios,
measured in this process. Not run by pytest (tests/test_benches.py runs it with 2 rounds).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.damage import DamageChecks
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.iterations import job_refs, jobs_run
from nvcre_tui.engine.engine import ENGINE_KINDS, engine_cache
from nvcre_tui.engine.informer import Informer
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.readmodel import CertificationView, join_view, namespace_of
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.views.snapshot import SNAPSHOT_KINDS, Snapshot

Obj = dict[str, Any]
CATEGORIES, JOBS_PER_CATEGORY = 4, 1024
BURN_IN = Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml"


class Fleet:
    """A watch cache fed by hand, as the engine's write-through feeds it."""

    def __init__(self) -> None:
        self.cache = engine_cache(MemoryStore(ManualClock(SIM_START)))
        assert set(self.cache.kinds) == set(ENGINE_KINDS)
        self.rv = 0

    def put(self, kind: Any, name: str, labels: dict[str, str], namespace: str = "default", **body: Any) -> None:
        """Owned as the engine makes them (the read model joins by owner): a Workflow by its Certification, a Job by its
        Workflow, named by the label the engine also sets (which the old informer joined by)."""
        self.rv += 1
        owner = {WORKFLOW: CERTIFICATION, JOB: WORKFLOW}.get(kind)
        refs = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": owner.kind, "name": parent, "uid": f"{owner.kind}:{namespace}/{parent}",
                 "controller": True} for parent in labels.values()] if owner is not None else []
        self.cache.observe(kind, {"metadata": {"name": name, "namespace": namespace, "labels": labels, "resourceVersion": str(self.rv),
                                               "uid": f"{kind.kind}:{namespace}/{name}", "ownerReferences": refs}, **body})


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


class WholeKinds:
    """The console's informer as it was: a kind that changed was sorted, kept to the namespace and split (the damage
    checks remembered per object) whole at the next refresh, and a Workflow one of whose Jobs changed had its Jobs
    sorted, kept to its namespace, checked and filtered by the names its groups ran again, from the cache's label index."""

    def __init__(self, cache: WatchCache, namespace: str) -> None:
        self.cache, self.namespace = cache, namespace
        self.damage = DamageChecks()
        self.lists: dict[Any, tuple[int, list[Obj], list[Any]]] = {}
        self.jobs: dict[tuple[str, str], tuple[tuple[object, ...], frozenset[str], list[Obj]]] = {}
        self.views: dict[tuple[str, str], tuple[tuple[object, ...], CertificationView]] = {}

    def snapshot(self) -> Snapshot:
        lists = {kind: self._list(kind) for kind in SNAPSHOT_KINDS}
        nodes, certifications, workflows, jobs, runs = (list(lists[kind][0]) for kind in SNAPSHOT_KINDS)
        return Snapshot(nodes, certifications, workflows, jobs, runs, join=self,
                        damaged=tuple(found for kind in SNAPSHOT_KINDS for found in lists[kind][1]))

    def _list(self, kind: Any) -> tuple[list[Obj], list[Any]]:
        kept = self.lists.get(kind)
        if kept is None or kept[0] != self.cache.kind_versions[kind]:
            everything = self.cache.list(kind)
            if kind.namespaced:
                everything = [obj for obj in everything if obj["metadata"].get("namespace") == self.namespace]
            kept = self.lists[kind] = (self.cache.kind_versions[kind], *self.damage.split(kind.kind, everything))
        return kept[1], kept[2]

    def _shown(self, kind: Any, obj: Obj) -> bool:
        return self.damage.problem(kind.kind, obj) is None

    def workflows_of(self, cert: Obj) -> list[Obj]:
        namespace = namespace_of(cert)
        return [wf for wf in self.cache.labelled(WORKFLOW, LABEL_CERTIFICATION, str(cert["metadata"]["name"]))
                if namespace_of(wf) == namespace and self._shown(WORKFLOW, wf)]

    def jobs_of(self, workflow: Obj) -> list[Obj]:
        name, namespace = str(workflow["metadata"]["name"]), namespace_of(workflow)
        workflow_key = (id(workflow), workflow["metadata"].get("resourceVersion"))
        found = self.jobs.get((namespace, name))
        refs = found[1] if found is not None and found[0][:2] == workflow_key else job_refs(workflow)
        key = (*workflow_key, self.cache.label_version(JOB, LABEL_WORKFLOW, name))
        if found is None or found[0] != key:
            labelled = [job for job in self.cache.labelled(JOB, LABEL_WORKFLOW, name) if namespace_of(job) == namespace and self._shown(JOB, job)]
            found = self.jobs[(namespace, name)] = (key, refs, jobs_run(workflow, labelled, refs))
        return found[2]

    def view(self, cert: Obj) -> CertificationView:
        name = str(cert["metadata"]["name"])
        versions = [self.cache.label_version(WORKFLOW, LABEL_CERTIFICATION, name)]
        versions += [self.cache.label_version(JOB, LABEL_WORKFLOW, wf["metadata"]["name"]) for wf in self.workflows_of(cert)]
        key = (id(cert), cert["metadata"].get("resourceVersion"), *versions)
        found = self.views.get((namespace_of(cert), name))
        if found is None or found[0] != key:
            found = self.views[(namespace_of(cert), name)] = (key, join_view(self, cert))
        return found[1]


def per_refresh_both_ms(world: Fleet, rounds: int, ways: dict[str, Any]) -> dict[str, float]:
    """per_refresh_ms of each way on the same changes: one Job changed, then each way's refresh, the first by turns."""
    timings: dict[str, list[float]] = {way: [] for way in ways}
    for i in range(rounds):
        workflow = f"bench-cat-{i % CATEGORIES}"
        job = f"{workflow}-job-{i % JOBS_PER_CATEGORY:04d}"
        spec = (world.cache.get(JOB, job, "default") or {}).get("spec")
        world.put(JOB, job, {LABEL_WORKFLOW: workflow}, spec=spec, status=job_status("Succeeded" if i % 2 else "InProgress"))
        order = list(ways) if i % 2 else list(reversed(ways))
        for way in order:
            start = time.perf_counter()
            views = ways[way]().views
            assert sum(len(c.jobs) for v in views.values() for c in v.categories) == CATEGORIES * JOBS_PER_CATEGORY
            timings[way].append((time.perf_counter() - start) * 1000)
    return {way: statistics.median(times) for way, times in timings.items()}


class EveryMarkAgain(nodestates.NodeStateModel):
    """The node-state model as it was: a layout change worked out every source's marks again, a Workflow's once for
    its marks before its Jobs and once more for after them."""

    def _kept(self) -> dict[tuple[object, ...], nodestates._Source]:
        return {}

    @staticmethod
    def _marks(categories: Any, index: int, role: str, obj: Any, diagnosing: str, workflows: Any = None) -> nodestates.Marks:
        return nodestates.NodeStateModel._marks(categories, index, role, obj, diagnosing, None)


def node_states_when_jobs_start_ms(world: Fleet, rounds: int) -> tuple[float, float]:
    """Median ms of the node states' update after a Workflow got a group and its Job, as the model is and as it was."""
    informer = Informer(world.cache, "default")
    for j in range(JOBS_PER_CATEGORY + rounds):  # a Node for every group, and for those the rounds add
        world.put(NODE, f"node-{j}", {}, "", spec={}, status={"conditions": [{"type": "Ready", "status": "True"}]})
    models = {"now": nodestates.NodeStateModel(), "before": EveryMarkAgain()}
    timings: dict[str, list[float]] = {way: [] for way in models}
    for i in range(rounds + 1):
        if i:  # a batch of Jobs starts: the Workflow's groups name one Job more
            workflow = f"bench-cat-{i % CATEGORIES}"
            cached = world.cache.get(WORKFLOW, workflow, "default") or {}
            groups = [*cached["status"]["orchestration"]["groups"],
                      {"name": f"group-x{i}", "nodes": [f"node-{JOBS_PER_CATEGORY + i}"], "phase": "Running", "jobRef": f"{workflow}-x{i}"}]
            world.put(WORKFLOW, workflow, {LABEL_CERTIFICATION: "bench"}, spec=cached["spec"], status={"orchestration": {"groups": groups}})
            spec = (world.cache.get(JOB, f"{workflow}-job-0000", "default") or {}).get("spec")
            world.put(JOB, f"{workflow}-x{i}", {LABEL_WORKFLOW: workflow}, spec=spec, status=job_status("InProgress"))
        snapshot = informer.snapshot()
        categories = [c for view in snapshot.views.values() for c in view.categories if c.workflow is not None]
        states = {}
        for way, model in models.items():
            start = time.perf_counter()
            states[way] = model.update(categories, snapshot.nodes)
            if i:  # the first fills both models: not a refresh
                timings[way].append((time.perf_counter() - start) * 1000)
        assert states["now"] == states["before"], "the two models disagree"
    return statistics.median(timings["now"]), statistics.median(timings["before"])


def main() -> None:
    global JOBS_PER_CATEGORY  # noqa: PLW0603 - the fleet's size, for the functions above
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=JOBS_PER_CATEGORY, help=f"Jobs (and groups) per category (default {JOBS_PER_CATEGORY})")
    args = parser.parse_args()
    JOBS_PER_CATEGORY, rounds = args.jobs, args.rounds
    world = fleet()
    informer = Informer(world.cache)
    console = Informer(world.cache, "default")  # the console's: one namespace

    def from_lists() -> Snapshot:
        cache = world.cache
        return Snapshot(nodes=cache.list(NODE), certifications=cache.list(CERTIFICATION), workflows=cache.list(WORKFLOW),
                        jobs=cache.list(JOB), runs=cache.list(WORKLOADRUN))

    old = WholeKinds(world.cache, "default")
    was = per_refresh_both_ms(world, rounds, {"before": old.snapshot, "now": console.snapshot})
    print(f"{CATEGORIES * JOBS_PER_CATEGORY} Jobs, one changed per refresh, the console's informer (one namespace): as it was "
          f"(each changed kind sorted and split whole, a changed Workflow's Jobs filtered again) {was['before']:.2f} ms, "
          f"now (kept from the cache's changes) {was['now']:.2f} ms, ratio {was['before'] / was['now']:.1f}x")
    lists = per_refresh_ms(world, rounds, from_lists)
    cached = per_refresh_ms(world, rounds, informer.snapshot)
    one = per_refresh_ms(world, rounds, console.snapshot)
    print(f"{CATEGORIES * JOBS_PER_CATEGORY} Jobs in each of 2 namespaces, one changed per refresh: list join {lists:.2f} ms, "
          f"cache join {cached:.2f} ms, ratio {lists / cached:.1f}x; one namespace (the console's) {one:.2f} ms, "
          f"{one / cached:.2f}x the cache join")
    now, before = node_states_when_jobs_start_ms(world, rounds)
    print(f"node states of {CATEGORIES * JOBS_PER_CATEGORY} Jobs when a batch of Jobs starts: as it was {before:.2f} ms, now {now:.2f} ms, "
          f"ratio {before / now:.1f}x")


if __name__ == "__main__":
    main()
