"""Golden fixtures: `fixtures/<kind>_<case>.<ext>` next to `<kind>_<case>.expected.json`.

A fixture cut from real tool output someone posted (`<kind>_real_<case>.<ext>`, kept byte for byte but trimmed)
has a sidecar `<kind>_real_<case>.source`: the URL it came from and what a person reads from it.

Set NVCRE_UPDATE_GOLDEN=1 to rewrite the expected files from the current parsers, then review the diff.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from nvcre_tui.engine.parsers import PARSERS, ParseError

FIXTURES = Path(__file__).parent / "fixtures"
UPDATE = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"
#: The sidecar of a real sample: where it came from and what a person reads from it.
SOURCE = ".source"


def fixture_text(name: str) -> str:
    """A fixture's exact text (read_text would turn progress-bar carriage returns into line breaks)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


def inputs() -> list[Path]:
    """Every fixture input (not the expected files, not the source sidecars)."""
    return sorted(path for path in FIXTURES.iterdir() if not path.name.endswith((".expected.json", SOURCE)))


def source_path(path: Path) -> Path:
    return path.with_name(path.name.rsplit(".", 1)[0] + SOURCE)


def kind_of(path: Path) -> str:
    return path.name.split("_", 1)[0]


def expected_path(path: Path) -> Path:
    return path.with_name(path.name.rsplit(".", 1)[0] + ".expected.json")


def outcome(path: Path) -> dict[str, Any]:
    """What parsing the fixture gives, as plain JSON data: the result or the ParseError."""
    with path.open(encoding="utf-8", newline="\n") as stream:
        try:
            result = PARSERS[kind_of(path)](stream)
        except ParseError as error:
            return {"error": {"reason": error.reason, "message": error.message}}
    return {"result": json.loads(json.dumps(result.to_dict()))}


def same(actual: Any, expected: Any, where: str = "$") -> list[str]:
    """Structural differences (floats compared to 1e-9 relative), as readable paths."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        problems = [f"{where}: missing key {key!r}" for key in expected if key not in actual]
        problems += [f"{where}: unexpected key {key!r}" for key in actual if key not in expected]
        for key in expected.keys() & actual.keys():
            problems += same(actual[key], expected[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(actual)} items, expected {len(expected)}"]
        return [problem for index, (a, e) in enumerate(zip(actual, expected)) for problem in same(a, e, f"{where}[{index}]")]
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(actual, (int, float)) and isinstance(expected, (int, float)) and math.isclose(actual, expected, rel_tol=1e-9):
            return []
    elif actual == expected and type(actual) is type(expected):
        return []
    return [f"{where}: {actual!r} != expected {expected!r}"]
