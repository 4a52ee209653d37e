"""Contract, part 2: watches, deletion (finalizers, owner cascade), events, isolation and the read-only view."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.store import CERTIFICATION, EVENT, JOB, POD, WORKFLOW, Conflict, Forbidden, Gone, NotFound, ReadOnlyStore, ResourceStore

from .fixtures import CONTROLLED_CLOCK, GARBAGE_COLLECTOR, SMALL_HISTORY, names, needs, next_event, obj, pod, relabel, take


class LifecycleContract:
    """Changes over time."""

    # ----- watch ---------------------------------------------------------------------------------------

    async def test_watch_from_resource_version_replays_later_changes(self, store: ResourceStore) -> None:
        await store.create(WORKFLOW, obj("before"))
        start = (await store.list(WORKFLOW)).resource_version
        created = await store.create(WORKFLOW, obj("after"))
        await store.update(WORKFLOW, dict(created, spec={"size": 2}))
        await store.delete(WORKFLOW, "before", "default")
        watch = store.watch(WORKFLOW, resource_version=start)
        assert await take(watch, 3) == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before")]
        await watch.aclose()

    async def test_watch_without_resource_version_lists_then_follows(self, store: ResourceStore) -> None:
        await store.create(WORKFLOW, obj("existing"))
        await store.create(JOB, obj("other-kind"))
        watch = store.watch(WORKFLOW, "default")
        assert await take(watch, 1) == [("ADDED", "existing")]
        created = await store.create(WORKFLOW, obj("live"))
        await store.create(WORKFLOW, obj("elsewhere", namespace="other"))
        await store.patch_status(WORKFLOW, "live", "default", {"phase": "Running"})
        await store.delete(WORKFLOW, "live", "default")
        events = [await next_event(watch) for _ in range(3)]
        assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
            ("ADDED", "live"), ("MODIFIED", "live"), ("DELETED", "live")]
        assert events[0].object["metadata"]["uid"] == created["metadata"]["uid"]
        assert events[1].object["status"] == {"phase": "Running"}
        versions = [int(e.object["metadata"]["resourceVersion"]) for e in events]
        assert versions == sorted(versions)
        await watch.aclose()

    async def test_concurrent_watchers_each_see_every_event(self, store: ResourceStore) -> None:
        start = (await store.list(WORKFLOW)).resource_version
        first, second = (store.watch(WORKFLOW, resource_version=start) for _ in range(2))
        for name in ("a", "b", "c"):
            await store.create(WORKFLOW, obj(name))
        expected = [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]
        assert await take(first, 3) == expected
        assert await take(second, 3) == expected

    async def test_watch_label_selector_sees_objects_enter_and_leave(self, store: ResourceStore) -> None:
        start = (await store.list(WORKFLOW)).resource_version
        created = await store.create(WORKFLOW, obj("wf", labels={"tier": "cpu"}))
        moved_in = await store.update(WORKFLOW, relabel(created, {"tier": "gpu"}))
        await store.update(WORKFLOW, relabel(moved_in, {}))
        await store.create(WORKFLOW, obj("cpu-only", labels={"tier": "cpu"}))
        await store.delete(WORKFLOW, "cpu-only", "default")
        await store.create(WORKFLOW, obj("marker", labels={"tier": "gpu"}))
        watch = store.watch(WORKFLOW, label_selector="tier=gpu", resource_version=start)
        assert await take(watch, 3) == [("ADDED", "wf"), ("DELETED", "wf"), ("ADDED", "marker")]

    async def test_watch_from_too_old_resource_version_is_gone(self, store: ResourceStore, history_limit: int,
                                                               capabilities: frozenset[str]) -> None:
        needs(capabilities, SMALL_HISTORY)
        start = (await store.list(WORKFLOW)).resource_version
        for index in range(history_limit + 3):
            await store.create(WORKFLOW, obj(f"wf-{index}"))
        with pytest.raises(Gone, match="Workflow"):
            await next_event(store.watch(WORKFLOW, resource_version=start))
        recent = (await store.list(WORKFLOW)).resource_version
        await store.create(WORKFLOW, obj("late"))
        assert await take(store.watch(WORKFLOW, resource_version=recent), 1) == [("ADDED", "late")]

    # ----- deletion --------------------------------------------------------------------------------------

    async def test_finalizers_delay_deletion(self, store: ResourceStore, clock: ManualClock,
                                             capabilities: frozenset[str]) -> None:
        needs(capabilities, CONTROLLED_CLOCK)
        await store.create(WORKFLOW, obj("wf", finalizers=["nvcre.nvidia.com/workflow-finalizer"]))
        start = (await store.list(WORKFLOW)).resource_version
        clock.advance(30)
        await store.delete(WORKFLOW, "wf", "default")
        held = await store.get(WORKFLOW, "wf", "default")
        assert held["metadata"]["deletionTimestamp"] == format_time(clock.now())
        await store.delete(WORKFLOW, "wf", "default")  # again: still only marked
        released = dict(held, metadata={**held["metadata"], "finalizers": []})
        await store.update(WORKFLOW, released)
        with pytest.raises(NotFound):
            await store.get(WORKFLOW, "wf", "default")
        watch = store.watch(WORKFLOW, resource_version=start)
        assert await take(watch, 2) == [("MODIFIED", "wf"), ("DELETED", "wf")]

    async def test_delete_cascades_through_owner_references(self, store: ResourceStore,
                                                            capabilities: frozenset[str]) -> None:
        needs(capabilities, GARBAGE_COLLECTOR)
        cert = await store.create(CERTIFICATION, obj("cert"))
        workflow = await store.create(WORKFLOW, obj("cert-wf", owners=[cert]))
        job = await store.create(JOB, obj("cert-wf-job", owners=[workflow]))
        await store.create(POD, pod("cert-wf-job-pod", owners=[job]))
        await store.create(JOB, obj("unrelated"))
        await store.delete(CERTIFICATION, "cert", "default")
        for kind in (CERTIFICATION, WORKFLOW, POD):
            assert (await store.list(kind)).items == []
        assert names((await store.list(JOB)).items) == ["unrelated"]

    async def test_cascade_waits_for_finalizers_and_other_owners(self, store: ResourceStore,
                                                                 capabilities: frozenset[str]) -> None:
        needs(capabilities, GARBAGE_COLLECTOR)
        cert = await store.create(CERTIFICATION, obj("cert"))
        other = await store.create(CERTIFICATION, obj("other"))
        held = await store.create(WORKFLOW, obj("held", owners=[cert], finalizers=["keep"]))
        await store.create(JOB, obj("held-job", owners=[held]))
        await store.create(JOB, obj("shared", owners=[cert, other]))
        await store.delete(CERTIFICATION, "cert", "default")
        assert (await store.get(WORKFLOW, "held", "default"))["metadata"].get("deletionTimestamp")
        assert names((await store.list(JOB)).items) == ["held-job", "shared"]
        current = await store.get(WORKFLOW, "held", "default")
        await store.update(WORKFLOW, dict(current, metadata={**current["metadata"], "finalizers": []}))
        assert names((await store.list(JOB)).items) == ["shared"]

    async def test_delete_uid_precondition(self, store: ResourceStore) -> None:
        await store.create(WORKFLOW, obj("wf"))
        with pytest.raises(Conflict, match="uid"):
            await store.delete(WORKFLOW, "wf", "default", uid="not-the-uid")
        with pytest.raises(NotFound):
            await store.delete(WORKFLOW, "ghost", "default")
        assert names((await store.list(WORKFLOW)).items) == ["wf"]

    # ----- events ----------------------------------------------------------------------------------------

    async def test_events_are_deduplicated_with_a_count(self, store: ResourceStore, clock: ManualClock) -> None:
        workflow = await store.create(WORKFLOW, obj("wf"))
        first = await store.record_event(workflow, "Normal", "JobCreated", "Iteration 1/1: 2 groups running")
        clock.advance(15)
        again = await store.record_event(workflow, "Normal", "JobCreated", "Iteration 1/1: 2 groups running")
        await store.record_event(workflow, "Warning", "JobTimedOut", "Job exceeded timeoutPerJob")
        assert again["metadata"]["name"] == first["metadata"]["name"]
        assert (first["count"], again["count"]) == (1, 2)
        assert again["firstTimestamp"] == first["firstTimestamp"]
        assert again["lastTimestamp"] == format_time(clock.now()) != first["lastTimestamp"]
        events = (await store.list(EVENT, "default")).items
        assert sorted((e["type"], e["reason"], e["count"]) for e in events) == [
            ("Normal", "JobCreated", 2), ("Warning", "JobTimedOut", 1)]
        assert {e["involvedObject"]["uid"] for e in events} == {workflow["metadata"]["uid"]}
        with pytest.raises(ValueError, match="Normal, Warning"):
            await store.record_event(workflow, "Info", "X", "y")

    # ----- isolation, read-only --------------------------------------------------------------------------

    async def test_callers_never_share_stored_state(self, store: ResourceStore) -> None:
        body = obj("wf", labels={"a": "1"}, spec={"nodes": ["n1"]})
        created = await store.create(WORKFLOW, body)
        start = created["metadata"]["resourceVersion"]
        await store.create(WORKFLOW, obj("marker"))
        body["spec"]["nodes"].append("from-input")
        created["spec"]["nodes"].append("from-create")
        (await store.get(WORKFLOW, "wf", "default"))["metadata"]["labels"]["a"] = "from-get"
        (await store.list(WORKFLOW, label_selector="a=1")).items[0]["spec"]["nodes"].clear()
        event = await next_event(store.watch(WORKFLOW, resource_version=str(int(start) - 1)))
        event.object["spec"]["nodes"].append("from-watch")
        stored = await store.get(WORKFLOW, "wf", "default")
        assert stored["spec"] == {"nodes": ["n1"]} and stored["metadata"]["labels"] == {"a": "1"}

    async def test_read_only_wrapper_refuses_every_write(self, store: ResourceStore) -> None:
        workflow = await store.create(WORKFLOW, obj("wf"))
        read_only = ReadOnlyStore(store)
        before = (await store.list(WORKFLOW)).items
        writes = [
            read_only.create(WORKFLOW, obj("new")),
            read_only.update(WORKFLOW, dict(workflow, spec={"size": 2})),
            read_only.update_status(WORKFLOW, dict(workflow, status={"phase": "x"})),
            read_only.patch_status(WORKFLOW, "wf", "default", {"phase": "x"}),
            read_only.delete(WORKFLOW, "wf", "default"),
            read_only.record_event(workflow, "Normal", "Reason", "message"),
        ]
        for write in writes:
            with pytest.raises(Forbidden, match=r"^read-only: \w+ Workflow default/(wf|new) refused$"):
                await write
        assert read_only.refused_writes == len(writes)
        assert (await read_only.get(WORKFLOW, "wf", "default")) == workflow
        assert (await read_only.list(WORKFLOW)).items == before
        assert await take(read_only.watch(WORKFLOW), 1) == [("ADDED", "wf")]
        assert (await store.list(EVENT)).items == []
