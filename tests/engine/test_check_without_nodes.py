"""What `run` checks for a user who may not read Nodes (planning.render.check_category) is what render_category would
refuse on any nodes: its options, resolved without the nodes' GPU shape, agree with those resolved on every shape
but for the shape's own options, which stay unset where the shape would decide them."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.resolve import SHAPE_OPTIONS, resolve_options

USERS = [CategoryOptions(), CategoryOptions.model_validate({"gpusPerNode": 2, "maxBytes": "1G", "maxSteps": -1, "onFailure": "diagnose"}),
         CategoryOptions.model_validate({"testScale": "intra-node", "enableMNNVL": False, "timeoutPerJob": "10m"})]


@pytest.mark.parametrize("user", USERS)
def test_options_without_the_nodes_are_those_of_every_shape_but_the_shapes_own(user: CategoryOptions) -> None:
    catalog = default_catalog()
    defaults = catalog.gpu_defaults
    shapes = [("onprem", arch) for arch in [*defaults.architectures, "unknown"]]
    shapes += [(platform, arch) for platform, corrections in defaults.platforms.items() for arch in corrections]
    for entry in catalog.entries.values():
        if user.test_scale and user.test_scale not in entry.test_scales:
            continue
        unknown = resolve_options(catalog, entry, user, None, None)
        for platform, arch in shapes:
            known = resolve_options(catalog, entry, user, platform, arch)
            for name in CategoryOptions.model_fields:
                mine, theirs = getattr(unknown, name), getattr(known, name)
                if name in SHAPE_OPTIONS:
                    assert mine in (None, theirs), (entry.key, platform, arch, name)
                    assert (mine is None) == (getattr(user, name) is None and getattr(entry.defaults, name, None) is None), (entry.key, name)
                else:
                    assert mine == theirs, (entry.key, platform, arch, name)


async def test_the_engine_fails_at_once_what_no_node_would_make_right() -> None:
    """render_category checks what needs no Node first: a category the engine cannot run on any nodes, whose target
    matches none yet, waited five minutes for nodes and then failed 'no eligible nodes match', not for its fault."""
    from datetime import timedelta

    from nvcre_tui.engine.api.bodies import certification_status
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.engine import Engine
    from nvcre_tui.engine.runners.simulated import SimulatedRunner
    from nvcre_tui.engine.session import SIM_START
    from nvcre_tui.engine.sim.fleet import SimulatedFleet
    from nvcre_tui.engine.sim.scenario import load_scenario
    from nvcre_tui.engine.store import CERTIFICATION, MemoryStore
    from tests.engine.test_certifications_share_nodes import CASE, certification
    from tests.scenarios.harness import NAMESPACE, catalog

    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    body = certification("wrong", ["gpu-node-99"])
    body["spec"]["categories"][0]["options"] = {"testScale": "intra-node", "onFailure": "diagnose"}
    await store.create(CERTIFICATION, body)

    async def failed() -> bool:
        return cond.is_terminal(await store.get(CERTIFICATION, "wrong", NAMESPACE))

    assert await engine.run_until_settled(until=failed, max_seconds=60)
    [status] = certification_status(await store.get(CERTIFICATION, "wrong", NAMESPACE))["categoryStatuses"]
    assert (status["status"], status["reason"]) == ("Failed", "WorkflowValidationFailed"), status
    assert status["message"].startswith("onFailure: diagnose needs testScale intra-rack or full-scale"), status
    assert clock.now() - SIM_START < timedelta(minutes=1)
