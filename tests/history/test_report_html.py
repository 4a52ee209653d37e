"""`nvcre certification report NAME -o html`: one self-contained file, checked by parsing it (and by a
headless Chromium when one is installed)."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.report.html import render_html
from tests.history.helpers import fleet, loopback

CHROMIUM = Path("/usr/bin/chromium")


class Page(HTMLParser):
    """Every start tag with its attributes, the text, and which elements the text sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.open: list[str] = []
        self.text_in: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "br", "rect", "line", "polyline", "input", "img"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open and self.open.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for tag in set(self.open):
            self.text_in.setdefault(tag, []).append(data)

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)

    def all_text(self) -> str:
        return "".join(self.text)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def self_contained(page: Page) -> None:
    """No script, no external reference of any kind."""
    assert page.count("script") == 0 and page.count("link") == 0 and page.count("img") == 0
    for _, attrs in page.tags:
        for name, value in attrs.items():
            if name in ("src", "href") or (value and ("http://" in value or "https://" in value) and name != "xmlns"):
                raise AssertionError(f"external reference {name}={value!r}")


@pytest.fixture(scope="module")
def html_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("html")
    scenario = folder / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    cert = folder / "cert.yaml"
    cert.write_text(yaml.safe_dump(loopback("html-cert")))
    common = ["--sim", "--scenario", str(scenario), "--state", str(folder / "state.json"), "--history", str(folder / "h.db")]
    assert main(["certification", "run", *common, "--cert-file", str(cert), "--wait"]) == 1
    out = folder / "report.html"
    code = subprocess.run([str(Path(sys.executable).parent / "nvcre"), "certification", "report", "html-cert", *common, "-o", "html"],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    assert code.returncode == 1, code.stderr  # FAILED: gpu-node-02's slow GPU
    out.write_text(code.stdout, encoding="utf-8")
    return code.stdout


def test_the_html_report_has_every_section_curves_histogram_and_evidence(html_report: str) -> None:
    page = parse(html_report)
    self_contained(page)
    assert page.count("html") == 1 and page.count("style") == 1
    headings = page.text_in.get("h2", [])
    assert "Summary" in headings and "Categories" in headings and "Failed nodes" in headings
    assert any("communication/nccl-loopback" in t for t in page.text_in.get("h3", []))
    assert page.count("svg") == 2  # the size curves and the per-node bars of the one category
    assert page.count("polyline") == 4  # 4 nodes ≤ MAX_CURVES: one curve each
    text = page.all_text()
    assert "✗ FAILED" in text and "✗ gpu-node-02" in text
    assert "busBandwidthGBps: measured" in text and "value >= 300" in text
    titles = page.text_in.get("title", [])
    assert {"gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04"} <= set(titles)
    assert "✗ " in "".join(page.text_in.get("text", []))  # the low bar is marked by a glyph, not only red


def test_all_text_is_escaped() -> None:
    evil = "<script>alert('x')</script>&<b>"
    report: dict[str, Any] = {
        "name": evil, "namespace": evil, "result": "FAILED", "passedCategories": 0, "totalCategories": 1, "totalNodes": 1,
        "categories": [{"domain": "communication", "variant": evil, "status": "Failed", "failureReason": evil,
                        "thresholds": {"busBandwidthGBps": evil}, "groupBandwidth": [{"groupName": evil, "nodes": [evil], "busBW": 1.0, "belowMin": True, "failed": True}],
                        "diagnose": {"stage": evil, "round": 1, "faultyNodes": [evil], "notes": [{"message": evil}]}}],
        "failedNodes": [evil], "failedNodeDetails": [{"name": evil, "failures": [{"category": evil, "reason": evil, "message": evil,
                                                                                 "evidence": [{"metric": evil, "measured": 1.0, "expression": evil, "passed": False}]}]}],
        "excludedNodes": [{"name": evil, "reason": evil, "message": evil}],
    }
    html = render_html(report, {f"communication/{evil}": {evil: {8: 1.0, 16: 2.0}}}, {})
    page = parse(html)
    self_contained(page)
    assert page.count("b") == 0
    assert page.all_text().count(evil) >= 10  # the text survives, as text


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed: the headless-browser check cannot run here")
def test_headless_chromium_renders_it(html_report: str, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(html_report, encoding="utf-8")
    dom = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert "Certification report: html-cert" in dom.stdout and dom.stdout.count("<svg") == 2


def test_diagnose_verdicts_are_listed_with_their_glyphs() -> None:
    report: dict[str, Any] = {
        "name": "burn-in-diagnose", "result": "FAILED", "passedCategories": 0, "totalCategories": 1, "totalNodes": 8,
        "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Failed",
                        "diagnose": {"stage": "confirmation", "round": 4, "tests": [{}, {}, {}],
                                     "faultyNodes": ["gpu-node-07"], "inconclusiveNodes": ["gpu-node-12"],
                                     "healthyNodes": ["gpu-node-01", "gpu-node-02"], "suspectNodes": []}}],
        "failedNodeDetails": [],
    }
    page = parse(render_html(report))
    cells = page.text_in.get("td", [])
    assert "✗ faulty" in cells and "gpu-node-07" in cells and "? inconclusive" in cells and "gpu-node-12" in cells
    assert "gpu-node-01, gpu-node-02" in cells and "stage confirmation, round 4, 3 tests" in page.all_text()
    assert "Diagnose verdicts" in page.text_in.get("h4", [])
