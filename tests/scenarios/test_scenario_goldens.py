"""Every case in tests/cases/scenarios/ through the real engine: the report's digest equals expected.json.

NVCRE_UPDATE_GOLDEN=1 rewrites the expected files; review the diff, and let test_scenario_claims.py say
whether the new outcome is still the right one.
"""

from __future__ import annotations

import pytest

from tests.scenarios.harness import case_names, check_golden, digest, run_case

CASES = case_names()


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40, f"only {len(CASES)} scenario cases"


@pytest.mark.parametrize("case", CASES)
def test_report_digest_matches_golden(case: str) -> None:
    run = run_case(case)
    assert run.finished, f"{case}: the certification did not finish within the simulated-time limit"
    check_golden(case, digest(run.report))
