"""How much a failure beside a partner says about a node: the fleet's share of bad nodes, and a partner's chance to fail.

A conviction weighs a node's tests with a small model: every node is healthy, faulty (fails every test) or flaky
(fails each test with chance FLAKE). A failure beside partners that passed tests is strong evidence only when those
partners are unlikely to be flaky, and how likely that is depends on how many bad nodes the fleet has. The share is
estimated from the tests that sample the fleet without bias, conservatively (the low end of a confidence interval on
their pass share), so a small fleet, whose few screening groups say little, is assumed to hold many flaky nodes.
Neither share is taken below one node of the fleet: a failure is being weighed, so some node is bad, and were the
suspect healthy, some partner of it would be flaky.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from nvcre_tui.engine.diagnose.state import Probe

FLAKE = 0.5  # a flaky node's chance to fail a test, as the model has it
CONFIDENCE_Z = 1.28  # the pass share's confidence interval, one-sided 90 %


def least_share(nodes: int) -> float:
    """The least share of bad (or flaky) nodes assumed, whatever the tests say: one node of the `nodes` tested (at most
    a half, the most any share is taken to be)."""
    return 1 / max(nodes, 2)


def bad_share(tests: Sequence[Probe], by_node: Mapping[str, Sequence[int]], point: bool = False) -> float:
    """The share of bad nodes the model assumes: from screening groups, and from the parts of each split beyond the
    one failure the split's own failed group forces. A node fails such a test with chance f = 1 - low ** (1 / mean
    size), `low` the lower end of the pass share's Wilson interval; flaky nodes fail half their tests, so the share
    is 2f, at least one node of those tested (least_share) and at most one half. `point`: the pass share itself
    instead of its lower end, the share the samples show (for planning which tests are likely to pass, not for
    weighing evidence)."""
    samples: list[tuple[int, bool]] = [(len(t.nodes), bool(t.passed)) for t in tests if t.stage == "screening"]
    families: dict[int, list[int]] = defaultdict(list)
    for j, test in enumerate(tests):
        if test.stage == "split":
            earlier = [i for i in by_node[test.nodes[0]] if i < j]
            families[earlier[-1] if earlier else -1].append(j)
    for parts in families.values():
        failed = sum(1 for j in parts if not tests[j].passed)
        size = round(sum(len(tests[j].nodes) for j in parts) / len(parts))
        samples += [(size, True)] * (len(parts) - failed) + [(size, False)] * max(0, failed - 1)
    if not samples:
        return 0.5
    passed = sum(ok for _, ok in samples)
    low = passed / len(samples) if point else interval(passed, len(samples))[0]
    mean = sum(size for size, _ in samples) / len(samples)
    return max(least_share(len(by_node)), min(0.5, 2 * (1 - low ** (1 / mean))))


def flaky_share(bad: float, mixed: int, stubborn: int, nodes: int) -> float:
    """The share of flaky nodes among the bad ones' `bad` share: the high end of the confidence interval of the part
    of bad-looking nodes that also passed (`mixed`: a pass and a failure of their own) against those that failed
    twice and never passed (`stubborn`: a persistent fault never passes). At least one of the `nodes` tested."""
    _, high = interval(mixed, mixed + stubborn)
    return max(least_share(nodes), bad * high)


def interval(hits: int, n: int) -> tuple[float, float]:
    """Wilson's confidence interval (one-sided CONFIDENCE_Z each way) for a share of `hits` in `n`; (0, 1) when n = 0."""
    if n == 0:
        return 0.0, 1.0
    z, share = CONFIDENCE_Z, hits / n
    centre, spread = share + z * z / (2 * n), z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n)), min(1.0, (centre + spread) / (1 + z * z / n))


def partner_fails(passes: int, share: float) -> float:
    """The chance that a partner with this many passes (and no failure of its own on record) fails a test on its own
    account: it is flaky (the prior `share`, halved by each pass) and flakes."""
    kept = share * (1 - FLAKE) ** passes
    return FLAKE * kept / (kept + 1 - share)


def weigh(failed: bool, faulty: bool, clear: float) -> float:
    """The likelihood ratio (bad : healthy) of one test of a node whose other members all pass with chance `clear`;
    `faulty`: the node never passed (a faulty node fails every test), else it is weighed as flaky."""
    if not failed:
        return 1 - FLAKE
    return (1.0 if faulty else 1 - (1 - FLAKE) * clear) / max(1 - clear, 1e-12)
