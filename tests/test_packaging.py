"""A plain (non-editable) install must carry catalog/ and themes/, and the license: build the wheel and look inside."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_catalog_and_themes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(ROOT)], check=True, cwd=tmp_path)
    [wheel] = tmp_path.glob("nvcre_tui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for entry in sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "catalog").rglob("*.yaml")):
        assert f"nvcre_tui/_data/{entry}" in names
    for theme in sorted(p.name for p in (ROOT / "themes").glob("*.yaml")):
        assert f"nvcre_tui/_data/themes/{theme}" in names
    assert "nvcre_tui/app.tcss" in names
    assert any(name.endswith("entry_points.txt") for name in names)
    # the license as PEP 639 has it (pyproject's SPDX expression and license-files), not the deprecated License: text
    [metadata] = [name for name in names if name.endswith(".dist-info/METADATA")]
    fields = zipfile.ZipFile(wheel).read(metadata).decode().split("\n\n", 1)[0].splitlines()
    assert "License-Expression: Apache-2.0" in fields and "License-File: LICENSE" in fields, fields
    assert metadata.replace("METADATA", "licenses/LICENSE") in names
