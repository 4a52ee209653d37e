"""Every fixture parses to exactly its reviewed expected JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.parsers.golden import UPDATE, expected_path, inputs, outcome, same, source_path


@pytest.mark.parametrize("path", inputs(), ids=lambda path: path.name)
def test_fixture_matches_expected(path: Path) -> None:
    actual = outcome(path)
    target = expected_path(path)
    if UPDATE:
        target.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert target.exists(), f"no {target.name}: run with NVCRE_UPDATE_GOLDEN=1 and review it"
    problems = same(actual, json.loads(target.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems[:20])


def test_every_kind_has_a_failing_and_a_passing_fixture() -> None:
    """The golden set covers both verdicts for each parser, not only happy paths."""
    by_kind: dict[str, set[str]] = {}
    for path in inputs():
        data = json.loads(expected_path(path).read_text(encoding="utf-8"))
        state = "error" if "error" in data else "failed" if data["result"].get("failure") else "ok"
        by_kind.setdefault(path.name.split("_", 1)[0], set()).add(state)
    assert by_kind["nccl"] >= {"ok", "failed", "error"}
    assert by_kind["dcgm"] >= {"ok", "failed", "error"}
    assert by_kind["training"] >= {"ok", "error"}


def test_every_real_sample_names_its_source() -> None:
    """A fixture cut from real output (`<kind>_real_<case>`) says where it came from and what a person reads in it."""
    real = [path for path in inputs() if path.name.split("_", 2)[1:2] == ["real"]]
    assert real, "no real samples"
    for path in real:
        source = source_path(path)
        assert source.exists(), f"{path.name}: no {source.name}"
        url, *reading = source.read_text(encoding="utf-8").splitlines()
        assert url.startswith("https://") and " " not in url, f"{source.name}: first line is not a URL: {url!r}"
        assert any(line.strip() for line in reading), f"{source.name}: says nothing of what a person reads"
