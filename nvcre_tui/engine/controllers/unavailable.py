"""A diagnosis's nodes cordoned after it was planned. The node health check (by default `node.spec.unschedulable ==
true`) flags a node cordoned between rounds at its next Job's first look, before that Job's workload started: the Job
fails HardwareFailureDetected, which convicts a node only when its test ran on it (diagnose: Probe.hardware). So a
group whose Job was flagged before its workload started (no workloadStartTime: controllers/job.py writes the run's
start beside the flag) on cordoned members only is recorded untested (CORDONED_BEFORE_START: no evidence for or against
any member, its partners not held to it), and its cordoned members are excluded Cordoned, named, never blamed, and in
no later round; so is a node cordoned when a round is planned. A flag during a running test keeps its rule."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.bodies import job_status
from nvcre_tui.engine.api.nodes import is_cordoned
from nvcre_tui.engine.api.vocabulary import CORDONED_BEFORE_START, FAILED, HARDWARE_FAILURE_DETECTED
from nvcre_tui.engine.controllers.context import World
from nvcre_tui.engine.controllers.iterations import blamed_members
from nvcre_tui.engine.planning.discovery import excluded_text
from nvcre_tui.engine.units import listed

Obj = dict[str, Any]
CORDONED = "Cordoned"  # the exclusion reason (planning/discovery.py's EXCLUSION_TEXT says it in words)


def cordoned_before_start(orch: Obj, jobs: Mapping[str, Obj], world: World) -> set[str]:
    """Each group of the round just finished whose Job the health check failed before its workload started, every
    member it flagged cordoned, recorded untested (its reason CORDONED_BEFORE_START, nobody blamed) and those members
    excluded Cordoned in `orch`; the names of those groups."""
    untested: set[str] = set()
    for group in orch["groups"]:
        job = jobs.get(str(group.get("jobRef") or ""))
        if group.get("phase") != FAILED or group.get("reason") != HARDWARE_FAILURE_DETECTED or job is None or job_status(job).get("workloadStartTime"):
            continue
        flagged = blamed_members(group, group["nodes"])
        if not flagged or not all((node := world.node(name)) is not None and is_cordoned(node) for name in flagged):
            continue
        for key in ("blamedFor", "blamedMembers"):
            group.pop(key, None)
        group.update(reason=CORDONED_BEFORE_START, message=f"{listed(flagged)} cordoned before its workload started: the group ran "
                                                           "nothing, its nodes untested, no node blamed")
        exclude(orch, flagged, f"before its test {group['name']} started")
        untested.add(str(group["name"]))
    return untested


def cordoned_now(nodes: Collection[str], world: World) -> list[str]:
    """Of `nodes`, those whose Node (the engine's cache) is cordoned now."""
    return sorted(name for name in nodes if (node := world.node(name)) is not None and is_cordoned(node))


def excluded_cordoned(orch: Mapping[str, Any]) -> set[str]:
    """The nodes `orch` excluded Cordoned: in no test of a later round."""
    return {str(item["name"]) for item in orch.get("excludedNodes") or [] if item.get("reason") == CORDONED}


def exclude(orch: Obj, nodes: Sequence[str], when: str) -> None:
    """`nodes` excluded Cordoned in `orch` (its excludedNodes and exclusionReason), each saying `when`."""
    excluded = {str(item["name"]): item for item in orch.get("excludedNodes") or []}
    new = [name for name in nodes if name not in excluded]
    if not new:
        return
    excluded.update({name: {"name": name, "reason": CORDONED, "message": f"cordoned (spec.unschedulable) {when}"} for name in new})
    orch["excludedNodes"] = [excluded[name] for name in sorted(excluded)]
    orch["exclusionReason"] = "; ".join(filter(None, [orch.get("exclusionReason"), f"{excluded_text(len(new), CORDONED)} after planning"]))
