"""dcgmi diag gets its own --timeout from the category's timeoutPerJob (catalog `${toolTimeoutSeconds}`): a level-4
diagnostic that hangs is stopped by dcgmi on its host engine, which frees the GPUs, before the Job's timeout deletes
the pod (after which the GPU Operator's standalone host engine would go on running it). A timeoutPerJob that leaves
dcgmi less than a healthy run takes (engine/dcgm_time.py) and its margin, which would fail every node Timeout, is
refused up front."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import check_certification, render_certification
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.workloads import workload_manifests
from tests.certifications import on_every_gpu_node
from tests.workloads.matrix import placement, run_spec

CERT = on_every_gpu_node("{domain: diagnostics, variant: dcgm-level4, options: OPTIONS}")
ENTRY = "diagnostics/dcgm-level4"


def _dcgmi_command(trainer: bool) -> list[str]:
    objects = workload_manifests(run_spec(ENTRY, "aws", "h100"), placement(ENTRY, "aws", "h100"), trainer=trainer)
    if trainer:
        return next(obj for obj in objects if obj["kind"] == "TrainJob")["spec"]["trainer"]["command"]
    container = next(obj for obj in objects if obj["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]
    return [*container.get("command", []), *container.get("args", [])]


@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
def test_the_rendered_dcgmi_command_times_out_ten_minutes_before_the_jobs_timeout(trainer: bool) -> None:
    command = _dcgmi_command(trainer)
    text = " ".join(command)
    assert "dcgmi diag" in text and "--run 4" in text, text
    assert command[command.index("--timeout") + 1] == "6600", text  # the 2h timeBudget less 10 minutes to start


@pytest.mark.parametrize(("options", "seconds"), [("{timeoutPerJob: 3h}", "10200"), ("{timeoutPerJob: 1h22m}", "4320")])
def test_the_dcgmi_timeout_follows_the_categorys_timeout_per_job(options: str, seconds: str) -> None:
    cert = certification_from_text("c.yaml", CERT.replace("OPTIONS", options), default_catalog())
    rendered = render_certification(cert, build_nodes(default_scenario()), default_catalog(), "c.yaml")
    spec = rendered[0].workflow.spec.job_template.spec.workload.workload_run
    assert spec is not None and spec.framework.exec is not None
    args = spec.framework.exec.args or []
    assert args[args.index("--timeout") + 1] == seconds


@pytest.mark.parametrize(("options", "refused"), [
    ("{timeoutPerJob: 45m}", "timeoutPerJob 45m leaves dcgmi 35m00s after 10m00s for its pods to start, and dcgmi diag "
                             "--run 4 runs about 1h05m (its test_duration parameters 40m00s): give timeoutPerJob at least "
                             "1h22m (10% over the run)"),
    ("{timeoutPerJob: 5m}", "timeoutPerJob 5m leaves dcgmi 0s after 10m00s for its pods to start"),
])
def test_a_timeout_per_job_dcgmi_would_refuse_is_refused_naming_the_least(options: str, refused: str) -> None:
    """Refused by render (and `run`) on the nodes, and without them (a user who may not read Nodes)."""
    cert = certification_from_text("c.yaml", CERT.replace("OPTIONS", options), default_catalog())
    for check in (lambda: render_certification(cert, build_nodes(default_scenario()), default_catalog(), "c.yaml"),
                  lambda: check_certification(cert, default_catalog(), "c.yaml")):
        with pytest.raises(InputError) as caught:
            check()
        assert str(caught.value).startswith(f"c.yaml: spec.categories[0].options.timeoutPerJob: {refused}"), str(caught.value)
