"""The least timeoutPerJob nvcre names for DCGM level 4 covers what a healthy run takes: planning and the simulator
read one phase table (engine/dcgm_time.py). A walkthrough certified with the 51m nvcre suggested (the test_duration
parameters plus 11 minutes) and every healthy node failed Timeout after the simulator's 55m45s run."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nvcre_tui.engine import dcgm_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import RUN_START, check_certification
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.units import parse_duration
from tests.certifications import on_every_gpu_node

NAMESPACE = "default"
CERT = on_every_gpu_node("{domain: diagnostics, variant: dcgm-level4, options: OPTIONS}")


def _least() -> str:
    """The least timeoutPerJob nvcre names when refusing a shorter one."""
    cert = certification_from_text("c.yaml", CERT.replace("OPTIONS", "{timeoutPerJob: 45m}"), default_catalog())
    with pytest.raises(InputError) as caught:
        check_certification(cert, default_catalog(), "c.yaml")
    found = re.search(r"give timeoutPerJob at least (\S+)", str(caught.value))
    assert found, str(caught.value)
    return found.group(1)


def _level4_args() -> list[str]:
    entry = default_catalog().find("diagnostics", "dcgm-level4")
    assert entry is not None
    template: Any = entry.template
    return [str(a) for a in template["framework"]["exec"]["args"]]


def test_the_least_timeout_is_the_modelled_run_and_its_margin_after_the_pod_start() -> None:
    runs = dcgm_time.run_seconds(_level4_args())
    assert runs > 2400 + 600  # the 40 minutes of test_duration parameters and the plugins they do not time
    assert parse_duration(_least()) == RUN_START + dcgm_time.with_margin(runs) >= RUN_START + runs * (1 + dcgm_time.MARGIN)


def test_the_catalog_default_timeout_is_above_the_least() -> None:
    entry = default_catalog().find("diagnostics", "dcgm-level4")
    assert entry is not None
    assert parse_duration(entry.time_budget) > parse_duration(_least())


async def test_a_healthy_fleet_passes_level4_with_the_least_timeout_nvcre_names() -> None:
    least = _least()
    scenario = Scenario.model_validate({"name": "dcgm", "seed": 3, "nodes": [{"count": 2, "cliques": 1}], "faults": []})
    session = await SimSession.open(scenario, None, history=None)
    try:
        cert: dict[str, Any] = certification_from_text("c.yaml", CERT.replace("OPTIONS", f"{{timeoutPerJob: {least}}}"),
                                                       default_catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)

        async def done() -> bool:
            got = session.cache.get(CERTIFICATION, "t", NAMESPACE)
            return got is not None and cond.is_terminal(got)

        assert session.engine is not None
        assert await session.engine.run_until_settled(until=done, max_seconds=6 * 3600)
        status = (session.cache.get(CERTIFICATION, "t", NAMESPACE) or {})["status"]
        assert [c.get("status") for c in status.get("categoryStatuses") or []] == ["Succeeded"], status
    finally:
        await session.close()
