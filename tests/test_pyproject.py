"""pyproject.toml's license metadata in the form current setuptools reads without a deprecation warning (PEP 639): an
SPDX expression and the license files, with a setuptools floor that reads them (77; a fresh machine's build installs
the latest setuptools within it)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LICENSE_EXPRESSION_SETUPTOOLS = (77, 0, 3)  # the first setuptools reading both, past 77.0.0's early fixes


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_expression_not_the_deprecated_table() -> None:
    assert pyproject()["project"]["license"] == "Apache-2.0"


def test_each_license_file_named_is_in_the_repository() -> None:
    patterns = pyproject()["project"]["license-files"]
    assert patterns
    for pattern in patterns:
        assert list(ROOT.glob(pattern)), f"license-files: {pattern} matches no file"


def test_the_build_requires_a_setuptools_that_reads_them() -> None:
    [setuptools] = [req for req in pyproject()["build-system"]["requires"] if re.match(r"setuptools\b", req)]
    floor = re.fullmatch(r"setuptools>=([\d.]+)", setuptools)
    assert floor, setuptools
    assert tuple(int(part) for part in floor.group(1).split(".")) >= LICENSE_EXPRESSION_SETUPTOOLS
