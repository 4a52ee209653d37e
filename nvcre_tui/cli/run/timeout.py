"""How long `run --wait` follows a certification when --timeout is not given: from its categories' budgets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.units import MAX_DURATION_SECONDS, parse_duration


DIAGNOSE_ROUNDS = 8  # the rounds --timeout's default allows a diagnosis (a bound to wait for, not a limit on it)


def default_timeout(rendered: list[Any], unplanned: Sequence[CategoryOptions] = ()) -> float:
    """Sum of each category's budget × iterations × rounds of groups, × 1.5, at least 30 minutes. A diagnosis (testScale
    diagnose, or onFailure after the iterations) counts as DIAGNOSE_ROUNDS rounds. A category not planned here (Nodes
    unread: its options as known without them) counts one round of groups: the least its nodes may take."""
    budgets = []  # (timeoutPerJob, iterations, a diagnose run, onFailure: diagnose, rounds of groups)
    for item in rendered:
        orch = item.workflow.spec.orchestration
        groups = max(1, len(item.groups))
        concurrent = orch.execution.max_concurrent or groups
        budgets.append((orch.execution.timeout_per_job, orch.iterations, orch.diagnose is not None,
                        orch.on_failure is not None and orch.on_failure.diagnose is not None, -(-groups // concurrent)))
    budgets += [(options.timeout_per_job, options.repeat_count or 1, options.test_scale == "diagnose", options.on_failure == "diagnose", 1)
                for options in unplanned]
    total = 0.0
    for timeout_per_job, iterations, diagnosing, on_failure, waves in budgets:
        rounds = iterations * (DIAGNOSE_ROUNDS if diagnosing else 1) + (DIAGNOSE_ROUNDS if on_failure else 0)
        total += parse_duration(timeout_per_job or "1h") * rounds * max(waves, 1)
    return min(max(total * 1.5, 1800.0), 100 * MAX_DURATION_SECONDS)  # the cap keeps the clock a date
