"""One place for each condition type, reason, result and API group: engine/api/vocabulary.py, or the one module a value
legitimately lives in (a layer's own reason, a group the store's kinds spell). The goldens pin the wire values; these
tests pin where they are spelled, so an inline copy does not come back."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args, get_type_hints

from nvcre_tui.engine.api import bodies, resources
from nvcre_tui.engine.api.base import API_VERSION
from nvcre_tui.engine.api.vocabulary import (
    COMPUTE_DOMAIN_API_VERSION, FAILED, HARDWARE_FAILURE_DETECTED, IN_PROGRESS, RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED,
    RESULT_RUNNING, SCHEDULING_BLOCKED, SUCCEEDED, THRESHOLD_VIOLATION, TIMEOUT, TRAINER_API_VERSION, WORKLOAD_FAILED,
)
from nvcre_tui.engine.runners.kubernetes.create import COMPUTE_DOMAIN, TRAINJOB, TRAINING_RUNTIME
from nvcre_tui.engine.store.protocol import BATCH_JOB, CERTIFICATION
from nvcre_tui.engine.workloads.batch import BATCH_API_VERSION

PACKAGE = Path(__file__).resolve().parents[1] / "nvcre_tui"
VOCABULARY = "engine/api/vocabulary.py"

# literal -> the modules (under nvcre_tui/) besides the vocabulary that may spell it as a whole string, and why.
DIAGNOSE = "engine/diagnose/__init__.py"  # may not import engine.api (tests/test_engine_layers.py): a group's phase
STORE_TIMEOUT = {"engine/store/errors.py", "engine/store/__init__.py", "engine/store/kube/answers.py"}  # the store's error
WALL = "screens/wall.py"  # the wall's counter titles, not results
SPELLED_ONCE: dict[str, set[str]] = {
    # condition types and the phases they name
    "InProgress": set(), "Succeeded": {DIAGNOSE}, "Failed": {"screens/drilldown.py"},  # drilldown: a "Failed:" label
    "ValidationFailed": set(), "HardwareFailed": set(), "BatchFallback": set(), "Simulated": set(),
    "TrainerNotServed": set(), "SimulatedRunner": {"engine/runners/simulated.py"},  # there: its class's name
    # why a node failed
    "WorkloadFailed": set(), "SchedulingBlocked": set(), "HardwareFailureDetected": set(), "ThresholdViolation": set(),
    "Timeout": STORE_TIMEOUT,
    # a run's, a Job's or a threshold's reasons
    "InvalidSpec": set(), "WorkloadCompleted": {"engine/controllers/job.py"}, "ThresholdsMet": {"engine/controllers/job.py"},
    "CommandNotFound": set(), "Queued": set(), "WaitingForNodes": set(), "WaitingForLeftovers": set(), "ThresholdOutOfReach": set(),
    "ServiceUnavailable": {"engine/judging/untested.py", "engine/store/kube/answers.py"},  # answers: Kubernetes' Status reason
    "ThresholdMet": {"engine/judging/thresholds.py"}, "ThresholdViolated": {"engine/judging/thresholds.py"},
    "MeasurementUnavailable": {"engine/judging/thresholds.py"}, "InvalidThresholdExpression": {"engine/judging/thresholds.py"},
    "RunIncomplete": {"engine/judging/measure.py"},
    "NoDataCollected": {"engine/parsers/base.py"}, "WrongFormat": {"engine/parsers/base.py"},  # parsers may not import api
    # a certification's result
    "PASSED": {"cli/parse.py", WALL},  # parse: a parsed output's verdict
    "FAILED": {"engine/sim/outputs/nccl.py", WALL},  # nccl: nccl-tests' own line
    "INCOMPLETE": set(), "RUNNING": {WALL},
    # API groups and versions: the store's kinds (store/protocol.py) or the leaf both store and api import (names.py)
    "coordination.k8s.io": {"engine/store/protocol.py"}, "nvsentinel.nvidia.com": {"engine/store/protocol.py"},
    "rbac.authorization.k8s.io": {"engine/store/protocol.py"}, "apiextensions.k8s.io": {"engine/names.py"},
    "v1alpha1": {"engine/names.py", "engine/store/protocol.py"},  # protocol: NVSentinel's version
    "trainer.kubeflow.org": set(), "resource.nvidia.com": set(),  # vocabulary.py's TRAINER_GROUP, COMPUTE_DOMAIN_GROUP
    "batch/v1": {"engine/workloads/batch.py"},  # workloads may not import the store's BATCH_JOB
}


def _is_literal_type(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Literal") or (isinstance(node, ast.Attribute) and node.attr == "Literal")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of a module's string constants, but those of a `Literal[...]` type (a type takes no constant)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Subscript) and _is_literal_type(node.value):
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_each_moved_literal_is_spelled_in_one_place() -> None:
    strays = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == VOCABULARY:
            continue
        for line, text in _strings(ast.parse(path.read_text(), str(path))):
            allowed = SPELLED_ONCE.get(text)
            if allowed is not None and where not in allowed:
                strays.append(f"nvcre_tui/{where}:{line}: {text!r}")
    assert not strays, "spelled inline; use the vocabulary's (or its home module's) constant:\n" + "\n".join(strays)


def test_every_exception_is_still_needed() -> None:
    """An allowance whose module no longer spells the literal goes, so the table stays the truth."""
    spelled: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for _, text in _strings(ast.parse(path.read_text(), str(path))):
            spelled.setdefault(text, set()).add(path.relative_to(PACKAGE).as_posix())
    stale = [f"{literal}: {where}" for literal, allowed in SPELLED_ONCE.items() for where in allowed - spelled.get(literal, set())]
    assert not stale, stale


def test_the_models_literal_types_spell_the_vocabulary() -> None:
    """A Literal type cannot be built from constants (mypy would not check it): its args equal them instead."""
    assert set(get_args(resources.NodeFailureReason)) == {
        HARDWARE_FAILURE_DETECTED, THRESHOLD_VIOLATION, WORKLOAD_FAILED, TIMEOUT, SCHEDULING_BLOCKED}
    assert set(get_args(resources.CategoryPhase)) == {"Pending", IN_PROGRESS, SUCCEEDED, FAILED}
    assert set(get_args(resources.Phase)) == {"Pending", "Running", SUCCEEDED, FAILED}
    results = {RESULT_RUNNING, RESULT_PASSED, RESULT_FAILED, RESULT_INCOMPLETE}
    assert set(get_args(resources.CertificationSummary.model_fields["result"].annotation)) == results
    assert set(get_args(get_type_hints(bodies.CertificationSummary)["result"])) == results


def test_api_versions_agree_across_layers() -> None:
    assert CERTIFICATION.api_version == API_VERSION
    assert BATCH_JOB.api_version == BATCH_API_VERSION
    assert TRAINJOB.api_version == TRAINING_RUNTIME.api_version == TRAINER_API_VERSION
    assert COMPUTE_DOMAIN.api_version == COMPUTE_DOMAIN_API_VERSION
