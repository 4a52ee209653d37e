"""`nvcre setup status` says which workload shape runs will use: TrainJobs when the Trainer's TrainJob and
TrainingRuntime CRDs are there, else the batch fallback."""

from __future__ import annotations

from datetime import UTC, datetime

from nvcre_tui.cli.status_rows import status_rows
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.kube.status import JOBSET_CRD, TRAINER_CRDS, probe
from nvcre_tui.engine.store import CRD, MemoryStore
from tests.kube.test_status_probe import trainer_crd


async def _row(crds: tuple[str, ...]) -> tuple[str, str, str]:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    store = MemoryStore(clock)
    for name in crds:
        await store.create(CRD, trainer_crd(name))
    rows = status_rows(await probe(store, clock, "nvcre-system"))
    return next(row for row in rows if row[0] == "kubeflow trainer")


async def test_without_the_trainer_runs_use_the_batch_fallback() -> None:
    name, state, detail = await _row(())
    assert state == "missing" and detail.endswith("runs use the batch fallback (batch/v1 Indexed Job + headless Service)")


async def test_with_trainjobs_and_runtimes_runs_are_trainjobs() -> None:
    _, state, detail = await _row((*TRAINER_CRDS[:2], JOBSET_CRD))
    assert detail.endswith("; runs as TrainJobs")
    assert state == "partial" and "; not served: clustertrainingruntimes;" in detail  # "partial" says what is missing
    _, _, no_jobset = await _row(TRAINER_CRDS[:2])  # the Trainer makes JobSets; without JobSet no pod is ever made
    assert no_jobset.endswith("; runs as TrainJobs but no JobSet CRD is served: nothing will make their pods (install JobSet, which the Trainer needs)")
    _, _, partial = await _row(TRAINER_CRDS[:1])
    assert "batch fallback" in partial
