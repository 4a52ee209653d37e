"""engine/'s layers import only what their package docstrings allow (module-level and lazy imports alike)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "nvcre_tui" / "engine"
LEAVES = {"errors", "units", "clock", "printable", "names", "dcgm_time"}  # modules that import no other engine module
ALLOWED = {  # layer -> engine packages/modules it may import (besides itself)
    "api": LEAVES | {"inputs"},
    "planning": LEAVES | {"api", "judging", "inputs", "diagnose", "parsers.measurements"},  # partition hands testScale diagnose its first wave; render names bandwidth thresholds
    "judging": LEAVES | {"api", "parsers"},
    "report": LEAVES | {"api", "judging", "parsers", "diagnose", "controllers.conditions", "controllers.iterations"},
    "parsers": LEAVES | {"inputs.json_safe"},  # tool output's JSON is decoded as strictly as every JSON input
    "inputs": LEAVES,
    "store": {"names", "printable", "clock", "errors"},  # label-key syntax, one rule with api; a foreign answer's text neutralised
    "diagnose": LEAVES | {"planning", "parsers.measurements"},  # the Group it plans, the metric it weighs
    "workloads": LEAVES | {"api", "planning", "inputs"},  # the catalog's _workloads files, read as strictly as the rest
    "sim": LEAVES | {"api", "inputs", "store"},
    "controllers": LEAVES | {"api", "planning", "judging", "diagnose", "runners", "store"},
    "runners": LEAVES | {"api", "planning", "judging", "parsers", "workloads", "sim", "kube", "store", "controllers.conditions"},
    "history": LEAVES | {"api", "report", "views", "store", "judging", "diagnose", "controllers.conditions", "controllers.iterations", "outfiles",
                         "parsers.measurements", "grants"},  # a refused delete names the role that grants it  # is the default place writable; a diagnosis's verdict rows explain a node it left unjudged
    "views": LEAVES | {"api", "report", "judging", "diagnose", "controllers.conditions", "controllers.certification", "controllers.iterations",
                       "controllers.job", "kube.held", "parsers.measurements", "planning.discovery", "store.cache", "store.cacheview",
                       "store.protocol"},  # the console's read of the read model: what holds a deletion, what a held category waits for
}
EXCEPTIONS = {
    ("api/options.py", "judging.thresholds"),  # option validation checks threshold expressions (lazy import)
    ("store/kube/store.py", "kube.config"),  # the connection KubeStore opens is a KubeTarget (a type only)
    ("store/kube/client.py", "kube.credential_fields"),  # a plugin's token is checked by the kubeconfig token's one rule
    ("store/kube/client.py", "kube.exec_cluster"),  # provideClusterInfo: the key kube.exec_cluster fills for the plugin
}


def _is_module(dotted: str) -> bool:
    relative = dotted.removeprefix("nvcre_tui.engine.").replace(".", "/")
    return (ENGINE / f"{relative}.py").exists() or (ENGINE / relative / "__init__.py").exists()


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The dotted module a `from` import names, a relative one (`from ..errors import X`) resolved against `path`."""
    if not node.level:
        return node.module or ""
    package = ["nvcre_tui", *path.relative_to(ENGINE.parent).parent.parts]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def imports(path: Path) -> set[str]:
    """Engine-relative module paths `path` imports ("planning.catalog", "errors", ...), relative imports included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            # `from nvcre_tui.engine.controllers import conditions` imports the module controllers.conditions
            module = _absolute(path, node)
            names = [f"{module}.{alias.name}" if _is_module(f"{module}.{alias.name}") else module for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name.removeprefix("nvcre_tui.engine.") for name in names if name.startswith("nvcre_tui.engine.")}
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_what_it_may(layer: str) -> None:
    wrong = []
    for path in sorted((ENGINE / layer).rglob("*.py")):
        where = str(path.relative_to(ENGINE))
        for module in imports(path):
            top = module.split(".")[0]
            if top == layer or (where, module) in EXCEPTIONS:
                continue
            if top not in ALLOWED[layer] and module not in ALLOWED[layer]:
                wrong.append(f"{where} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_engine_top_level_is_small() -> None:
    """The layers live in subpackages; only the loop, sessions, leases and leaf helpers sit at the top."""
    assert len(list(ENGINE.glob("*.py"))) <= 19  # grants: RBAC's words for the CLI, the console and history alike


def test_every_subpackage_says_what_it_owns_and_may_import() -> None:
    """Each layer's docstring is its contract; this test's ALLOWED table is where the contract is checked."""
    packages = sorted(p.parent.name for p in ENGINE.glob("*/__init__.py"))
    unchecked = [name for name in packages if name not in ALLOWED and name != "kube"]  # kube sits on top, beside session
    assert not unchecked, f"layers without import rules: {unchecked}"
    import ast as _ast

    silent = [name for name in packages if "import" not in (_ast.get_docstring(_ast.parse((ENGINE / name / "__init__.py").read_text())) or "").lower()]
    assert not silent, f"subpackages whose docstring does not say what they may import: {silent}"
