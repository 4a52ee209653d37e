"""Members other pods took after their group was planned (a shared cluster: another team's training bound to a node
once the Workflow had partitioned): the group's pods waited Pending out the scheduling grace (bounded and said on the
way: the run's WorkloadPending message names the node and the pods holding it) and its Job failed WorkloadNotStarted,
blaming nobody. Read again then, by discovery's one rule (fit.held_by_others, as `leave_out_busy` at the start): each
member still held is excluded NodeBusy, named with its holders, and the group is recorded untested for it (NODE_BUSY, a
NOT_RUN reason): never blamed, its other members untested, and the Workflow, where nothing else failed, not failed for
it (the certification INCOMPLETE; every group so: NodesUnavailable, FAILED: nothing measured). A group is a planned unit (one node, a clique,
nodesPerJob of the fleet): it is not re-formed without the busy member, whose room may come back any minute; a next
iteration plans it whole again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.fit import held_by_others, pod_requests
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import NODE_BUSY
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.planning.discovery import excluded_text
from nvcre_tui.engine.units import listed

Obj = dict[str, Any]


def asked_of(wf: Mapping[str, Any]) -> dict[str, str]:
    """What a pod of the Workflow's runs asks (fit.pod_requests of its rendered run: cpu and memory fitted to the
    nodes); {} where its run spec no longer reads (validated when made; a later edit only loses the busy check)."""
    try:
        return pod_requests(WorkloadRunSpec.model_validate(wf["spec"]["jobTemplate"]["spec"]["workload"]["workloadRun"]))
    except (ValidationError, KeyError, TypeError):
        return {}


async def busy_members(ctx: Context, wf: Obj, members: Sequence[str], world: World) -> dict[str, str]:
    """member -> what the pods not nvcre's bound to it hold of the room a pod asks (`8 of 8 nvidia.com/gpu requested by
    team-a/trainer-0, 8 needed`), for the members held so now; {} where the runner cannot tell (the simulated fleet)."""
    asked = asked_of(wf)
    occupants = await ctx.node_occupants(wf, list(members)) if asked else {}
    found = {}
    for name in members:
        node = world.node(name)
        if node is not None and (held := held_by_others(node, asked, occupants.get(name, ()))):
            found[name] = "; ".join(held)
    return found


def record_busy(orch: Obj, group: Obj, busy: Mapping[str, str]) -> None:
    """`group` (failed, its pods never placed) recorded untested for its `busy` members, and those excluded NodeBusy
    in `orch` (its excludedNodes and exclusionReason), each named with its holders."""
    said = listed([f"{name}: {why}" for name, why in busy.items()], 3)
    group.update(reason=NODE_BUSY, message=f"taken by other pods after the group was planned ({said}): its pods were never "
                                           "placed, the group ran nothing, its nodes untested, no node blamed")
    excluded = {str(item["name"]): item for item in orch.get("excludedNodes") or []}
    excluded.update({name: {"name": name, "reason": NODE_BUSY, "message": f"{why} (after its group was planned)"} for name, why in busy.items()})
    orch["excludedNodes"] = [excluded[name] for name in sorted(excluded)]
    orch["exclusionReason"] = "; ".join(filter(None, [orch.get("exclusionReason"), f"{excluded_text(len(busy), NODE_BUSY)} after planning"]))
