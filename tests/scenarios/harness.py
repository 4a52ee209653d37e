"""Scenario golden cases: a simulated fleet (scenario.yaml) and a Certification (cert.yaml) run through the
real engine, and the report reduced to a stable digest that is compared with expected.json.

Wiring is the simulator session's (MemoryStore + ManualClock + SimulatedFleet + SimulatedRunner + Engine),
without a state file. A run is pure data afterwards (`CaseRun`), memoised per case so the golden test and
the claim tests share one run. `NVCRE_UPDATE_GOLDEN=1` rewrites expected.json from the current engine.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import load_certification
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, EVENT, JOB, WORKFLOW, WORKLOADRUN, ResourceStore
from tests.scenarios.untouched import Untouched

Obj = dict[str, Any]
CASES = Path(__file__).resolve().parents[1] / "cases" / "scenarios"
UPDATE = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"
NAMESPACE = "default"
# Simulated time a case may take before it counts as stuck (the slowest case, dcgm with a repeat, needs hours).
RUN_LIMIT_SECONDS = 3 * 24 * 3600.0
# Decimals kept per metric in the digest (bandwidth and TFLOP/s to 0.1; ratios and seconds to 0.01).
DECIMALS = {"goodputRatio": 2, "avgStepTimeSec": 2}
_NUMBER = re.compile(r"\d+\.\d{2,}")


@dataclass(frozen=True)
class CaseRun:
    """A finished case as plain data: the report and every object the engine left in the store."""

    name: str
    report: Obj
    finished: bool
    objects: dict[str, list[Obj]] = field(default_factory=dict)  # kind -> objects, by name
    edited_in_cache: list[str] = field(default_factory=list)  # objects changed in the watch cache without a write

    def workflow(self, variant: str, index: int = 0) -> Obj:
        """The Workflow of the `index`-th category with this variant."""
        return [wf for wf in self.objects["Workflow"] if wf["metadata"]["labels"].get("nvcre.nvidia.com/category-variant") == variant][index]

    def category(self, variant: str, index: int = 0) -> Obj:
        """The report section of the `index`-th category with this variant."""
        return [c for c in self.report["categories"] if c["variant"] == variant][index]


@cache
def catalog() -> Catalog:
    """The shipped catalog, loaded once."""
    return default_catalog()


def case_names() -> list[str]:
    """Every case folder, sorted."""
    return sorted(p.name for p in CASES.iterdir() if (p / "scenario.yaml").exists())


async def start_certification(store: ResourceStore, cert_path: Path) -> str:
    """Load, validate and create the Certification as `nvcre certification run` does; returns its name."""
    cert = load_certification(str(cert_path), catalog()).to_wire()
    cert["metadata"]["namespace"] = NAMESPACE
    cert.pop("status", None)
    await store.create(CERTIFICATION, cert)
    return str(cert["metadata"]["name"])


async def certify_to_end(session: SimSession, cert_path: Path, max_seconds: float = RUN_LIMIT_SECONDS) -> tuple[str, bool]:
    """Start the certification of `cert_path` and run the session's engine until it ends (or `max_seconds` of
    simulated time pass): its name, and whether it ended."""
    name = await start_certification(session.store, cert_path)

    async def terminal() -> bool:
        return cond.is_terminal(await session.store.get(CERTIFICATION, name, NAMESPACE))

    assert session.engine is not None  # opened with want_engine (the default): this process runs the engine
    return name, await session.engine.run_until_settled(until=terminal, max_seconds=max_seconds)


async def snapshot(store: ResourceStore) -> dict[str, list[Obj]]:
    """Every object of the kinds a report and the claims read."""
    kinds = (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN, CONFIGMAP, EVENT)
    return {kind.kind: (await store.list(kind, NAMESPACE)).items for kind in kinds}


def report_from(objects: dict[str, list[Obj]], name: str) -> Obj:
    """The report as `nvcre certification report` builds it (workflows by label, jobs by workflow label)."""
    cert = next(c for c in objects["Certification"] if c["metadata"]["name"] == name)
    workflows = [wf for wf in objects["Workflow"] if wf["metadata"]["labels"].get("nvcre.nvidia.com/certification") == name]
    names = {wf["metadata"]["name"] for wf in workflows}
    jobs = [job for job in objects["Job"] if (job["metadata"].get("labels") or {}).get("nvcre.nvidia.com/workflow") in names]
    return build_report(cert, workflows, jobs)


async def _run(case: str) -> CaseRun:
    folder = CASES / case
    session = await SimSession.open(load_scenario(folder / "scenario.yaml"), None, catalog())
    guard = Untouched(session.cache)
    name, finished = await certify_to_end(session, folder / "cert.yaml")
    objects = await snapshot(session.store)
    return CaseRun(case, report_from(objects, name), finished, objects, guard.check_all())


@cache
def run_case(case: str) -> CaseRun:
    """Run one case to the end (memoised: pure data, shared by every test of the session)."""
    return asyncio.run(_run(case))


# --------------------------------------------------------------------------- digest


def rounded(metric: str | None, value: float | None) -> float | None:
    """A measurement at the digest's precision."""
    return None if value is None else round(float(value), DECIMALS.get(metric or "", 1))


