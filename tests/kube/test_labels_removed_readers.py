"""On a shared cluster anyone may remove a label: a Workflow's `nvcre.nvidia.com/certification` and its Jobs'
`nvcre.nvidia.com/workflow` removed mid-run left the engine's verdict right (it follows ownerReferences), but the
readers joined by label: `certification report` said no node tested and showed no evidence, the console lost the
category and the history archived none of its results. Now every reader joins by owner, as the engine does
(report/readmodel.py), on the API-server emulator over real HTTP."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.report import certification_report
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW, RESULT_FAILED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW
from tests.history.helpers import NAMESPACE, loopback
from tests.history.test_on_cluster import open_on
from tests.kube.cluster import installed

NAME = "unlabelled"


async def test_report_console_and_history_find_a_category_whose_labels_were_removed_mid_run(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    async with installed(tmp_path, clock=clock) as (_server, kubeconfig):
        session = await open_on(kubeconfig, clock, tmp_path / "history.db")
        try:
            assert session.engine is not None and session.history is not None
            await session.store.create(CERTIFICATION, loopback(NAME))

            async def running() -> bool:
                return any(cond.phase(job) == "InProgress" for job in session.cache.list(JOB, NAMESPACE))

            assert await session.engine.run_until_settled(until=running, max_seconds=3600)
            for kind, label in ((WORKFLOW, LABEL_CERTIFICATION), (JOB, LABEL_WORKFLOW)):  # kubectl label ... key-
                for obj in session.cache.list(kind, NAMESPACE):
                    live = await session.store.get(kind, obj["metadata"]["name"], NAMESPACE)
                    del live["metadata"]["labels"][label]
                    await session.store.update(kind, live)

            async def finished() -> bool:
                cert = session.cache.get(CERTIFICATION, NAME, NAMESPACE)
                return cert is not None and cond.is_terminal(cert)

            assert await session.engine.run_until_settled(until=finished, max_seconds=6 * 3600)
            [workflow] = session.cache.list(WORKFLOW, NAMESPACE)
            assert LABEL_CERTIFICATION not in workflow["metadata"]["labels"]

            report = await certification_report(session, NAME, NAMESPACE)
            assert report["result"] == RESULT_FAILED and report["totalNodes"] == 4
            [category] = report["categories"]
            assert category["jobs"] == 4 and {failure["name"] for failure in category["failedNodes"]} == {"gpu-node-02"}

            assert session.history.node("gpu-node-02")[0]["result"] == "failed"  # archived with its results

            async def opened() -> object:
                return session

            app = NvcreApp(opener=opened, live=True)  # type: ignore[arg-type]
            async with app.run_test(size=(160, 50)) as pilot:
                await pilot.pause(0.5)
                assert app.snapshot is not None
                [shown] = app.snapshot.views[NAME].categories
                assert shown.workflow is not None and shown.jobs and {f["name"] for f in shown.failed_nodes} == {"gpu-node-02"}
        finally:
            await session.close()
