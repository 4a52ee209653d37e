"""What an error says to a user (store.errors.failure_line, the one place): what failed and where, in words. A Workflow the
engine could not reconcile was failed `KeyError: 'workload'`, a refused write as `Forbidden: ...`, and `run --cleanup`
said `cleanup: RuntimeError: ...`: Python class names, read as no other message does."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any, cast

import pytest
from rich.console import Console

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.diagnose.state import DiagnoseError
from nvcre_tui.engine.engine import reconcile_failed
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.errors import Forbidden, Invalid, ServerError, failure_line
from nvcre_tui.engine.store.protocol import WORKFLOW

WORKFLOW_X = "Workflow default/x"


@pytest.mark.parametrize(("error", "line"), [
    (ServerError.about(WORKFLOW, "x", "default", "etcdserver: request timed out"),
     "reconciling Workflow default/x failed: the API server failed: etcdserver: request timed out"),
    (Invalid.about(WORKFLOW, "x", "default", "etcdserver: request is too large"),
     "reconciling Workflow default/x failed: etcdserver: request is too large"),
    (Forbidden.about("Job", "x-1", "default", 'jobs.nvcre.nvidia.com "x-1" is forbidden'),  # another object: named
     'reconciling Workflow default/x failed: Job default/x-1: jobs.nvcre.nvidia.com "x-1" is forbidden'),
    (DiagnoseError("diagnose state: group g is not in its plan\n(damaged)"),  # nvcre's own sentence, on one line
     "reconciling Workflow default/x failed: diagnose state: group g is not in its plan (damaged)"),
    (KeyError("workload"),
     "reconciling Workflow default/x failed: a field not of the shape nvcre writes (an edit by hand), or a bug in nvcre "
     "(KeyError: 'workload')"),
], ids=["server-error", "etcd-too-large", "another-object", "nvcre-error", "unexpected"])
def test_a_reconcile_failure_says_what_failed_and_where(error: Exception, line: str) -> None:
    assert reconcile_failed(WORKFLOW_X, error) == line


def test_an_unexpected_error_is_a_bug_with_its_detail_and_a_long_one_is_cut() -> None:
    assert failure_line(RuntimeError("boom")) == "a bug in nvcre (RuntimeError: boom)"
    assert failure_line(AssertionError()) == "a bug in nvcre (AssertionError)"
    assert len(reconcile_failed(WORKFLOW_X, ValueError("x" * 1000))) == 300


async def test_a_workflow_the_engine_cannot_reconcile_is_failed_in_words() -> None:
    session = await SimSession.open(Scenario.model_validate({"name": "words", "seed": 1, "nodes": [{"count": 2, "cliques": 1}]}), None)
    await session.store.create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                          "metadata": {"name": "broken", "namespace": "default"},
                                          "spec": {"jobTemplate": {"spec": {}}, "orchestration": {}}})
    assert session.engine is not None
    await session.engine.run_until_settled()
    failed = cond.find((await session.store.get(WORKFLOW, "broken", "default"))["status"]["conditions"], "Failed") or {}
    assert (failed.get("reason"), failed.get("message")) == (
        "ReconcileError", "reconciling Workflow default/broken failed: a field not of the shape nvcre writes (an edit by hand), "
                          "or a bug in nvcre (KeyError: 'workload')"), failed


class _GoneStore:
    """A session's store whose read fails as nothing expects (the engine died under it)."""

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the event loop is closed")


async def test_run_cleanup_says_an_unexpected_failure_in_words() -> None:
    from nvcre_tui.cli.run.cleanup import cleanup_certification

    out = io.StringIO()
    await cleanup_certification(cast(Any, SimpleNamespace(store=_GoneStore())), "x", "default", "", Console(file=out, width=200))
    assert out.getvalue() == "cleanup: a bug in nvcre (RuntimeError: the event loop is closed)\n", out.getvalue()


def _raised(call: Any, *args: Any) -> BaseException:
    with pytest.raises(ValueError) as caught:
        call(*args)
    return caught.value


def test_a_value_nvcre_refuses_on_purpose_is_said_as_its_message_not_as_a_bug() -> None:
    """A value nvcre refuses with a sentence of its own (a duration past the maximum, which a CRD's pattern admits in a
    Job edited by hand; a status time that is no RFC 3339 one; a selector or quantity that does not parse; a catalog's
    unknown metric) was a plain ValueError: the user read "a field not of the shape nvcre writes ..., or a bug in nvcre
    (ValueError: ...)". It is now said as the sentence it is."""
    from nvcre_tui.engine.clock import parse_time
    from nvcre_tui.engine.planning.catalog import _known_metric
    from nvcre_tui.engine.store.selectors import parse_label_selector
    from nvcre_tui.engine.units import parse_duration, parse_quantity

    job = "Job default/x-1"
    assert reconcile_failed(job, _raised(parse_duration, "9000h")) == (
        "reconciling Job default/x-1 failed: duration '9000h' is longer than the maximum of 8784h (366 days)")
    assert reconcile_failed(job, _raised(parse_time, "yesterday")) == (
        "reconciling Job default/x-1 failed: time 'yesterday' is not an RFC 3339 timestamp like 2026-11-29T10:00:00Z")
    for error in (_raised(parse_quantity, "lots"), _raised(parse_label_selector, "a in (b"), _raised(_known_metric, "speed")):
        said = failure_line(error)
        assert said == " ".join(str(error).split()) and "bug" not in said and "ValueError" not in said, said


async def test_a_workflow_whose_target_was_edited_into_a_wrong_shape_is_refused_naming_its_fields() -> None:
    """A Workflow's target, edited by hand (a node name where a list goes, a number for a label value), was failed as
    "a bug in nvcre" with pydantic's text of several lines (`2 validation errors for TargetSpec ... For further
    information visit https://errors.pydantic.dev/...`); now in one line, the Workflow and each field named."""
    session = await SimSession.open(Scenario.model_validate({"name": "words", "seed": 1, "nodes": [{"count": 2, "cliques": 1}]}), None)
    try:
        await session.store.create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                              "metadata": {"name": "edited", "namespace": "default"},
                                              "spec": {"jobTemplate": {"spec": {"workload": {"workloadRun": {}}}},
                                                       "orchestration": {"target": {"nodeNames": "gpu-node-01", "nodeSelector": {"rack": 5}}}}})
        assert session.engine is not None
        await session.engine.run_until_settled()
        failed = cond.find((await session.store.get(WORKFLOW, "edited", "default"))["status"]["conditions"], "Failed") or {}
    finally:
        await session.close()
    assert (failed.get("reason"), failed.get("message")) == (
        "ReconcileError", "reconciling Workflow default/edited failed: spec.orchestration.target.nodeSelector.rack: must be a string, "
                          "got 5; spec.orchestration.target.nodeNames: must be a list, got 'gpu-node-01'"), failed