def stable_text(text: str | None) -> str | None:
    """A message with long decimals cut to one (the digest pins meaning, not the fifth digit)."""
    return None if text is None else _NUMBER.sub(lambda m: f"{float(m.group()):.1f}", text)


def _failed_node(entry: Obj) -> Obj:
    row: Obj = {"name": entry["name"], "reason": entry["reason"], "message": stable_text(entry.get("message"))}
    if entry.get("suspect"):  # blamed only with its whole group (the map's `suspect`): pinned where it happens
        row["suspect"] = True
    if entry.get("evidence"):
        row["evidence"] = [{"metric": e["metric"], "measured": rounded(e["metric"], e.get("measured")), "reason": e.get("reason")}
                           for e in entry["evidence"]]
    return row


def category_digest(category: Obj) -> Obj:
    """One category: verdict, grouping, iterations, who failed with what evidence, who was excluded."""
    row: Obj = {"category": f"{category['domain']}/{category['variant']}", "status": category["status"]}
    if category.get("failureReason"):
        row["failureReason"] = stable_text(category["failureReason"])
    if "testScale" not in category:  # no Workflow was ever created
        return row
    row.update(testScale=category["testScale"], nodesPerJob=category["nodesPerJob"], jobs=category["jobs"])
    row["iterations"] = [f"{i['number']}:{i['status']}" for i in category["iterations"]]
    row["groups"] = [
        {"group": g["groupName"], "nodes": g["nodes"], "busBW": rounded("busBandwidthGBps", g["busBW"]), "failed": g["failed"]}
        for g in category["groupBandwidth"]
    ]
    row["failedGroups"] = [{"group": g["name"], "reason": g["reason"], "nodes": g["nodes"]} for g in category["failedGroups"]]
    row["failedNodes"] = [_failed_node(f) for f in category["failedNodes"]]
    row["excludedNodes"] = [{"name": e["name"], "reason": e["reason"]} for e in category["excludedNodes"]]
    if category.get("cliques"):
        row["cliques"] = [{"clique": c["name"], "nodes": c["total"], "passed": c["passed"]} for c in category["cliques"]]
    if category.get("training"):
        row["training"] = {k: rounded(k, v) for k, v in sorted(category["training"].items())}
    if category.get("diagnose"):
        state = category["diagnose"]
        row["diagnose"] = {key: state.get(key) for key in ("stage", "round", "faultyNodes", "healthyNodes", "inconclusiveNodes")}
        row["diagnose"]["tests"] = [f"{t['stage']}:{t['group']}:{'+'.join(t['nodes'])}:{'untested' if t['passed'] is None else 'pass' if t['passed'] else 'fail'}" for t in state["tests"]]
    return row


def digest(report: Obj) -> Obj:
    """The report without timestamps or run-to-run noise: what a golden pins."""
    return {
        "result": report["result"],
        "passedCategories": f"{report['passedCategories']}/{report['totalCategories']}",
        "failedNodes": report["failedNodes"],
        **({"suspectNodes": report["suspectNodes"]} if report.get("suspectNodes") else {}),
        **({"inconclusiveNodes": report["inconclusiveNodes"]} if report.get("inconclusiveNodes") else {}),
        "excludedNodes": [{"name": e["name"], "reason": e["reason"]} for e in report["excludedNodes"]],
        "categories": [category_digest(c) for c in report["categories"]],
    }


def check_golden(case: str, actual: Obj) -> None:
    """Compare with expected.json (or write it under NVCRE_UPDATE_GOLDEN=1)."""
    target = CASES / case / "expected.json"
    text = json.dumps(actual, indent=2, sort_keys=False) + "\n"
    if UPDATE:
        target.write_text(text, encoding="utf-8")
        return
    assert target.exists(), f"{target}: missing; run with NVCRE_UPDATE_GOLDEN=1 and review it"
    expected = json.loads(target.read_text(encoding="utf-8"))
    if actual != expected:
        diff = difflib.unified_diff(json.dumps(expected, indent=2).splitlines(), text.splitlines(), "expected.json", "actual", lineterm="")
        raise AssertionError(f"{case}: the report's digest differs from expected.json (NVCRE_UPDATE_GOLDEN=1 rewrites it)\n" + "\n".join(diff))
