"""What each scenario case must end with, written by hand (never regenerated): the result, each category's
status and exactly which nodes it blames with which reason, and the excluded nodes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Expect:
    """Result, per category (in order) its status and blamed nodes {node: reason}, and excluded {node: reason}."""

    result: str
    categories: tuple[tuple[str, dict[str, str]], ...]
    excluded: dict[str, str] = field(default_factory=dict)


OK: tuple[str, dict[str, str]] = ("Succeeded", {})
TV, WF, TO, SB, HW = "ThresholdViolation", "WorkloadFailed", "Timeout", "SchedulingBlocked", "HardwareFailureDetected"
N = [f"gpu-node-{i:02d}" for i in range(1, 9)]
ALL4 = N[:4]

EXPECT: dict[str, Expect] = {
    "all-pass-full-scale": Expect("PASSED", (OK,)),
    "all-pass-every-category": Expect("PASSED", (OK,) * 5),
    "parallel-categories-disjoint-targets": Expect("PASSED", (OK, OK)),
    "slow-gpu-intra-node": Expect("FAILED", (("Failed", {N[2]: TV}),)),
    "slow-gpu-full-scale-blames-group": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "degraded-nic-only-at-full-scale": Expect("FAILED", (OK, ("Failed", dict.fromkeys(ALL4, TV)))),
    "xid-mid-run-full-scale": Expect("FAILED", (("Failed", {N[2]: WF}),)),
    "xid-before-run-intra-node": Expect("FAILED", (("Failed", {N[1]: WF}),)),
    "xid-after-run-passes": Expect("PASSED", (OK,)),
    "hang-full-scale-timeout": Expect("FAILED", (("Failed", {}),)),  # its one run timed out: the timeout convicts no node
    "hang-intra-node-timeout": Expect("FAILED", (("Failed", {N[3]: TO}),)),
    "dcgm-hang-stopped-by-dcgmi-timeout": Expect("FAILED", (("Failed", {N[1]: WF}),)),
    "hang-training-stalled": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, WF)),)),
    "unschedulable-full-scale": Expect("FAILED", (("Failed", {N[2]: SB}),)),
    "unschedulable-intra-node": Expect("FAILED", (("Failed", {N[0]: SB}),)),
    "cordoned-before-run": Expect("INCOMPLETE", (OK,), {N[3]: "Cordoned"}),
    "no-execute-taint-before-run": Expect("INCOMPLETE", (OK,), {N[3]: "NoExecuteTaint"}),
    "cordon-mid-run-full-scale": Expect("FAILED", (("Failed", {N[1]: HW}),)),
    "cordon-mid-run-intra-node": Expect("FAILED", (("Failed", {N[2]: HW}),)),
    "cordon-persists-into-next-iteration": Expect("FAILED", (("Failed", {N[1]: HW}),)),
    "cordon-during-first-category": Expect("FAILED", (("Failed", {N[1]: HW}), OK), {N[1]: "Cordoned"}),
    "node-leaves-target-between-categories": Expect("INCOMPLETE", (OK, OK), {N[3]: "LeftTarget"}),
    "inconclusive-then-leaves-target": Expect("FAILED", (("Failed", {}), OK), {N[1]: "LeftTarget"}),  # counted inconclusive
    "mixed-gpu-architectures": Expect("INCOMPLETE", (OK,), {"a100-node-01": "OtherGPUArchitecture", "a100-node-02": "OtherGPUArchitecture"}),
    "node-short-of-gpus": Expect("INCOMPLETE", (OK,), {N[4]: "InsufficientGPUs"}),
    "node-short-of-memory": Expect("INCOMPLETE", (OK,), {N[4]: "InsufficientResources"}),
    "node-below-its-share": Expect("INCOMPLETE", (OK,), {N[4]: "InsufficientResources"}),  # allocates more than asked
    "threshold-pass-two-metrics": Expect("PASSED", (OK,)),
    "threshold-fail-healthy-fleet": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "threshold-range-pass": Expect("PASSED", (OK,)),
    "threshold-range-fail-above": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "missing-measurement-short-training": Expect("FAILED", (("Failed", {}),)),  # fails closed, convicting no node
    "repeat-count-flaky-node": Expect("FAILED", (("Failed", {N[1]: WF}),)),
    "repeat-count-healthy": Expect("PASSED", (OK,)),
    "flaky-every-iteration": Expect("FAILED", (("Failed", {N[0]: WF}),)),
    "categories-same-nodes-sequential": Expect("PASSED", (OK, OK)),
    "max-concurrent-two": Expect("PASSED", (OK,)),
    "max-concurrent-one-loopback": Expect("FAILED", (("Failed", {N[2]: TV}),)),
    "intra-rack-per-clique": Expect("PASSED", (OK,)),
    "intra-rack-slow-clique": Expect("FAILED", (("Failed", {N[2]: TV, N[3]: TV}),)),
    "full-scale-overflow-groups": Expect("PASSED", (OK,)),
    "full-scale-even-chunks": Expect("FAILED", (("Failed", {N[3]: TV, N[4]: TV, N[5]: TV}),)),
    "diagnose-slow-gpu": Expect("FAILED", (("Failed", {N[5]: TV}),)),
    "diagnose-degraded-nic": Expect("FAILED", (("Failed", {N[1]: TV}),)),
    "diagnose-all-healthy": Expect("PASSED", (OK,)),
    "diagnose-flaky-and-fabric": Expect("FAILED", (("Failed", {"gpu-node-06": WF}),)),
    "diagnose-hardware-fault-after-a-pass": Expect("FAILED", (("Failed", {N[1]: TV, N[4]: HW}),)),
    "diagnose-cordoned-between-rounds": Expect("FAILED", (("Failed", {N[1]: TV}),), {N[4]: "Cordoned"}),
    "diagnose-cordoned-before-its-test-started": Expect("FAILED", (("Failed", {N[1]: TV}),), {N[4]: "Cordoned"}),
    "diagnose-fabric-wide": Expect("FAILED", (("Failed", {}),)),  # the whole fabric named, no node blamed
    "diagnose-flaky-crash-across-cliques": Expect("FAILED", (("Failed", {"gpu-node-05": WF}),)),
    "full-scale-on-failure-repeated": Expect("FAILED", (("Failed", {"gpu-node-07": TV}),)),
    "on-failure-decided-by-iterations": Expect("FAILED", (("Failed", {"gpu-node-03": TV}),)),
    "diagnose-two-degraded-links": Expect("FAILED", (("Failed", {}),)),  # two links named, no node blamed
    "intra-rack-on-failure-diagnose": Expect("FAILED", (("Failed", {"gpu-node-06": WF}),)),
    "repeat-on-failure-every-iteration": Expect("FAILED", (("Failed", {"gpu-node-02": WF, "gpu-node-07": TV}),)),
    "gb200-intra-rack-on-failure-within-cliques": Expect("FAILED", (("Failed", {"gpu-node-03": TV}),)),
    "gb200-diagnose-within-cliques": Expect("FAILED", (("Failed", {"gpu-node-12": TV}),)),
    "diagnose-threshold-out-of-reach": Expect("FAILED", (("Failed", {}),)),
    "dcgm-xid-names-test-and-gpu": Expect("FAILED", (("Failed", {N[1]: WF}),)),
    "dcgm-flaky-pcie": Expect("FAILED", (("Failed", {N[2]: WF}),)),
    "dcgm-skipped-tests-marked": Expect("FAILED", (OK, ("Failed", {N[1]: TV}))),
    "training-slow-gpu-tflops": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "training-healthy-all-metrics": Expect("PASSED", (OK,)),
    "training-goodput-threshold": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "training-too-few-gpus": Expect("FAILED", (("Failed", {}), OK)),
    "loopback-catches-degraded-nic": Expect("FAILED", (("Failed", {N[3]: TV}),)),
    "nvswitch-loopback-catches-slow-gpu": Expect("FAILED", (("Failed", {N[1]: TV}),)),
    "loopbacks-split-nic-and-nvlink": Expect("FAILED", (("Failed", {N[0]: TV}), ("Failed", {N[2]: TV}))),
    "slow-gpu-appears-mid-certification": Expect("FAILED", (OK, ("Failed", {N[1]: TV}))),
    "timeout-from-workload-start": Expect("PASSED", (OK,)),
    "timeout-shorter-than-run": Expect("FAILED", (("Failed", {}),)),  # every run timed out: inconclusive, not blamed
    "no-matching-nodes-waits-then-fails": Expect("FAILED", (("Failed", {}),)),
    "all-nodes-cordoned-waits-then-fails": Expect("FAILED", (("Failed", {}),)),  # NodesUnavailable: nothing tested, none blamed
    "nodes-per-job-exceeds-fleet": Expect("FAILED", (("Failed", {}),)),
    "gb200-intra-rack-mnnvl": Expect("PASSED", (OK,)),
    "alltoall-degraded-nic": Expect("FAILED", (("Failed", dict.fromkeys(ALL4, TV)),)),
    "mixed-failures-three-categories": Expect(
        "FAILED", (("Failed", {N[0]: TV, N[2]: WF}), ("Failed", {N[2]: WF}), ("Failed", {N[2]: WF})), {N[4]: "Cordoned"}),
}
