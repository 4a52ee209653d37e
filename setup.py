"""Ship the top-level catalog/ and themes/ folders inside the wheel.

They are data that users read and edit at the top of the repository; a plain (non-editable)
`pip install .` copies them into the package as nvcre_tui/_data/ so an installed console finds them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
DATA_DIRS = ("catalog", "themes")


class BuildWithData(build_py):
    """build_py that copies catalog/ and themes/ into the built package."""

    def run(self) -> None:
        super().run()
        for name in DATA_DIRS:
            source = ROOT / name
            target = Path(self.build_lib) / "nvcre_tui" / "_data" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))


setup(cmdclass={"build_py": BuildWithData})
