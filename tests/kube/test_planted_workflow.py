"""A Workflow created before the engine under the name it gives a category's Workflow, owned by the Certification's uid
(copied by hand), was adopted as the engine's own with whatever spec it held: looser thresholds passed a node that
misses the certification's. Now a Workflow whose spec managedFields say someone other than nvcre wrote is refused as one
whose status a hand wrote, under its own reason: failed SpecWrittenByAnother (it was StatusWrittenByAnother, which
said a status was written) saying who edited its spec and which fields, run no further, and its category fails with
that message."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.vocabulary import FOREIGN_SPEC, RESULT_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.store import CERTIFICATION, EVENT, JOB, WORKFLOW
from tests.kube.cluster import case_certification, certification_over, simulated_on_cluster
from tests.scenarios.harness import CASES

from .test_engine_rbac import cluster  # noqa: F401 - cluster is a fixture

CASE = CASES / "slow-gpu-intra-node"  # gpu-node-03 measures about 241 GB/s against "value >= 400"
NAMESPACE = "default"


async def test_a_workflow_planted_under_the_engines_name_is_not_adopted(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    async with simulated_on_cluster(cluster, CASE, hand="kubectl-create") as (admin, hand, engine, _):
        # a Workflow the engine rendered, for its spec's shape
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))

        async def a_workflow() -> bool:
            return bool((await admin.list(WORKFLOW, NAMESPACE)).items)

        assert await engine.run_until_settled(until=a_workflow, max_seconds=600)
        [rendered] = (await admin.list(WORKFLOW, NAMESPACE)).items
        planted_cert = await admin.create(CERTIFICATION, {**case_certification(CASE, NAMESPACE), "metadata": {"name": "planted", "namespace": NAMESPACE}})
        name = "planted" + rendered["metadata"]["name"].removeprefix(CASE.name)
        loose = json.loads(json.dumps(rendered["spec"]).replace("value >= 400", "value >= 100"))
        assert loose != rendered["spec"]
        await hand.create(WORKFLOW, {"apiVersion": rendered["apiVersion"], "kind": "Workflow", "spec": loose, "metadata": {
            "name": name, "namespace": NAMESPACE, "labels": rendered["metadata"].get("labels") or {},
            "ownerReferences": [{"apiVersion": planted_cert["apiVersion"], "kind": "Certification", "name": "planted",
                                 "uid": planted_cert["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]}})
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, "planted", NAMESPACE), max_seconds=6 * 3600)
        await engine.stop()

        done = await admin.get(CERTIFICATION, "planted", NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED
        [category] = done["status"]["categoryStatuses"]
        assert (category["status"], category["reason"]) == ("Failed", FOREIGN_SPEC), category
        said = (f"Workflow {NAMESPACE}/{name}: its spec was written by kubectl-create, not rendered by nvcre (spec.jobTemplate, "
                "spec.orchestration, spec.validation): not a result nvcre measured; delete it and create it again")
        assert category["message"] == said, category["message"]
        planted = await admin.get(WORKFLOW, name, NAMESPACE)
        assert (cond.find(planted["status"]["conditions"], "Failed") or {}).get("reason") == FOREIGN_SPEC
        events = [e for e in (await admin.list(EVENT, NAMESPACE)).items if e["involvedObject"]["name"] == name and e.get("type") == "Warning"]
        assert [(e["reason"], e["message"]) for e in events] == [(FOREIGN_SPEC, said)], events
        # the report takes it for damaged, as a Workflow whose status a hand wrote, saying why
        code = await asyncio.to_thread(main, ["certification", "report", "planted", "--kubeconfig", cluster[1], "--history", str(tmp_path / "h.db")])
        out, err = capsys.readouterr()
        assert code == 1 and f"Workflow {name} is damaged and left out of the report: its spec was written by kubectl-create" in out + err
        assert not [job for job in (await admin.list(JOB, NAMESPACE)).items if job["metadata"]["name"].startswith("planted")]

