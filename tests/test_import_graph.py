"""The package's import graph, read with `ast` (nothing is imported): no circle among nvcre_tui
modules, and neither the engine nor the compose model (nvcre_tui/compose/) imports Textual.

Every import counts: at module level, inside functions (a lazy import is still a dependency) and under
`if TYPE_CHECKING:` (a type-only circle is still a circle for the reader and for a type checker). The
layers run one way: app -> commands -> screens -> widgets -> engine.

`from pkg import name` depends on `pkg.name` when that is a module, else on `pkg`; a submodule's
implicit import of its own parent package is Python's mechanics, not a dependency, so it is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nvcre_tui"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(path: Path, module: str) -> set[str]:
    """Every module name `module` imports (absolute; relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return names


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        edges = {name for name in _imported(path, module) if name in MODULES and name != module}
        graph[module] = {name for name in edges if not module.startswith(name + ".")}  # a parent package: not an edge
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read() -> None:
    graph = _graph()
    assert "nvcre_tui.commands" in graph["nvcre_tui.app"]  # the reader sees real edges,
    assert "nvcre_tui.screens.dashboard" in graph["nvcre_tui.app"]  # lazy ones included,
    assert "nvcre_tui.engine.diagnose.links" in graph["nvcre_tui.engine.diagnose.evidence"]  # and `from pkg import module`


def test_no_import_circle_among_nvcre_tui_modules() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The engine and the compose model sit below the console and the CLI: they import neither Textual nor cli/
# (what the CLI prints with comes from engine/api/serialize.py, not the reverse).
@pytest.mark.parametrize("layer", ["engine", "compose"])
@pytest.mark.parametrize("forbidden", ["textual", "nvcre_tui.cli"])
def test_the_engine_and_models_import_no_textual_and_no_cli(layer: str, forbidden: str) -> None:
    offenders = [
        f"{module} imports {name}"
        for module, path in MODULES.items() if module.startswith(f"nvcre_tui.{layer}.") or module == f"nvcre_tui.{layer}"
        for name in _imported(path, module) if name == forbidden or name.startswith(f"{forbidden}.")
    ]
    assert offenders == []


# The console is a view: screens and widgets read the session's cache (views, the read model) and send intents through
# the app; they never reach the API server, the runner, the engine loop, the simulated fleet or a database themselves.
# From the store they take only the kinds' names (store.protocol), to read the cache by kind.
VIEW_FORBIDDEN = ("kubernetes_asyncio", "sqlite3", "nvcre_tui.engine.kube", "nvcre_tui.engine.runners", "nvcre_tui.engine.engine",
                  "nvcre_tui.engine.sim", "nvcre_tui.engine.store", "nvcre_tui.engine.controllers.job",
                  "nvcre_tui.engine.controllers.workflow", "nvcre_tui.engine.controllers.certification")


@pytest.mark.parametrize("layer", ["screens", "widgets"])
def test_screens_and_widgets_reach_no_cluster_runner_or_store(layer: str) -> None:
    offenders = [
        f"{module} imports {name}"
        for module, path in MODULES.items() if module.startswith(f"nvcre_tui.{layer}.")
        for name in _imported(path, module)
        if name != "nvcre_tui.engine.store.protocol" and any(name == f or name.startswith(f"{f}.") for f in VIEW_FORBIDDEN)
    ]
    assert offenders == []
