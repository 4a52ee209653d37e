"""The generated CustomResourceDefinitions: structural, faithful to the models, printable, appliable.

Three independent checks: a walker that applies the API server's structural-schema rules, a walk of
the pydantic annotations next to the schema (preserve-unknown-fields exactly where a model is open),
and a small value checker that must agree with pydantic on good and bad Certifications. Patterns are
RE2 (Go's regexp on the server), and the CEL rules' estimated costs are checked against the server's budgets.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import re
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from nvcre_tui.cli import setup
from nvcre_tui.engine.api.crd import (INT_OR_STRING, OPEN_VALUE, PRESERVE, PRINTER_COLUMNS, SchemaError, all_crds, crd_for,
                                      structural_schema)
from nvcre_tui.engine.api.resources import RESOURCES, Certification, Resource, Workflow, WorkloadRun
from nvcre_tui.engine.api.stamps import SCHEMA_GENERATION, stamped
from nvcre_tui.engine.api.vocabulary import ANNOTATION_SCHEMA_GENERATION
from nvcre_tui.engine.errors import InputError

from tests.kubeapi.schema import cel_equal, pattern_error, pattern_search

from . import envtest

# Example Certifications: the repository's examples/ if it has one, else shared/examples beside the checkout.
_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((_ROOT / "examples").glob("*.yaml")) or sorted((_ROOT.parent / "shared" / "examples").glob("*.yaml"))
JUNCTORS = ("anyOf", "allOf", "oneOf", "not")
FORBIDDEN_IN_JUNCTORS = ("type", "description", "default", "additionalProperties", "nullable", "title", PRESERVE)
NEVER_EMITTED = ("$ref", "$defs", "definitions", "title", "uniqueItems", "const", "$schema")
INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]


@functools.cache
def schema_of(model: type[Resource]) -> dict[str, Any]:
    """The generated openAPIV3Schema (cached: generation is the slow part; callers do not mutate it)."""
    return crd_for(model)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


# --------------------------------------------------------------------------- structural rules


def structural_problems(node: dict[str, Any], where: str = "", level: str = "root") -> list[str]:
    """Violations of Kubernetes' structural-schema rules (ValidateStructural) plus our own hygiene."""
    problems = [f"{where}: has {key}" for key in NEVER_EMITTED if key in node]
    if "nullable" in node and node != OPEN_VALUE:
        problems.append(f"{where}: nullable outside an open map's values")
    if node.get("default", 0) is None:
        problems.append(f"{where}: default null")
    kind = node.get("type")
    if not kind and not node.get(PRESERVE) and not node.get(INT_OR_STRING):
        problems.append(f"{where}: no type ({level})")
    if PRESERVE in node and node[PRESERVE] is not True:
        problems.append(f"{where}: {PRESERVE} must be true or absent")
    if kind == "array" and "items" not in node:
        problems.append(f"{where}: array without items")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{where}: properties and additionalProperties together")
    if "additionalProperties" in node and not isinstance(node["additionalProperties"], dict):
        problems.append(f"{where}: additionalProperties must be a schema")
    if level == "root" and (kind != "object" or "additionalProperties" in node):
        problems.append(f"{where}: root must be a plain object")
    if level == "root" and node.get("properties", {}).get("metadata") not in ({"type": "object"}, None):
        problems.append(f"{where}.metadata: must be just type object")
    if "pattern" in node and (error := pattern_error(node["pattern"])) is not None:
        problems.append(f"{where}: bad pattern: {error}")  # Go's regexp (RE2) must compile it, not Python's re
    if node.get("default") is not None:
        problems += [f"{where}: default: {p}" for p in value_problems(node["default"], node, where)]
    for junctor in JUNCTORS:
        if junctor not in node:
            continue
        if junctor == "anyOf" and node.get(INT_OR_STRING) and node["anyOf"] == INT_OR_STRING_ANYOF:
            continue  # the one exception Kubernetes makes
        branches = node[junctor] if isinstance(node[junctor], list) else [node[junctor]]
        problems += [f"{where}.{junctor}: has {key}" for b in branches for key in FORBIDDEN_IN_JUNCTORS if key in b]
    for name, sub in node.get("properties", {}).items():
        problems += structural_problems(sub, f"{where}.{name}", "field")
    if isinstance(node.get("additionalProperties"), dict):
        problems += structural_problems(node["additionalProperties"], f"{where}.*", "field")
    if "items" in node:
        problems += structural_problems(node["items"], f"{where}[]", "item")
    return problems


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_generated_schema_is_structural(model: type[Resource]) -> None:
    assert structural_problems(schema_of(model), model.KIND) == []


