"""Every case in tests/cases/scenarios/ through the real engine: the report's digest equals expected.json.

NVCRE_UPDATE_GOLDEN=1 rewrites the expected files; review the diff, and let test_scenario_claims.py say
whether the new outcome is still the right one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.scenarios.harness import CASES as CASES_DIR
from tests.scenarios.harness import case_names, check_golden, digest, run_case

CASES = case_names()


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40, f"only {len(CASES)} scenario cases"


@pytest.mark.parametrize("case", CASES)
def test_report_digest_matches_golden(case: str) -> None:
    run = run_case(case)
    assert run.finished, f"{case}: the certification did not finish within the simulated-time limit"
    check_golden(case, digest(run.report))
    assert run.edited_in_cache == [], f"{case}: the engine edited shared cached objects in place: {run.edited_in_cache[:3]}"


@pytest.mark.parametrize(("case", "exit_code"), [("xid-mid-run-full-scale", 1), ("cordoned-before-run", 0), ("node-short-of-memory", 0)])
def test_the_cli_reports_what_the_harness_reports(case: str, exit_code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`nvcre certification run --sim --wait --results-file` on the same files gives the same digest."""
    folder, results = CASES_DIR / case, tmp_path / "report.json"
    code = main(["certification", "run", "--sim", "--scenario", str(folder / "scenario.yaml"), "--cert-file", str(folder / "cert.yaml"),
                 "--wait", "--state", str(tmp_path / "state.json"), "--results-file", str(results)])
    capsys.readouterr()
    assert code == exit_code
    assert digest(json.loads(results.read_text(encoding="utf-8"))) == digest(run_case(case).report)
