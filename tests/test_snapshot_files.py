"""Every saved snapshot belongs to a test that still exists.

syrupy fails a serial run on an unused snapshot, but under pytest-xdist (the README's test command) no
process sees every test, so that check is skipped; this test keeps a renamed or deleted snapshot test from
leaving its file behind to rot."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def snapshot_names(module: Path) -> set[str]:
    """The snapshot names a test module can produce: `test_x` and `TestClass.test_x`."""
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names |= {f"{node.name}.{item.name}" for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")}
    return names


def test_every_snapshot_file_has_its_test() -> None:
    snapshots = sorted(p for p in TESTS.rglob("__snapshots__/*/*") if p.is_file())
    assert snapshots, "no snapshot files found: the layout changed, update this test"
    orphans = []
    for svg in snapshots:
        module = svg.parent.parent.parent / f"{svg.parent.name}.py"
        name = svg.stem.split("[", 1)[0]  # a parametrized test's snapshots are `name[params]`
        if not module.is_file() or name not in snapshot_names(module):
            orphans.append(svg.relative_to(TESTS).as_posix())
    assert orphans == [], f"snapshots without a test (delete them or run the test with --snapshot-update): {orphans}"
