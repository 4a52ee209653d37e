"""The HTML report says each category's runtime, each iteration's under it, as the text report does: its category
sections had none (only the summary's Runtime and Waited)."""

from __future__ import annotations

import re

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, MemoryStore
from tests.engine.test_certifications_share_nodes import CASE, certification
from tests.scenarios.harness import NAMESPACE, catalog


async def test_each_html_category_section_says_its_runtime_as_the_text_report() -> None:
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    engine = Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))
    body = certification("twice", ["gpu-node-01", "gpu-node-02"])
    body["spec"]["categories"][0]["options"]["repeatCount"] = 2
    body["spec"]["categories"].append({"domain": "communication", "variant": "nccl-loopback"})
    await store.create(CERTIFICATION, body)

    async def done() -> bool:
        return cond.is_terminal(await store.get(CERTIFICATION, "twice", NAMESPACE))

    assert await engine.run_until_settled(until=done, max_seconds=4 * 3600)
    report = build_report(await store.get(CERTIFICATION, "twice", NAMESPACE), (await store.list(WORKFLOW, NAMESPACE)).items,
                          (await store.list(JOB, NAMESPACE)).items)
    text, html = render_text(report), render_html(report)
    runtimes = re.findall(r"│ Runtime: +(.+)", text)
    iterations = re.findall(r"│   (. #\d .+)", text)
    assert len(runtimes) == 2 and runtimes[0].endswith("(across 2 iterations)") and len(iterations) == 2, text
    sections = re.findall(r'<section class="category">(.*?)</section>', html)
    assert len(sections) == 2, html
    for section, runtime in zip(sections, runtimes, strict=True):
        assert f"<p>Runtime: {runtime}</p>" in section, section
    assert "<ul>" + "".join(f"<li>{line}</li>" for line in iterations) + "</ul>" in sections[0], sections[0]
    assert "<li>" not in sections[1]  # ran once: no list
