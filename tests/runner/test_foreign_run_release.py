"""A WorkloadRun whose status someone else set (Succeeded by hand) is failed StatusWrittenByAnother and its workload
stopped (controllers/foreign.py). That stop is the only release such a run gets: the engine reconciles a refused object
no further, so the ended-run release (runners/base.EndedRelease) never reached it. An engine that died in the stop (or
met an API error in its deletions, and was retried) left the run's batch Job, and its pods' GPUs, until the Certification
was deleted. The refused run is now released like any ended one, once (its Released condition)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import FOREIGN_STATUS, RELEASED
from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.controllers.conditions import find
from nvcre_tui.engine.controllers.foreign import refuse_foreign_status
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, WORKLOADRUN, ResourceKind
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
from nvcre_tui.engine.sim.scenario import load_scenario
from tests.kube.cluster import installed, store_on
from tests.kubeapi.faults import Fault
from tests.runner.harness import denied, died_during, job_and_its_run, register_gpu_nodes, service_account_kubeconfig
from tests.runner.test_release_dra import NODES, SPEC
from tests.scenarios.harness import CASES

Obj = dict[str, Any]


class _Ctx:
    """What the refusal asks of the engine's Context: its runner, its clock, and a status write (as the engine's)."""

    def __init__(self, runner: KubernetesRunner, store: Any, clock: ManualClock) -> None:
        self.runner: Runner = runner
        self.store, self.clock = store, clock

    def now(self) -> str:
        return format_time(self.clock.now())

    async def transition(self, kind: ResourceKind, obj: Obj, status: Obj, events: list[tuple[str, str, str]]) -> bool:
        meta = obj["metadata"]
        await self.store.patch_status(kind, meta["name"], meta.get("namespace"), status)
        return True


async def _refused_run_after_a_death(folder: Path) -> tuple[list[str], list[str], Obj, list[str]]:
    """A batch-fallback run started; its status set to Succeeded by hand; the engine refuses it and dies deleting its
    batch Job; a new engine's runner looks at the refused run. The batch Jobs after the death and after the new look,
    the run then, and the engine's requests `setup init` does not grant."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        as_engine = await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME)
        # the first engine's own store, closed at its death: a dead process sends nothing more (a cancelled request's
        # retry must not delete the batch Job once the server takes DELETEs again)
        dying, engine = await store_on(as_engine, clock, "nvcre-engine"), await store_on(as_engine, clock, "nvcre-engine")
        hand = await store_on(kubeconfig, clock, "kubectl-patch")  # a writer not nvcre, as managedFields name it
        try:
            return await _refused_run(server, admin, (dying, engine), hand, clock)
        finally:
            for store in (admin, dying, engine, hand):
                await store.close()


async def _refused_run(server: Any, admin: Any, engines: tuple[Any, Any], hand: Any,
                       clock: ManualClock) -> tuple[list[str], list[str], Obj, list[str]]:
    """_refused_run_after_a_death on the emulator `server`: as the admin, the engine's ServiceAccount (the store of the
    engine that dies, and of the one after) and a hand."""
    dying, engine = engines
    await register_gpu_nodes(admin, clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
    _, created = await job_and_its_run(admin, {k: v for k, v in SPEC.items() if k != "resourceClaims"}, NODES)

    async def jobs() -> list[str]:
        return sorted(j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, "default")).items)

    first = KubernetesRunner(dying, clock, dying, trainer=False)
    try:
        await first.reconcile_run(created)
        assert await jobs() == ["cert-job-workload"]
        await hand.patch_status(WORKLOADRUN, "cert-job-run", "default", {"phase": "Succeeded", "exitCode": 0})
        dropped = server.faults.add(Fault(method="DELETE", path=r"^/apis/batch/v1/", reset_connection=True))
        run = await dying.get(WORKLOADRUN, "cert-job-run", "default")
        await died_during(server, refuse_foreign_status(_Ctx(first, dying, clock), WORKLOADRUN, run),
                          verb="delete", resource="jobs", api_group="batch")
    finally:
        await first.close()  # the engine dead (its runner's tasks and its connections too) before the server takes DELETEs again
        await dying.close()
    server.faults.remove(dropped)
    after_death = await jobs()
    server.clear_requests()
    second = KubernetesRunner(engine, clock, engine, trainer=False)
    try:
        run = await engine.get(WORKLOADRUN, "cert-job-run", "default")
        assert await refuse_foreign_status(_Ctx(second, engine, clock), WORKLOADRUN, run)
    finally:
        await second.close()
    return after_death, await jobs(), await admin.get(WORKLOADRUN, "cert-job-run", "default"), denied(server.requests)


def test_a_run_refused_for_its_foreign_status_is_released_by_the_next_engine(tmp_path: Path) -> None:
    after_death, after_restart, run, refused = asyncio.run(_refused_run_after_a_death(tmp_path))
    assert after_death == ["cert-job-workload"], after_death  # the death held it
    assert (run["status"]["phase"], run["status"]["reason"]) == ("Failed", FOREIGN_STATUS), run["status"]
    assert after_restart == [], f"a refused run's batch Job stays after a restart: {after_restart}"
    released = find(run["status"].get("conditions"), RELEASED)
    assert released is not None and released["status"] == "True", run["status"]
    assert refused == []
