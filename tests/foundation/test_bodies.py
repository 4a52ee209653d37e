"""The typed views of raw bodies (engine/api/bodies.py) stay in step with the pydantic models: every key a view
names is a wire name (alias) of the model of the same name, nested views sit where the model nests the same
model, Literal values agree, and the accessors return the body's own dicts (views, not copies)."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from pydantic import BaseModel

from nvcre_tui.engine.api import base, bodies, options, resources
from nvcre_tui.engine.diagnose.state import STATUS_KEYS

# Views of objects Kubernetes defines (no pydantic model of ours): their keys follow the Kubernetes API.
KUBERNETES_VIEWS = {
    "ContainerStateWaiting", "ContainerStateRunning", "ContainerStateTerminated", "ContainerState", "ContainerStatus",
    "PodSpec", "PodStatus", "Taint", "NodeSpec", "NodeStatus", "LeaseSpec",
}
# Keys an open model (extra="allow") carries beyond its declared fields, with who writes them.
OPEN_EXTRAS = {"DiagnoseStatus": set(STATUS_KEYS.values())}

VIEWS = {name: value for name, value in vars(bodies).items() if is_typeddict(value)}
MODELS = {name: value for module in (base, options, resources) for name, value in vars(module).items()
          if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module.__name__}
PAIRS = sorted(name for name in VIEWS if name not in KUBERNETES_VIEWS)


def _wire_fields(model: type[BaseModel]) -> dict[str, Any]:
    """wire name -> the field's annotation."""
    return {field.alias or name: field.annotation for name, field in model.model_fields.items()}


def _parts(annotation: Any) -> list[Any]:
    """The types an annotation is made of, through list[...], dict[str, ...], X | None and Annotated."""
    origin = get_origin(annotation)
    if origin in (list, dict, typing.Union, types.UnionType, typing.Annotated):
        return [part for arg in get_args(annotation) for part in _parts(arg)]
    return [annotation]


def _literal(annotation: Any) -> set[Any] | None:
    literals = [part for part in _parts(annotation) if get_origin(part) is Literal]
    return {value for part in literals for value in get_args(part)} if literals else None


def test_every_view_has_a_model_or_is_a_kubernetes_view() -> None:
    assert PAIRS, "no views found"
    assert [name for name in PAIRS if name not in MODELS] == []
    assert KUBERNETES_VIEWS <= set(VIEWS)


@pytest.mark.parametrize("name", PAIRS)
def test_view_keys_are_wire_names_of_the_model(name: str) -> None:
    model = MODELS[name]
    properties = set(model.model_json_schema(by_alias=True, mode="serialization").get("properties", {}))
    assert properties == set(_wire_fields(model)), "wire names from the schema and from the fields disagree"
    unknown = set(get_type_hints(VIEWS[name])) - properties - OPEN_EXTRAS.get(name, set())
    assert unknown == set(), f"bodies.{name} names keys {resources.__name__}.{name} does not have"


@pytest.mark.parametrize("name", PAIRS)
def test_nested_views_match_nested_models(name: str) -> None:
    fields = _wire_fields(MODELS[name])
    for key, annotation in get_type_hints(VIEWS[name]).items():
        if key not in fields:
            continue
        nested = {part.__name__ for part in _parts(annotation) if is_typeddict(part) and part.__name__ in MODELS}
        in_model = {part.__name__ for part in _parts(fields[key]) if isinstance(part, type) and issubclass(part, BaseModel)}
        assert nested <= in_model, f"bodies.{name}.{key} is a {nested}, the model's field holds {in_model or 'no model'}"
        view_values, model_values = _literal(annotation), _literal(fields[key])
        if view_values is not None:
            assert view_values == model_values, f"bodies.{name}.{key}: Literal values differ from the model's"


def test_open_extras_are_only_for_open_models() -> None:
    for name in OPEN_EXTRAS:
        assert MODELS[name].model_config.get("extra") == "allow"


def test_accessors_return_views_not_copies() -> None:
    status = {"orchestration": {"groups": [{"name": "g0", "nodes": ["n0"]}]}, "conditions": [{"type": "Succeeded", "status": "True"}]}
    workflow: dict[str, Any] = {"metadata": {"name": "w", "labels": {"a": "1"}}, "spec": {"orchestration": {}}, "status": status}
    assert bodies.workflow_status(workflow) is status
    assert bodies.orchestration_of(workflow) is status["orchestration"]
    assert bodies.conditions_of(workflow) is status["conditions"]
    assert bodies.labels_of(workflow) is workflow["metadata"]["labels"]
    assert bodies.workflow_spec(workflow) is workflow["spec"]


def test_absent_parts_are_fresh_empty_views() -> None:
    bare: dict[str, Any] = {"metadata": {"name": "j"}, "status": None}
    first, second = bodies.job_status(bare), bodies.job_status(bare)
    assert first == {} and first is not second  # a write to one never shows in the other
    assert bodies.labels_of(bare) == {} and bodies.annotations_of({}) == {} and bodies.conditions_of(bare) == []
    assert bodies.orchestration_of({"status": {}}) == {} and bodies.pod_spec({}) == {} and bare["status"] is None