@pytest.mark.parametrize(
    ("bad", "complaint"),
    [
        ({"type": "object", "properties": {"a": {"description": "untyped"}}}, ".a: no type"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}, ".a: has $ref"),
        ({"type": "object", "properties": {"a": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}}},
         "properties and additionalProperties"),
        ({"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"type": "string"}]}}}, ".a.anyOf: has type"),
        ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
         ".metadata: must be just type object"),
        ({"type": "object", "properties": {"a": {"type": "array"}}}, "array without items"),
        ({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "default": 0}}}, "default: "),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(?!kube-)[a-z]+$"}}}, "bad pattern"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": r"^([a-z])\1$"}}}, "bad pattern"),
        ({"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}, "nullable outside"),
    ],
)
def test_structural_checker_catches_violations(bad: dict[str, Any], complaint: str) -> None:
    assert any(complaint in problem for problem in structural_problems(bad))


# --------------------------------------------------------------------------- faithful to the models


def _strip(annotation: Any) -> Any:
    """The annotation without Annotated[...] and `| None`."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            annotation = rest[0] if len(rest) == 1 else Union[tuple(rest)]
        else:
            return annotation


def openness_problems(annotation: Any, node: dict[str, Any], where: str) -> list[str]:
    """Where the schema's preserve-unknown-fields disagrees with the pydantic type at the same place."""
    annotation = _strip(annotation)
    preserved = node.get(PRESERVE) is True
    if annotation is JsonValue or annotation is Any:
        return [] if preserved and "type" not in node else [f"{where}: any JSON value must be preserve-unknown, untyped"]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        is_open = annotation.model_config.get("extra") == "allow"
        problems = [] if preserved == is_open else [f"{where}: {annotation.__name__} open={is_open}, preserve={preserved}"]
        fields = {info.alias or name: info.annotation for name, info in annotation.model_fields.items()}
        if set(fields) != set(node.get("properties", {})):
            problems.append(f"{where}: properties {sorted(node.get('properties', {}))} != fields {sorted(fields)}")
        for alias, sub in fields.items():
            if alias in node.get("properties", {}):
                problems += openness_problems(sub, node["properties"][alias], f"{where}.{alias}")
        return problems
    problems = [] if not preserved else [f"{where}: preserve-unknown on a closed {annotation}"]
    if get_origin(annotation) is list:
        return problems + openness_problems(get_args(annotation)[0], node["items"], f"{where}[]")
    if get_origin(annotation) is dict:
        value = _strip(get_args(annotation)[1])
        if value is JsonValue:  # a raw object: a map of any values, so the server's CEL equality compares its keys
            ok = node.get("type") == "object" and node.get("additionalProperties") == OPEN_VALUE and not preserved
            return [] if ok else [f"{where}: open map must be an object whose additionalProperties are {OPEN_VALUE}"]
        if value is Any:
            return [] if preserved and node.get("type") == "object" else [f"{where}: open map must be object + preserve"]
        return problems + openness_problems(value, node["additionalProperties"], f"{where}.*")
    return problems


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_preserve_unknown_fields_exactly_where_the_model_is_open(model: type[Resource]) -> None:
    schema = schema_of(model)
    problems: list[str] = []
    for name in ("spec", "status"):
        problems += openness_problems(model.model_fields[name].annotation, schema["properties"][name], f"{model.KIND}.{name}")
    assert problems == []


