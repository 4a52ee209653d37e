"""Contract, part 1: create, get, list, selectors, update, status and optimistic concurrency."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.store import JOB, NODE, POD, WORKFLOW, AlreadyExists, Conflict, Invalid, NotFound, ResourceStore

from .fixtures import CONTROLLED_CLOCK, names, needs, obj, pod

LABELLED = {"a": {"tier": "gpu", "zone": "east"}, "b": {"tier": "gpu", "zone": "west"}, "c": {"tier": "cpu"}, "d": {}}
SELECTOR_CASES: list[tuple[Any, list[str]]] = [
    ("tier=gpu", ["a", "b"]),
    ("tier==gpu", ["a", "b"]),
    ("tier!=gpu", ["c", "d"]),
    ("zone in (east,north)", ["a"]),
    ("zone notin (east)", ["b", "c", "d"]),
    ("zone", ["a", "b"]),
    ("!zone", ["c", "d"]),
    ("tier=gpu,zone!=east", ["b"]),
    ("tier in (gpu, cpu), !zone", ["c"]),
    ("", ["a", "b", "c", "d"]),
    ({"matchLabels": {"tier": "gpu"}}, ["a", "b"]),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["west"]}]}, ["b"]),
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["west"]}]}, ["a", "c", "d"]),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, ["a", "b", "c"]),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, ["d"]),
    ({"matchLabels": {"tier": "gpu"}, "matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["west"]}]},
     ["a"]),
]


class ObjectsContract:
    """Objects in and out of a store."""

    # ----- create / get / list ------------------------------------------------------------------------

    async def test_create_sets_system_fields_and_drops_status(self, store: ResourceStore, clock: ManualClock,
                                                              capabilities: frozenset[str]) -> None:
        needs(capabilities, CONTROLLED_CLOCK)
        created = await store.create(WORKFLOW, obj("wf", status={"phase": "Done"}))
        metadata = created["metadata"]
        assert (created["apiVersion"], created["kind"]) == ("nvcre.nvidia.com/v1alpha1", "Workflow")
        assert metadata["uid"] and metadata["resourceVersion"].isdigit()
        assert metadata["generation"] == 1
        assert metadata["creationTimestamp"] == format_time(clock.now())
        assert "status" not in created
        assert await store.get(WORKFLOW, "wf", "default") == created

    async def test_each_write_gets_a_higher_resource_version(self, store: ResourceStore) -> None:
        first = await store.create(WORKFLOW, obj("one"))
        second = await store.create(WORKFLOW, obj("two"))
        patched = await store.patch_status(WORKFLOW, "one", "default", {"phase": "Running"})
        versions = [int(o["metadata"]["resourceVersion"]) for o in (first, second, patched)]
        assert versions == sorted(versions) and len(set(versions)) == 3
        assert first["metadata"]["uid"] != second["metadata"]["uid"]

    async def test_get_missing_raises_not_found_naming_the_object(self, store: ResourceStore) -> None:
        with pytest.raises(NotFound, match="Workflow default/ghost"):
            await store.get(WORKFLOW, "ghost", "default")

    async def test_namespaced_kind_needs_a_namespace(self, store: ResourceStore) -> None:
        with pytest.raises(Invalid, match="namespace"):
            await store.create(WORKFLOW, obj("wf", namespace=None))
        with pytest.raises(Invalid, match="namespace"):
            await store.get(WORKFLOW, "wf")

    async def test_list_sorts_and_filters_by_namespace(self, store: ResourceStore) -> None:
        for name, namespace in (("b", "team-1"), ("a", "team-2"), ("c", "team-1")):
            await store.create(JOB, obj(name, namespace))
        everything = await store.list(JOB)
        assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in everything.items] == [
            ("team-1", "b"), ("team-1", "c"), ("team-2", "a")]
        assert names((await store.list(JOB, "team-1")).items) == ["b", "c"]
        assert (await store.list(WORKFLOW)).items == []
        newest = max(int(o["metadata"]["resourceVersion"]) for o in everything.items)
        assert int(everything.resource_version) >= newest

    async def test_cluster_scoped_kind(self, store: ResourceStore) -> None:
        node = await store.create(NODE, obj("gpu-01", namespace=None, labels={"nvidia.com/gpu.present": "true"}, spec={"unschedulable": False}))
        assert "namespace" not in node["metadata"]
        assert (await store.get(NODE, "gpu-01"))["metadata"]["name"] == "gpu-01"
        assert names((await store.list(NODE, label_selector="nvidia.com/gpu.present=true")).items) == ["gpu-01"]

    @pytest.mark.parametrize(("selector", "expected"), SELECTOR_CASES, ids=[str(c[0]) for c in SELECTOR_CASES])
    async def test_label_selectors(self, store: ResourceStore, selector: Any, expected: list[str]) -> None:
        for name, labels in LABELLED.items():
            await store.create(WORKFLOW, obj(name, labels=labels))
        assert names((await store.list(WORKFLOW, "default", label_selector=selector)).items) == expected

    async def test_bad_label_selector_is_rejected_clearly(self, store: ResourceStore) -> None:
        with pytest.raises(ValueError, match=r"label selector 'zone in \(east'"):
            await store.list(WORKFLOW, label_selector="zone in (east")
        with pytest.raises(ValueError, match="operator 'Near'"):
            await store.list(WORKFLOW, label_selector={"matchExpressions": [{"key": "z", "operator": "Near"}]})

    async def test_field_selectors(self, store: ResourceStore) -> None:
        await store.create(POD, pod("p1", "gpu-01"))
        await store.create(POD, pod("p2", "gpu-02"))
        await store.create(POD, pod("p3"))
        assert names((await store.list(POD, field_selector="spec.nodeName=gpu-01")).items) == ["p1"]
        assert names((await store.list(POD, field_selector="spec.nodeName!=gpu-01")).items) == ["p2", "p3"]
        assert names((await store.list(POD, field_selector="metadata.name=p2,spec.nodeName=gpu-02")).items) == ["p2"]

    async def test_generate_name(self, store: ResourceStore) -> None:
        body = obj("")
        body["metadata"]["generateName"] = "run-"
        first, second = await store.create(WORKFLOW, body), await store.create(WORKFLOW, body)
        assert first["metadata"]["name"].startswith("run-") and second["metadata"]["name"].startswith("run-")
        assert first["metadata"]["name"] != second["metadata"]["name"]

    async def test_create_clash_raises_already_exists(self, store: ResourceStore) -> None:
        await store.create(WORKFLOW, obj("wf"))
        with pytest.raises(AlreadyExists, match="Workflow default/wf"):
            await store.create(WORKFLOW, obj("wf", spec={"size": 2}))
        await store.create(WORKFLOW, obj("wf", namespace="other"))  # same name elsewhere is another object
        assert (await store.get(WORKFLOW, "wf", "default"))["spec"] == {"size": 1}

    # ----- update / status / optimistic concurrency ----------------------------------------------------

    async def test_update_with_stale_or_missing_resource_version_conflicts(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        fresh = dict(created, spec={"size": 2})
        await store.update(WORKFLOW, fresh)
        with pytest.raises(Conflict, match="Workflow default/wf"):
            await store.update(WORKFLOW, dict(created, spec={"size": 3}))
        with pytest.raises(Conflict):
            await store.update_status(WORKFLOW, dict(created, status={"phase": "x"}))
        missing = obj("wf", spec={"size": 4})
        with pytest.raises(Conflict, match="resourceVersion"):
            await store.update(WORKFLOW, missing)
        assert (await store.get(WORKFLOW, "wf", "default"))["spec"] == {"size": 2}

    async def test_update_missing_object_raises_not_found(self, store: ResourceStore) -> None:
        with pytest.raises(NotFound):
            await store.update(WORKFLOW, dict(obj("ghost"), metadata={"name": "ghost", "namespace": "default",
                                                                         "resourceVersion": "1"}))

    async def test_update_ignores_status_and_bumps_generation_on_spec_change(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        with_status = await store.update_status(WORKFLOW, dict(created, status={"phase": "Running"}))
        changed = await store.update(WORKFLOW, dict(with_status, spec={"size": 5}, status={"phase": "Hacked"}))
        assert changed["status"] == {"phase": "Running"}
        assert changed["metadata"]["generation"] == 2
        relabelled = dict(changed, metadata={**changed["metadata"], "labels": {"x": "y"}})
        relabelled = await store.update(WORKFLOW, relabelled)
        assert relabelled["metadata"]["labels"] == {"x": "y"}
        assert relabelled["metadata"]["generation"] == 2  # metadata changes are not a new generation

    async def test_update_cannot_add_status(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        updated = await store.update(WORKFLOW, dict(created, spec={"size": 2}, status={"phase": "Forged"}))
        assert "status" not in updated
        assert "status" not in await store.get(WORKFLOW, "wf", "default")

    async def test_status_update_ignores_spec_and_keeps_generation(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        updated = await store.update_status(WORKFLOW, dict(created, spec={"size": 9}, status={"phase": "Running"}))
        assert updated["spec"] == {"size": 1}
        assert updated["status"] == {"phase": "Running"}
        assert updated["metadata"]["generation"] == 1
        assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])

    async def test_patch_status_merges(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        await store.update_status(WORKFLOW, dict(created, status={"phase": "Running", "groups": {"g1": "ok"},
                                                                  "note": "x", "list": [1, 2]}))
        patched = await store.patch_status(WORKFLOW, "wf", "default",
                                           {"groups": {"g2": "failed"}, "note": None, "list": [3]})
        assert patched["status"] == {"phase": "Running", "groups": {"g1": "ok", "g2": "failed"}, "list": [3]}
        with pytest.raises(Conflict):
            await store.patch_status(WORKFLOW, "wf", "default", {"phase": "Done"},
                                     resource_version=created["metadata"]["resourceVersion"])
        current = patched["metadata"]["resourceVersion"]
        done = await store.patch_status(WORKFLOW, "wf", "default", {"phase": "Done"}, resource_version=current)
        assert done["status"]["phase"] == "Done"

    async def test_unchanged_write_keeps_resource_version(self, store: ResourceStore) -> None:
        created = await store.create(WORKFLOW, obj("wf"))
        again = await store.update(WORKFLOW, created)
        assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
