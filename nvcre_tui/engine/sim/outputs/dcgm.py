"""`dcgmi diag -r 4 -j` JSON from per-GPU, per-test outcomes: DCGM 3.x, 4.x and the 4.2 hybrid."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: (category, 4.x plugin name) of the level-4 ("xlong") suite, in the order dcgmi prints them.
LEVEL4_TESTS: tuple[tuple[str, str], ...] = (
    ("Deployment", "software"),
    ("Integration", "pcie"),
    ("Hardware", "memory"),
    ("Hardware", "diagnostic"),
    ("Hardware", "nvbandwidth"),
    ("Stress", "targeted_stress"),
    ("Stress", "targeted_power"),
    ("Stress", "memory_bandwidth"),
    ("Stress", "memtest"),
    ("Stress", "pulse_test"),
)

#: 3.x display names; tests missing here did not exist in 3.x and are left out of its output.
DISPLAY_3X = {"pcie": "PCIe", "memory": "GPU Memory", "diagnostic": "Diagnostic", "targeted_stress": "Targeted Stress",
              "targeted_power": "Targeted Power", "memory_bandwidth": "Memory Bandwidth", "memtest": "Memtest",
              "pulse_test": "Pulse Test"}
SOFTWARE_3X = ("Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
               "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom")
_WORST = ("Fail", "Warn", "Pass", "Skip")


@dataclass(frozen=True)
class GpuOutcome:
    """What one test did on one GPU."""

    status: str = "Pass"  # Pass | Fail | Warn | Skip
    warning: str | None = None
    error_id: int = 0


Outcomes = Mapping[tuple[str, int], GpuOutcome]  # (4.x test name, GPU index) -> outcome; absent = Pass


def outcome(outcomes: Outcomes, test: str, gpu: int) -> GpuOutcome:
    return outcomes.get((test, gpu), GpuOutcome())


def worst(statuses: Sequence[str]) -> str:
    return next((status for status in _WORST if status in statuses), "Skip")


def _warning_objects(result: GpuOutcome, rng: random.Random) -> list[dict[str, Any]]:
    if result.warning is None:
        return []
    return [{"warning": result.warning, "error_id": result.error_id or rng.randint(1, 120),
             "error_category": rng.randint(1, 6), "error_severity": rng.randint(1, 3)}]


def _entity_tests(gpus: Sequence[int], outcomes: Outcomes, tests: Sequence[tuple[str, str]],
                  rng: random.Random) -> list[dict[str, Any]]:
    """4.x / hybrid test_categories: one entity result per GPU and a test summary."""
    categories: dict[str, list[dict[str, Any]]] = {}
    for category, test in tests:
        results = []
        for gpu in gpus:
            result = outcome(outcomes, test, gpu)
            entry: dict[str, Any] = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu,
                                     "status": result.status}
            if result.warning is not None:
                entry["warnings"] = _warning_objects(result, rng)
            results.append(entry)
        summary = worst([entry["status"] for entry in results])
        categories.setdefault(category, []).append({"name": test, "results": results,
                                                    "test_summary": {"status": summary}})
    return [{"category": category, "tests": items} for category, items in categories.items()]


def _gpu_tests_3x(gpus: Sequence[int], outcomes: Outcomes, tests: Sequence[tuple[str, str]],
                  rng: random.Random) -> list[dict[str, Any]]:
    """3.x test_categories: software checks over all GPUs (gpu_ids CSV), then one gpu_id result per GPU."""
    categories: dict[str, list[dict[str, Any]]] = {}
    for category, test in tests:
        if test == "software":
            software = [outcome(outcomes, test, gpu) for gpu in gpus]
            status = worst([result.status for result in software])
            warnings = [w for result in software for w in _warning_objects(result, rng)]
            for name in SOFTWARE_3X:
                failing = name == "Page Retirement/Row Remap" and status != "Pass"
                entry: dict[str, Any] = {"gpu_ids": ",".join(map(str, gpus)), "status": status if failing else "Pass"}
                if failing and warnings:
                    entry["warnings"] = warnings
                categories.setdefault(category, []).append({"name": name, "results": [entry]})
            continue
        if test not in DISPLAY_3X:
            continue
        results = []
        for gpu in gpus:
            result = outcome(outcomes, test, gpu)
            entry = {"gpu_id": str(gpu), "status": result.status}
            if result.warning is not None:
                entry["warnings"] = _warning_objects(result, rng)
            results.append(entry)
        categories.setdefault(category, []).append({"name": DISPLAY_3X[test], "results": results})
    return [{"category": category, "tests": items} for category, items in categories.items()]


def _document(gpus: Sequence[int], outcomes: Outcomes, rng: random.Random, version: str,
              runtime_error: str | None, tests: Sequence[tuple[str, str]], driver: str) -> dict[str, Any]:
    dcgm_version = {"3": "3.3.9", "4": "4.5.2", "hybrid": "4.2.3"}[version]
    key = "DCGM GPU Diagnostic" if version == "3" else "DCGM Diagnostic"
    tree: dict[str, Any] = {}
    if runtime_error is not None:
        tree["runtime_error"] = runtime_error
    elif version == "3":
        tree["test_categories"] = _gpu_tests_3x(gpus, outcomes, tests, rng)
    else:
        tree["test_categories"] = _entity_tests(gpus, outcomes, tests, rng)
    if version != "4":
        tree.update({"version": dcgm_version, "Driver Version Detected": driver})
        return {key: tree}
    serials = [{"entity_id": gpu, "device_id": "2330", "serial_num": f"{rng.randint(10**12, 10**13 - 1)}"}
               for gpu in gpus]
    return {key: tree, "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1, "entities": serials}],
            "metadata": {"version": dcgm_version, "Driver Version Detected": driver}}


def write_dcgm_json(gpus: Sequence[int], outcomes: Outcomes, rng: random.Random, *, version: str = "4",
                    runtime_error: str | None = None, tests: Sequence[tuple[str, str]] = LEVEL4_TESTS,
                    driver: str = "570.133.20", iterations: int = 1) -> str:
    """`dcgmi diag -j` output; `version` is "3", "4" or "hybrid". With iterations > 1 the
    --iterations wrapper is written, stopping after the first failing run as dcgmi does."""
    if iterations <= 1:
        return json.dumps(_document(gpus, outcomes, rng, version, runtime_error, tests, driver), indent=4) + "\n"
    failed = runtime_error is not None or any(result.status == "Fail" for result in outcomes.values())
    runs = [_document(gpus, outcomes, rng, version, runtime_error, tests, driver)
            for _ in range(1 if failed else iterations)]
    wrapper: dict[str, Any] = {"iterations": runs, "Overall Result": "Fail" if failed else "Pass"}
    if failed:
        wrapper["warning"] = "A test in the diagnostic failed"
    return json.dumps(wrapper, indent=4) + "\n"