def test_open_and_closed_examples() -> None:
    workflow = schema_of(Workflow)["properties"]["spec"]["properties"]
    target = schema_of(Certification)["properties"]["spec"]["properties"]["target"]
    assert PRESERVE not in target and "nodeSelector" in target["properties"]
    assert workflow["dependencies"]["items"][PRESERVE] is True  # Dependency: raw object + `when`
    assert "when" in workflow["dependencies"]["items"]["properties"]
    config = schema_of(WorkloadRun)["properties"]["spec"]["properties"]["config"]
    assert config == {"type": "object", "additionalProperties": {PRESERVE: True, "nullable": True}}


class _Tiny(BaseModel):
    """A tiny model."""

    model_config = ConfigDict(extra="forbid")
    mode: Literal["only"]
    size: int | None = None
    grade: Literal["a", "b"] = "a"
    labels: dict[str, str] | None = None
    anything: JsonValue = None
    count: int | str = 0


def test_conversion_rules_on_a_tiny_model() -> None:
    schema = structural_schema(_Tiny)
    props = schema["properties"]
    assert schema["description"] == "A tiny model." and "additionalProperties" not in schema
    assert props["mode"] == {"type": "string", "enum": ["only"]}
    assert props["size"] == {"type": "integer"}  # Optional collapsed, default null dropped
    assert props["grade"] == {"type": "string", "enum": ["a", "b"], "default": "a"}
    assert props["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert props["anything"] == {PRESERVE: True}
    assert props["count"] == {"default": 0, INT_OR_STRING: True, "anyOf": INT_OR_STRING_ANYOF}
    assert schema["required"] == ["mode"]


def test_unions_without_a_structural_form_are_refused_by_path() -> None:
    class Mixed(BaseModel):
        value: int | float | str

    with pytest.raises(SchemaError, match=r"Mixed\.value: only"):
        structural_schema(Mixed)


# --------------------------------------------------------------------------- values


def value_problems(value: Any, node: dict[str, Any], where: str = "") -> list[str]:
    """What the API server would reject (or prune, for unknown fields of closed objects) in `value`."""
    if node.get(INT_OR_STRING):
        ok = isinstance(value, (int, str)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: not int-or-string"]
    kind = node.get("type")
    if kind is None:
        return []
    python: dict[str, type[Any] | tuple[type[Any], ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list}
    if not isinstance(value, python[kind]) or (isinstance(value, bool) and kind in ("integer", "number")):
        return [f"{where}: {value!r} is not {kind}"]
    problems: list[str] = []
    checks = {
        "enum": lambda limit: value in limit, "minimum": lambda limit: value >= limit, "maximum": lambda limit: value <= limit,
        "minLength": lambda limit: len(value) >= limit, "maxLength": lambda limit: len(value) <= limit,
        "minItems": lambda limit: len(value) >= limit, "maxItems": lambda limit: len(value) <= limit,
        "pattern": lambda limit: pattern_search(limit, value),
    }
    problems += [f"{where}: {key} {node[key]!r}" for key, check in checks.items() if key in node and not check(node[key])]
    if kind == "array":
        for index, item in enumerate(value):
            problems += value_problems(item, node["items"], f"{where}[{index}]")
    if kind == "object":
        problems += [f"{where}.{name}: required" for name in node.get("required", []) if name not in value]
        for key, item in value.items():
            if not where and key == "metadata":
                continue  # ObjectMeta is the API server's own, validated and pruned by it
            if key in node.get("properties", {}):
                problems += value_problems(item, node["properties"][key], f"{where}.{key}")
            elif "additionalProperties" in node:
                problems += value_problems(item, node["additionalProperties"], f"{where}.{key}")
            elif not node.get(PRESERVE):
                problems.append(f"{where}.{key}: unknown field (pruned)")
    return problems


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def test_there_are_examples() -> None:
    assert EXAMPLES, "no example Certifications found"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_certifications_validate(path: Path) -> None:
    document = _load(path)
    Certification.model_validate(copy.deepcopy(document))
    assert value_problems(document, schema_of(Certification)) == []


def _set(path: str, value: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        if value is _DELETE:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return mutate


_DELETE = object()
BAD_CERTIFICATIONS = {
    "no categories": (_set("spec.categories", []), ".spec.categories: minItems"),
    "bad test scale": (_set("spec.categories.0.options", {"testScale": "sideways"}), ".testScale: enum"),
    "group too small": (_set("spec.categories.0.options", {"minGroupSize": 0}), ".minGroupSize: minimum"),
    "bad node name": (_set("spec.target.nodeNames", ["Bad_Name"]), ".nodeNames[0]: pattern"),
    "bad storage size": (_set("spec.options.storageSize", "lots"), ".storageSize: pattern"),
    "no target": (_set("spec.target", _DELETE), ".spec.target: required"),
    "empty domain": (_set("spec.categories.0.domain", ""), ".domain: minLength"),
    "megabyte domain": (_set("spec.categories.0.domain", "x" * 1_000_000), ".domain: maxLength"),
    "long variant": (_set("spec.categories.0.variant", "nccl-" + "y" * 60), ".variant: maxLength"),
    "megabyte selector key": (_set("spec.target.matchExpressions", [{"key": "k" * 1_000_000, "operator": "Exists"}]), ".key: maxLength"),
    "megabyte taint key": (_set("spec.target.taintSelectors", [{"key": "t" * 1_000_000}]), ".key: maxLength"),
    "megabyte NIC name": (_set("spec.options", {"nicResourceName": "n" * 1_000_000}), ".nicResourceName: maxLength"),
    "string for int": (_set("spec.maxConcurrent", "8"), ".maxConcurrent: '8' is not integer"),
    "misspelt field": (_set("spec.target.nodeSelektor", {"a": "b"}), ".nodeSelektor: unknown field"),
    "long queue": (_set("spec.gangScheduler", {"schedulerName": "kai", "queue": "q" * 64}), ".queue: maxLength"),
    "bad enum in list": (_set("spec.target.taintSelectors", [{"key": "k", "effect": "Sometimes"}]), ".effect: enum"),
}


@pytest.mark.parametrize("case", sorted(BAD_CERTIFICATIONS))
def test_schema_and_model_agree_on_bad_certifications(case: str) -> None:
    mutate, complaint = BAD_CERTIFICATIONS[case]
    document = _load(EXAMPLES[0])
    mutate(document)
    with pytest.raises(ValidationError):
        Certification.model_validate(copy.deepcopy(document))
    problems = value_problems(document, schema_of(Certification))
    assert any(complaint in problem for problem in problems), problems


def test_model_output_with_defaults_and_status_validates() -> None:
    run = WorkloadRun.model_validate({
        "metadata": {"name": "nccl-g0", "namespace": "nvcre"},
        "spec": {"image": "nvcr.io/nccl:1", "numNodes": 2, "framework": {"mpi": {"binary": "all_reduce_perf"}},
                 "extendedResources": {"nvidia.com/gpu": 8, "rdma/ib": "4"}, "config": {"x": [1, {"y": None}]},
                 "orchestration": {}},
        "status": {"phase": "Running", "conditions": [{"type": "InProgress", "status": "True", "reason": "Running"}],
                   "measurements": {"busBandwidthGBps": 412.5}},
    })
    wire = json.loads(json.dumps(run.model_dump(by_alias=True, exclude_none=True, mode="json")))
    assert wire["spec"]["orchestration"]["timeoutPerJob"] == "24h"  # defaults are in the output we check
    assert value_problems(wire, schema_of(WorkloadRun)) == []


# --------------------------------------------------------------------------- the CRD objects


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_crd_names_scope_version_and_status(model: type[Resource]) -> None:
    crd = crd_for(model)
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1" and crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == f"{model.PLURAL}.nvcre.nvidia.com"
    spec = crd["spec"]
    assert spec["group"] == "nvcre.nvidia.com" and spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": model.KIND, "listKind": f"{model.KIND}List", "plural": model.PLURAL, "singular": model.KIND.lower(),
        "shortNames": list(model.SHORT_NAMES), "categories": ["nvcre"],
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}

# Short names of CRDs found on most GPU clusters (cert-manager, Argo Workflows, Kubeflow, Volcano, KAI, Kueue, the
# GPU Operator): a second CRD claiming one makes `kubectl get <short>` pick either with a warning.
COMMON_SHORT_NAMES = {"cert", "certs", "cr", "crs", "wf", "wfs", "cwf", "cwfs", "wftmpl", "job", "jobs", "vcjob",
                      "vj", "pg", "podgroup", "tj", "wl", "wlr", "cq", "lq", "policy", "run", "runs"}


def test_short_names_are_ours_alone() -> None:
    names = [short for model in RESOURCES for short in model.SHORT_NAMES]
    assert len(names) == len(set(names)) and not set(names) & COMMON_SHORT_NAMES
    assert all(short.startswith("nv") for short in names), names



def _schema_at(schema: dict[str, Any], json_path: str) -> dict[str, Any] | None:
    """The schema node a simple printer-column JSONPath points at (filters step into list items)."""
    node: dict[str, Any] | None = schema
    for part in re.findall(r"\.(\w+)|(\[\?\(.*?\)\])", json_path):
        if node is None:
            return None
        name, selector = part
        node = node.get("items") if selector else node.get("properties", {}).get(name)
    return node


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_printer_columns_point_at_fields_of_the_right_type(model: type[Resource]) -> None:
    columns = crd_for(model)["spec"]["versions"][0]["additionalPrinterColumns"]
    names = [column["name"] for column in columns]
    assert names[-1] == "Age" and len(names) == len(set(names)) >= 3
    assert names[0] in ("Status", "Phase")
    schema = {**schema_of(model), "properties": {**schema_of(model)["properties"],
                                                  "metadata": {"properties": {"creationTimestamp": {"type": "string"}}}}}
    for column in columns:
        assert column["jsonPath"].startswith(".")
        node = _schema_at(schema, column["jsonPath"])
        assert node is not None, column["jsonPath"]
        expected = {"date": "string", "integer": "integer", "string": "string"}[column["type"]]
        assert node.get("type") == expected, column


def test_status_column_selects_the_true_condition() -> None:
    (status,) = [c for c in PRINTER_COLUMNS["Certification"] if c["name"] == "Status"]
    assert status["jsonPath"] == '.status.conditions[?(@.status=="True")].type'


def test_every_spec_is_immutable() -> None:
    """The engine never writes a spec: a Job's thresholds loosened by hand mid-run passed a node its Certification fails."""
    rule = [{"rule": "self == oldSelf", "message": "spec is immutable"}]
    for model in RESOURCES:
        spec = schema_of(model)["properties"]["spec"]
        assert spec.get("x-kubernetes-validations") == rule, model.KIND


# A Dependency is any Kubernetes object plus `when` (an open model with a property): the server compares its undeclared
# keys only where both sides have one (cel_equal), so renaming one of them is not caught by `self == oldSelf` there.
RENAME_BLIND_ALLOWED = {"Workflow": {"spec.dependencies[]", "spec.overrides[].dependencies[]"}}


def rename_blind(node: dict[str, Any], where: str) -> list[str]:
    """Objects whose undeclared keys the API server's CEL equality compares only when both sides have them."""
    found = [where] if node.get(PRESERVE) and node.get("type") == "object" else []
    for name, sub in node.get("properties", {}).items():
        found += rename_blind(sub, f"{where}.{name}")
    if isinstance(node.get("items"), dict):
        found += rename_blind(node["items"], f"{where}[]")
    if isinstance(node.get("additionalProperties"), dict):
        found += rename_blind(node["additionalProperties"], f"{where}{{}}")
    return found


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_an_immutable_spec_sees_every_rename(model: type[Resource]) -> None:
    """`self == oldSelf` on a real server misses a renamed key of a bare preserve-unknown object (e.g. a toleration's
    operator renamed effect); raw objects are maps of any values instead, whose keys the server compares."""
    spec = schema_of(model)["properties"]["spec"]
    assert set(rename_blind(spec, "spec")) == RENAME_BLIND_ALLOWED.get(model.KIND, set())
    run = copy.deepcopy(schema_of(WorkloadRun)["properties"]["spec"])
    old = {"image": "i", "config": {"learningRate": 1}, "tolerations": [{"key": "k", "operator": "Exists"}]}
    assert cel_equal(old, copy.deepcopy(old), run)
    assert not cel_equal({**old, "config": {"lr": 1}}, old, run)
    assert not cel_equal({**old, "tolerations": [{"key": "k", "effect": "Exists"}]}, old, run)
    run["properties"]["config"] = {"type": "object", PRESERVE: True}  # the bare form, as the CRDs once had it
    assert cel_equal({**old, "config": {"lr": 1}}, old, run)


# What a real API server allows (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go and
# k8s.io/apiserver pkg/apis/cel/config.go, alike in 1.30-1.34).
STATIC_ESTIMATED_COST_LIMIT = 10_000_000  # one rule's estimated cost times how often its node can occur
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000  # every rule of a CRD's schema together
MAX_REQUEST_SIZE = 3 * 1024 * 1024  # celconfig.MaxRequestSizeBytes: what unbounded strings, lists and maps are sized by


def decl_type(node: dict[str, Any]) -> tuple[int, int] | None:
    """(MaxElements, MinSerializedSize) of a schema node's CEL declaration (apiserver pkg/cel/common SchemaDeclType),
    None where CEL does not see the node. An object's MaxElements is never set, so it is 0."""
    if node.get(INT_OR_STRING):
        return MAX_REQUEST_SIZE - 2, 1
    kind = node.get("type")
    if kind == "array":
        item = decl_type(node["items"])
        return None if item is None else (node.get("maxItems", (MAX_REQUEST_SIZE - 2) // (item[1] + 1)), 2)
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        value = decl_type(node["additionalProperties"])
        return None if value is None else (node.get("maxProperties", (MAX_REQUEST_SIZE - 2) // (value[1] + 6)), 2)
    if kind == "object":
        required = set(node.get("required", []))
        fields = {name: decl_type(sub) for name, sub in node.get("properties", {}).items()}
        return 0, 2 + sum(len(name) + field[1] + 4 for name, field in fields.items()
                          if field is not None and name in required and "default" not in node["properties"][name])
    if kind == "string":
        assert "format" not in node, "formats have sizes of their own: add them here"
        if "maxLength" in node:
            return node["maxLength"] * 4, 2  # runes, up to 4 bytes each
        return (max(map(len, node["enum"])) if "enum" in node else MAX_REQUEST_SIZE - 2), 2
    return {"boolean": (0, 4), "integer": (0, 1), "number": (0, 1)}.get(str(kind))


def rule_cost(rule: str, node: dict[str, Any]) -> int:
    """cel-go's estimated cost (checker/cost.go, with apiextensions' size estimator) of the rule shapes we write:
    an identifier or a field selection costs 1, an O(1) call 1 plus its arguments, `==` 0.1 per element of the
    smaller side (objects have none) plus its arguments."""
    shape = " ".join(rule.split())
    if shape == "self == oldSelf":
        size = decl_type(node)
        assert size is not None
        return 1 + 1 + math.ceil(size[0] * 0.1)
    if re.fullmatch(r"size\(self\.metadata\.name\) <= \d+", shape):
        return 3 + 1 + 1  # self.metadata.name, size(), <=
    raise AssertionError(f"no cost estimate for rule {rule!r}: add its cel-go cost to rule_cost")


def rule_costs(node: dict[str, Any], where: str = "", cardinality: int | None = 1,
               uncorrelated: str | None = None) -> list[tuple[str, str, int]]:
    """(path, rule, estimated cost times the node's cardinality) of every rule in a schema. The cardinality is how
    often the node can occur (maxItems, maxProperties); unbounded, the request size over the node's smallest form.
    Asserts the server's placement rule for oldSelf: not under items of a list that is not a map list."""
    found = []
    for rule in node.get("x-kubernetes-validations", []):
        if "oldSelf" in rule["rule"]:
            assert uncorrelated is None, f"{where}: oldSelf under the uncorrelatable {uncorrelated}"
        times = cardinality if cardinality is not None else MAX_REQUEST_SIZE // ((decl_type(node) or (0, 1))[1] + 1)
        found.append((where or "<root>", rule["rule"], rule_cost(rule["rule"], node) * times))
    kind = node.get("type")
    for name, sub in node.get("properties", {}).items():
        found += rule_costs(sub, f"{where}.{name}", cardinality, uncorrelated)
    if isinstance(node.get("additionalProperties"), dict):
        bound = node.get("maxProperties")
        found += rule_costs(node["additionalProperties"], f"{where}{{}}",
                            None if cardinality is None or bound is None else cardinality * bound, uncorrelated)
    if kind == "array":
        bound = node.get("maxItems")
        correlated = node.get("x-kubernetes-list-type") == "map"
        found += rule_costs(node["items"], f"{where}[]", None if cardinality is None or bound is None else cardinality * bound,
                            uncorrelated if correlated else uncorrelated or where)
    return found


@pytest.mark.parametrize("model", RESOURCES, ids=lambda m: m.KIND)
def test_cel_rules_fit_the_api_servers_cost_budgets(model: type[Resource]) -> None:
    """A rule over budget makes the API server refuse the CRD ("estimated rule cost exceeds budget"). `self == oldSelf`
    on a spec costs 2: the estimator sizes an object by its MaxElements, which no object has (0), whatever its lists
    and strings; the root's name rule costs 5."""
    costs = rule_costs(schema_of(model))
    assert all(cost <= STATIC_ESTIMATED_COST_LIMIT for _, _, cost in costs), costs
    assert sum(cost for _, _, cost in costs) <= STATIC_ESTIMATED_CRD_COST_LIMIT
    expected = [(".spec", "self == oldSelf", 2)]
    if model is Certification:
        expected.insert(0, ("<root>", "size(self.metadata.name) <= 63", 5))
    assert costs == expected


def test_the_cost_estimate_sees_what_the_server_refuses() -> None:
    """The estimate is able to fail: equality of an unbounded string in every item of an unbounded map list (the
    server estimates 314,575 per item and 1,048,576 items) is far over budget; bounds bring it under."""
    def nodes(max_items: int | None, max_length: int | None) -> dict[str, Any]:
        name = {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
        items = {"type": "object", "required": ["name"], "properties": {
            "name": {**name, "maxLength": max_length} if max_length else name}}
        listed = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": items}
        return {"type": "object", "properties": {"nodes": {**listed, "maxItems": max_items} if max_items else listed}}

    [(where, _, cost)] = rule_costs(nodes(None, None))
    assert where == ".nodes[].name" and cost == 314_575 * 1_048_576 > STATIC_ESTIMATED_COST_LIMIT
    [(_, _, cost)] = rule_costs(nodes(64, 63))
    assert cost == (2 + 26) * 64
    listed = {"type": "array", "items": {"type": "object", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}
    with pytest.raises(AssertionError, match="oldSelf under the uncorrelatable .names"):
        rule_costs({"type": "object", "properties": {"names": listed}})
    with pytest.raises(AssertionError, match="no cost estimate"):
        rule_costs({"type": "object", "x-kubernetes-validations": [{"rule": "self.all(k, k.matches('a+'))"}]})


# --------------------------------------------------------------------------- the CLI


def run_setup(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="nvcre")
    setup.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_cli_prints_four_yaml_documents(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_setup(["setup", "crds"], capsys)
    documents = list(yaml.safe_load_all(out))
    assert code == 0 and out.count("\n---\n") == 3
    assert [d["metadata"]["name"] for d in documents] == [
        "certifications.nvcre.nvidia.com", "workflows.nvcre.nvidia.com", "jobs.nvcre.nvidia.com", "workloadruns.nvcre.nvidia.com",
    ]
    assert documents == [stamped(crd) for crd in all_crds()]  # YAML round-trips exactly (patterns, µs, quotes)
    assert all(d["metadata"]["annotations"][ANNOTATION_SCHEMA_GENERATION] == str(SCHEMA_GENERATION) for d in documents)


def test_cli_json_list_and_kind_filter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_setup(["setup", "crds", "-o", "json", "--kind", "nvwf", "--kind", "CERTIFICATION"], capsys)
    listing = json.loads(out)
    assert code == 0 and (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert [item["spec"]["names"]["kind"] for item in listing["items"]] == ["Workflow", "Certification"]
    code, out = run_setup(["setup", "crds", "-o", "json", "--kind", "wf", "--kind", "certs"], capsys)  # the former short names
    assert [item["spec"]["names"]["kind"] for item in json.loads(out)["items"]] == ["Workflow", "Certification"]


def test_cli_unknown_kind_is_a_clear_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError) as error:
        run_setup(["setup", "crds", "--kind", "Pod"], capsys)
    assert error.value.messages == ["--kind: unknown kind 'Pod'; known kinds: Certification, Workflow, Job, WorkloadRun"]


# --------------------------------------------------------------------------- a real API server


@pytest.mark.skipif(
    envtest.assets_dir() is None,
    reason=f"needs ${envtest.ASSETS_ENV}: a folder with etcd and kube-apiserver (setup-envtest); "
    "they are not on PyPI or Debian, so this machine cannot install them",
)
def test_crds_are_established_on_a_real_api_server(tmp_path: Path) -> None:
    assets = envtest.assets_dir()
    assert assets is not None
    with envtest.ControlPlane(assets, tmp_path) as plane:
        for crd in all_crds():
            plane.apply(f"{envtest.CRD_PATH}/{crd['metadata']['name']}", crd)
        for crd in all_crds():
            served = plane.wait_crd(crd["metadata"]["name"], envtest.established)
            assert envtest.condition(served, "NonStructuralSchema") is None
        sample = {**_load(EXAMPLES[0]), "metadata": {"name": "sample", "namespace": "default"}}
        url = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications/sample"
        created = plane.apply_when_served(url, sample)
        assert created["spec"]["categories"] == sample["spec"]["categories"]
        changed = copy.deepcopy(sample)
        changed["spec"]["categories"] = changed["spec"]["categories"][:1]
        with pytest.raises(envtest.ApiError, match="spec is immutable"):
            plane.apply(url, changed)
        long = {**sample, "metadata": {"name": "c" * 64, "namespace": "default"}}  # the root rule reads metadata.name
        with pytest.raises(envtest.ApiError, match="at most 63 characters"):
            plane.apply(url.replace("/sample", "/" + "c" * 64), long)


def test_control_plane_is_used_only_when_both_binaries_are_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(envtest.ASSETS_ENV, raising=False)
    assert envtest.assets_dir() is None
    monkeypatch.setenv(envtest.ASSETS_ENV, str(tmp_path))
    (tmp_path / "etcd").write_text("#!/bin/sh\n")
    (tmp_path / "etcd").chmod(0o755)
    assert envtest.assets_dir() is None  # kube-apiserver missing
    (tmp_path / "kube-apiserver").write_text("#!/bin/sh\n")
    (tmp_path / "kube-apiserver").chmod(0o755)
    assert envtest.assets_dir() == tmp_path
    crd = {"status": {"conditions": [{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": "False"}]}}
    assert not envtest.established(crd)
    crd["status"]["conditions"][1]["status"] = "True"
    assert envtest.established(crd)
