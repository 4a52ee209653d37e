"""A diagnosis stores its verdicts in its Workflow, one object of at most 1.5 MiB, and the size estimate cannot know
how many nodes it will convict: verdicts that would not fit are stored shortened (evidence first, then messages),
the Workflow says so, and the failed-nodes ConfigMap keeps every message whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.resources import Workflow
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers import workflow as workflow_controller
from nvcre_tui.engine.judging.results import MESSAGE_CUT, read_failed_nodes, within_room
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import OBJECT_HEADROOM
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, CONFIGMAP, WORKFLOW

Obj = dict[str, Any]
CASE = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-flaky-and-fabric"  # diagnose, busBandwidthGBps >= 300
SCENARIO = {"name": "two-slow-gpus", "seed": 3, "nodes": [{"count": 16, "cliques": 2}],
            "faults": [{"type": "slow-gpu", "node": node, "gpu": 4, "factor": 0.5} for node in ("gpu-node-03", "gpu-node-12")]}
MISSED = [{"metric": "busBandwidthGBps", "measured": 120.0, "expression": "value >= 300", "passed": False}]


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def failed_message(wf: Obj) -> str:
    found = cond.find(wf["status"]["conditions"], "Failed")
    assert found is not None and found.get("status") == "True"
    return str(found.get("message"))


def entry(name: str, message: str = "diagnose: faulty, failed 3 of 3 tests") -> Obj:
    return {"name": name, "reason": "ThresholdViolation", "message": message, "evidence": MISSED}


def test_entries_that_fit_are_stored_as_they_are() -> None:
    entries = [entry("a"), entry("b")]
    assert within_room(entries, size(entries)) is entries


def test_evidence_goes_first_then_long_messages_then_everything_but_names_and_reasons() -> None:
    entries = [entry("a", "x" * 400), entry("b")]
    bare = [{key: value for key, value in e.items() if key != "evidence"} for e in entries]
    assert within_room(entries, size(bare)) == bare
    cut = within_room(entries, size(bare) - 1)
    assert [len(e["message"]) for e in cut] == [MESSAGE_CUT, len(entries[1]["message"])] and cut[0]["message"].endswith("…")
    bare = [{"name": name, "reason": "ThresholdViolation", "message": ""} for name in ("a", "b")]  # as the API server defaults it
    assert within_room(entries, size(bare)) == bare


def test_when_not_even_names_and_reasons_fit_the_first_that_do_are_kept() -> None:
    entries = [entry("a"), entry("b"), entry("c")]
    two = [{"name": name, "reason": "ThresholdViolation", "message": ""} for name in ("a", "b")]
    assert within_room(entries, size(two)) == two
    assert within_room(entries, 1) == []


async def diagnose(limit: int | None = None) -> tuple[Obj, list[Obj]]:
    """The finished diagnosing Workflow and its failed-nodes ConfigMap's entries, under an object limit of `limit`."""
    session = await SimSession.open(Scenario.model_validate(SCENARIO), None, history=None)
    assert session.engine is not None
    cert = certification_from_text("cert.yaml", (CASE / "cert.yaml").read_text(), default_catalog()).to_wire()
    cert["metadata"]["namespace"] = "default"
    cert.pop("status", None)
    try:
        with pytest.MonkeyPatch.context() as patch:
            if limit is not None:  # the API server's limit, shrunk to this small fleet's size
                patch.setattr(workflow_controller, "OBJECT_LIMIT", limit)
            await session.store.create(CERTIFICATION, cert)
            await session.engine.run_until_settled(max_seconds=12 * 3600)
        [wf] = (await session.store.list(WORKFLOW, "default")).items
        configmap = await session.store.get(CONFIGMAP, wf["status"]["failedNodesRef"]["name"], "default")
        return wf, read_failed_nodes(configmap)
    finally:
        await session.close()


async def test_verdicts_that_would_pass_the_object_limit_are_stored_shortened_and_said_so() -> None:
    whole, listed = await diagnose()
    verdicts = whole["status"]["failedNodes"]
    assert [v["name"] for v in verdicts] == ["gpu-node-03", "gpu-node-12"] and all(v.get("evidence") for v in verdicts)
    assert "shortened" not in failed_message(whole)
    bare = [{key: value for key, value in v.items() if key != "evidence"} for v in verdicts]
    # room for the verdicts without their evidence, not with it
    limit = size(whole) - size(verdicts) + OBJECT_HEADROOM + (size(bare) + size(verdicts)) // 2
    shortened, listed_again = await diagnose(limit)
    assert shortened["status"]["failedNodes"] == bare and size(shortened) <= limit - OBJECT_HEADROOM
    assert "its 2 verdicts are stored shortened to fit the 1.5 MiB object" in failed_message(shortened)
    assert listed_again == listed and [e["message"] for e in listed] == [v["message"] for v in verdicts]
    Workflow.model_validate(shortened)
