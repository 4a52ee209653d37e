"""The package and its tests type-check: mypy (configured in pyproject.toml, with the pydantic plugin) reports no
error in nvcre_tui/, tests/ or bench/ (the benchmarks, which import the package's internals and break
silently when those change). A type error is a failing test here, so CI runs the checker the README's test command
runs."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_reports_no_errors_in_the_package_its_tests_or_benchmarks() -> None:
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(ROOT / ".mypy_cache"),
                                str(ROOT / "nvcre_tui"), str(ROOT / "tests"), str(ROOT / "bench")])
    assert status == 0, f"mypy found errors:\n{out}{err}"
    assert "Success: no issues found" in out
