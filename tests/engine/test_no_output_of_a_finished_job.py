"""Why a log has no line (views.no_output, the console's log pane and `certification logs` alike) for a Job that
ended without a WorkloadRun (its namespace was being deleted when it would have made one, or its run is gone): it
said "No output yet: the job has no WorkloadRun yet." as if one were coming, and the pane added that its output will
appear, where nothing more can come."""

from __future__ import annotations

from datetime import UTC, datetime

from nvcre_tui.engine.api.vocabulary import FAILED, IN_PROGRESS, NAMESPACE_TERMINATING
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.views.waiting import no_output

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _job(phase: str, reason: str) -> dict[str, object]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "burn-in-g1", "namespace": "default"},
            "spec": {}, "status": {"conditions": cond.with_phase([], phase, reason, "why", "2026-01-02T03:00:00Z")}}


def test_a_job_that_ended_without_a_run_says_no_output_will_come() -> None:
    sentence, why = no_output(_job(FAILED, NAMESPACE_TERMINATING), None, NOW, fleet_here=False)
    assert "yet" not in sentence, sentence
    assert sentence == f"No output: the job failed ({NAMESPACE_TERMINATING}) with no WorkloadRun, so it has no log.", sentence
    assert why is None


def test_a_job_still_in_progress_without_a_run_still_waits_for_one() -> None:
    assert no_output(_job(IN_PROGRESS, "Created"), None, NOW, fleet_here=False) == ("No output yet: the job has no WorkloadRun yet.", None)
    assert no_output(None, None, NOW, fleet_here=False) == ("No output yet: the job has no WorkloadRun yet.", None)


def test_a_simulated_run_without_a_line_names_its_maker_only_where_this_process_does_not_play_the_fleet() -> None:
    """Read without the fleet (a cluster's --sim-runner run, `logs` without it) no pod holds its output: said so, with
    the flag that makes it. Where this process plays the fleet (--sim, --sim-runner) the run printed nothing."""
    run = {"metadata": {"name": "burn-in-g1-run"}, "status": {"phase": "Succeeded", "conditions": [
        {"type": cond.SIMULATED, "status": "True", "reason": "SimulatedRunner", "message": "played"}]}}
    sentence, _ = no_output(_job(FAILED, "Completed"), run, NOW, fleet_here=False)
    assert sentence == ("No output here: the run succeeded: a simulated run, whose output only --sim-runner makes; "
                        "give --sim-runner with the fleet's --scenario to read it."), sentence
    sentence, _ = no_output(_job(FAILED, "Completed"), run, NOW, fleet_here=True)
    assert sentence == "No output: the run succeeded, and neither its pods nor its Job hold any line of its log.", sentence
