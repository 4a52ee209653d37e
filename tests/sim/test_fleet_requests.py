"""The fleet registers every ValidationRequest of its scenario; a store's refusal of one is a FleetError naming it,
never a silent stop that drops it and every request after it. A cluster without the CRD has no NVSentinel."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.sim.fleet import FleetError, SimulatedFleet
from nvcre_tui.engine.store import MemoryStore
from nvcre_tui.engine.store.errors import Invalid, NotFound, ServerError
from nvcre_tui.engine.store.protocol import VALIDATION_REQUEST, ListResult, ResourceKind
from nvcre_tui.engine.store.readonly import ReadOnlyStore

from .helpers import scenario

Obj = dict[str, Any]


def _request(name: str, node: str, phase: str = "Running") -> Obj:
    return {"metadata": {"name": name}, "spec": {"nodes": [{"name": node}]},
            "status": {"phase": phase, "testGroups": [{"name": "g", "provider": "nvcre-provider",
                                                       "attempts": [{"objectName": f"{name}-cert", "failedNodes": [node]}]}]}}


REQUESTS = scenario(validationRequests=[_request("vr-a", "gpu-node-01"), _request("vr-b", "gpu-node-02"), _request("vr-c", "gpu-node-03", "Failed")])


class Refusing(MemoryStore):
    """A store whose API server refuses one request (a CRD schema stricter than ours), or serves no such kind."""

    def __init__(self, clock: ManualClock, refuse: str = "", status: bool = False, served: bool = True) -> None:
        super().__init__(clock)
        self.refuse, self.status, self.served = refuse, status, served

    async def list(self, kind: ResourceKind, *args: Any, **kwargs: Any) -> ListResult:
        if kind == VALIDATION_REQUEST and not self.served:
            raise NotFound.about(kind, None, None, "the server could not find the requested resource")
        return await super().list(kind, *args, **kwargs)

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        if kind == VALIDATION_REQUEST and obj["metadata"]["name"] == self.refuse and not self.status:
            raise Invalid.about(kind, self.refuse, None, "spec.nodes[0].name: Invalid value")
        return await super().create(kind, obj)

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        if kind == VALIDATION_REQUEST and obj["metadata"]["name"] == self.refuse and self.status:
            raise Invalid.about(kind, self.refuse, None, "status.phase: Unsupported value")
        return await super().update_status(kind, obj)


async def _names(store: MemoryStore) -> list[str]:
    return [r["metadata"]["name"] for r in (await store.list(VALIDATION_REQUEST)).items]


async def test_every_request_is_registered_with_its_status_once() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, REQUESTS).ensure_nodes()
    stored = {r["metadata"]["name"]: r for r in (await store.list(VALIDATION_REQUEST)).items}
    assert sorted(stored) == ["vr-a", "vr-b", "vr-c"]
    assert stored["vr-c"]["status"]["phase"] == "Failed" and stored["vr-c"]["spec"] == {"nodes": [{"name": "gpu-node-03"}]}
    again = SimulatedFleet(store, clock, REQUESTS)
    await again.ensure_nodes()  # a restarted engine: the requests are there, nothing written
    assert {r["metadata"]["name"]: r for r in (await store.list(VALIDATION_REQUEST)).items} == stored


async def test_a_refused_request_is_a_fleet_error_naming_it_not_a_silent_stop() -> None:
    clock = ManualClock()
    store = Refusing(clock, refuse="vr-b")
    with pytest.raises(FleetError, match=r"ValidationRequest vr-b \(validationRequests\[1\]\): .*spec.nodes\[0\].name: Invalid value"):
        await SimulatedFleet(store, clock, REQUESTS).ensure_nodes()
    assert await _names(store) == ["vr-a"]


async def test_a_refused_status_is_a_fleet_error_too() -> None:
    clock = ManualClock()
    store = Refusing(clock, refuse="vr-a", status=True)
    with pytest.raises(FleetError, match=r"the status of the scenario's ValidationRequest vr-a \(validationRequests\[0\]\)"):
        await SimulatedFleet(store, clock, REQUESTS).ensure_nodes()


async def test_a_cluster_without_the_crd_has_no_nvsentinel_and_that_is_no_error() -> None:
    clock = ManualClock()
    store = Refusing(clock, served=False)
    await SimulatedFleet(store, clock, REQUESTS).ensure_nodes()
    store.served = True
    assert await _names(store) == []


async def test_an_identity_that_may_not_create_them_is_fine_once_they_are_there() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, REQUESTS).ensure_nodes()
    await SimulatedFleet(ReadOnlyStore(store), clock, REQUESTS).ensure_nodes()  # a viewer's fleet: nothing to write


async def test_an_identity_that_may_not_create_a_missing_one_is_told_so() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, scenario()).ensure_nodes()  # the Nodes, by someone who may write them
    with pytest.raises(FleetError, match=r"ValidationRequest vr-a \(validationRequests\[0\]\): .*may create validationrequests"):
        await SimulatedFleet(ReadOnlyStore(store), clock, REQUESTS).ensure_nodes()


async def test_a_transient_store_error_is_raised_as_it_is() -> None:
    class Flaky(MemoryStore):
        async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
            if kind == VALIDATION_REQUEST:
                raise ServerError.about(kind, obj["metadata"]["name"], None, "etcdserver: request timed out")
            return await super().create(kind, obj)

    clock = ManualClock()
    with pytest.raises(ServerError):
        await SimulatedFleet(Flaky(clock), clock, REQUESTS).ensure_nodes()

