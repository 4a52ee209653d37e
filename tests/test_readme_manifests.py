"""The README's Deployment of `nvcre controller` is what a kube-apiserver takes: every field it writes is a field of
the Kubernetes API types (kubernetes-asyncio's models, generated from the API's OpenAPI schema), of the right shape."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_asyncio.client as models
import yaml

README = Path(__file__).resolve().parents[1] / "README.md"
SCALARS: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "bool": bool, "object": object, "float": (int, float)}


def _problems(value: Any, type_name: str, path: str) -> list[str]:
    """Fields of `value` that the API type `type_name` does not have, or of the wrong shape."""
    if type_name in SCALARS:
        wanted = SCALARS[type_name]
        ok = isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))
        return [] if ok or type_name == "object" else [f"{path}: {value!r} is not {type_name}"]
    if type_name.startswith("list["):
        if not isinstance(value, list):
            return [f"{path}: not a list"]
        return [p for i, item in enumerate(value) for p in _problems(item, type_name[5:-1], f"{path}[{i}]")]
    if type_name.startswith("dict("):
        inner = type_name[type_name.index(",") + 1:-1].strip()
        return [p for k, item in (value or {}).items() for p in _problems(item, inner, f"{path}.{k}")]
    model = getattr(models, type_name)
    if not isinstance(value, dict):
        return [f"{path}: not an object ({type_name})"]
    by_wire = {wire: attr for attr, wire in model.attribute_map.items()}
    problems = []
    for key, item in value.items():
        if key not in by_wire:
            problems.append(f"{path}.{key}: no such field in {type_name}")
        else:
            problems += _problems(item, model.openapi_types[by_wire[key]], f"{path}.{key}")
    return problems


def test_the_readme_deployment_uses_only_fields_of_the_api() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL)
    [deployment] = [yaml.safe_load(block) for block in blocks if "kind: Deployment" in block]
    assert deployment["apiVersion"] == "apps/v1"
    assert _problems(deployment, "V1Deployment", "Deployment") == []
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_the_checker_finds_a_misspelt_field() -> None:
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "c", "livenessprobe": {}, "ports": [{"containerPort": "9090"}]}]}}}}
    assert _problems(bad, "V1Deployment", "Deployment") == [
        "Deployment.spec.template.spec.containers[0].livenessprobe: no such field in V1Container",
        "Deployment.spec.template.spec.containers[0].ports[0].containerPort: '9090' is not int",
    ]
