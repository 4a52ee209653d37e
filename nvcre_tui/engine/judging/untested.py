"""Which failed groups tested no node: their Job went before it finished, or failed blaming nobody for a reason that
is not the nodes' (a cluster service down, nothing measured, a workload that never started, its Certification or
Workflow refused while it ran: STOPPED_FOR_REFUSAL). Diagnose takes such a
group as no test at all and stops on it; the map marks its members untested, never suspect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcre_tui.engine.api.vocabulary import FAILED, GROUP_NODES_EDITED, NEVER_RAN, NODE_BUSY, STOPPED_FOR_REFUSAL, WORKLOAD_NOT_STARTED
from nvcre_tui.engine.judging.measure import UNMEASURED_REASONS
from nvcre_tui.engine.judging.thresholds import INVALID_EXPRESSION, MEASUREMENT_UNAVAILABLE

__all__ = ["JOB_DELETED", "JOB_DISOWNED", "SERVICE_UNAVAILABLE", "UNBLAMED_REASONS", "WORKFLOW_DISOWNED", "tested_nothing"]

SERVICE_UNAVAILABLE = "ServiceUnavailable"  # the Job's reason when the output blames a cluster service, not a node
JOB_DELETED = "JobDeleted"  # a group's reason when its Job was deleted before it finished (the Workflow records it)
# A group's reason when its Job stands but no longer names the Workflow as its controller (ownerReferences edited by hand)
JOB_DISOWNED = "JobDisowned"
# A category's reason when its Workflow stands but no longer names the Certification as its controller (the same edit)
WORKFLOW_DISOWNED = "WorkflowDisowned"
#: The Job reasons of a failure that blames no node.
UNBLAMED_REASONS = frozenset({SERVICE_UNAVAILABLE, WORKLOAD_NOT_STARTED, NODE_BUSY, INVALID_EXPRESSION, MEASUREMENT_UNAVAILABLE, *NEVER_RAN, GROUP_NODES_EDITED,
                              *UNMEASURED_REASONS, *STOPPED_FOR_REFUSAL})


def tested_nothing(group: Mapping[str, Any]) -> bool:
    """Whether a group (a Workflow's group status or record) failed without testing any of its nodes."""
    return group.get("phase") == FAILED and (group.get("reason") in UNBLAMED_REASONS or group.get("reason") in (JOB_DELETED, JOB_DISOWNED))
