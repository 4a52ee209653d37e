"""The console's read model (the informer's snapshots) leaves damaged objects out and names them: the screens never
meet one; each object is validated once, not on every snapshot; a Certification whose spec the engine refused
(InvalidSpec) is still shown, as the dashboard shows its failure."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import nvcre_tui.engine.api.damage as damage_module
from nvcre_tui.engine.api.damage import DamagedObject, damaged_object, unshowable_object
from nvcre_tui.engine.informer import Informer
from nvcre_tui.engine.session import Session
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW, ResourceKind
from nvcre_tui.engine.views.certifications import certification_rows
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot

from .harness import certification_body, reopen

ALL_REDUCE = "burn-in-communication-nccl-all-reduce"
SLOW_JOB = f"{ALL_REDUCE}-group-6-iter-1"
LOOPBACK = "burn-in-communication-nccl-loopback"
DAMAGED = (DamagedObject("Workflow", "default", LOOPBACK, "status: must be a mapping, got 'x'"),
           DamagedObject("Job", "default", SLOW_JOB, "status.failedNodes[0]: must be a mapping, got 5"))


async def write_status(session: Session, kind: ResourceKind, name: str, status: Any) -> None:
    """Another client's write of a status of the wrong type (the store checks no status), seen by the cache at once."""
    stored = await session.store.get(kind, name, "default")
    session.cache.observe(kind, await session.store.update_status(kind, {**stored, "status": status}))


async def damaged_session(state: Path) -> Session:
    """The finished burn-in with gpu-node-07's Job and the loopback Workflow damaged."""
    session = await reopen(state)
    await write_status(session, JOB, SLOW_JOB, {"failedNodes": [5]})
    await write_status(session, WORKFLOW, LOOPBACK, "x")
    return session


def names(objects: list[dict[str, Any]]) -> set[str]:
    return {obj["metadata"]["name"] for obj in objects}


async def test_the_informer_leaves_damaged_objects_out_of_its_snapshots_and_names_them(finished_intra_node: Path) -> None:
    informer = Informer((await damaged_session(finished_intra_node)).cache, "default")
    await informer.start()
    snapshot = informer.snapshot()
    assert snapshot.damaged == DAMAGED
    assert SLOW_JOB not in names(snapshot.jobs) and LOOPBACK not in names(snapshot.workflows)
    view = snapshot.views["burn-in"]
    by_key = {category.key: category for category in view.categories}
    assert by_key["communication/nccl-loopback"].workflow is None  # as before the Workflow was created
    all_reduce = by_key["communication/nccl-all-reduce"]
    assert all_reduce.workflow is not None and SLOW_JOB not in names(all_reduce.jobs) and len(all_reduce.jobs) == 31
    assert snapshot.jobs_of(ALL_REDUCE) == all_reduce.jobs and snapshot.workflows_of("burn-in") == [all_reduce.workflow]
    # What the dashboard, the map, the wall and the failures pane compute from it does not fail.
    assert len(node_states(snapshot)) == 32 and len(node_states(snapshot, "burn-in")) == 32
    assert [row.name for row in certification_rows(snapshot, datetime(2026, 1, 2, tzinfo=timezone.utc))] == ["burn-in"]
    failure_rows(snapshot, "burn-in")


async def test_snapshot_read_leaves_them_out_too(finished_intra_node: Path) -> None:
    snapshot = await Snapshot.read((await damaged_session(finished_intra_node)).store, "default")
    assert snapshot.damaged == DAMAGED
    assert SLOW_JOB not in names(snapshot.jobs) and LOOPBACK not in names(snapshot.workflows)
    assert node_states(snapshot, "burn-in")


async def test_each_object_is_validated_once_not_on_every_snapshot(finished_intra_node: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = await damaged_session(finished_intra_node)
    checked: list[str] = []
    shown = damage_module.unshowable_object

    def counted(kind: str, item: Any) -> str | None:
        checked.append(item["metadata"]["name"])
        return shown(kind, item)

    monkeypatch.setattr(damage_module, "unshowable_object", counted)
    informer = Informer(session.cache, "default")
    await informer.start()
    informer.snapshot().views  # noqa: B018 (the join checks the objects it reads: the same ones, already checked)
    first = len(checked)
    assert first == len(set(checked)) > 60  # the certification, 2 Workflows, 63 Jobs, their runs: once each
    informer.snapshot().views  # noqa: B018
    assert len(checked) == first  # nothing changed: nothing validated again
    await write_status(session, JOB, SLOW_JOB, {"failedNodes": [6]})
    snapshot = informer.snapshot()
    snapshot.views  # noqa: B018
    assert checked[first:] == [SLOW_JOB]  # only the object that changed
    assert snapshot.damaged[-1].problem == "status.failedNodes[0]: must be a mapping, got 6"


def test_a_certification_spec_the_engine_judges_is_shown_but_not_one_a_viewer_cannot_read() -> None:
    cert = certification_body()
    assert unshowable_object("Certification", cert) is None
    no_categories = copy.deepcopy(cert)
    del no_categories["spec"]["categories"]  # the engine fails it as InvalidSpec; the dashboard shows that
    assert unshowable_object("Certification", no_categories) is None
    assert damaged_object("Certification", no_categories) == "spec.categories: required field is missing"  # the report's rule
    unknown = copy.deepcopy(cert)
    unknown["spec"]["surprise"] = 1
    assert unshowable_object("Certification", unknown) is None
    for spec, problem in ((5, "spec: must be a mapping, got 5"), ({"categories": 5}, "spec.categories: must be a list, got 5"),
                          ({"categories": [5]}, "spec.categories[0]: must be a mapping, got 5")):
        assert unshowable_object("Certification", {**cert, "spec": spec}) == problem
    assert unshowable_object("Certification", {**cert, "status": "x"}) == "status: must be a mapping, got 'x'"
    assert unshowable_object("Node", {"metadata": {"name": "n"}, "status": "x"}) is None  # no nvcre model: not judged here

