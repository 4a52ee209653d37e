"""CustomResourceDefinitions of nvcre.nvidia.com/v1alpha1, generated from the pydantic models.

pydantic's JSON Schema is walked and rewritten into a Kubernetes *structural* schema
(apiextensions.k8s.io/v1 rules, as enforced by the API server's ValidateStructural):
- every `$ref` is inlined, `title`s and `default: null` are dropped;
- `X | None` collapses to X (the server prunes nulls of non-nullable fields, and our wire
  form leaves unset fields out, so no field needs `nullable`);
- `int | str` becomes the one union Kubernetes allows (x-kubernetes-int-or-string);
- open schemas (JsonValue, models with extra="allow") get x-kubernetes-preserve-unknown-fields;
  closed models keep `properties` only, because `additionalProperties: false` beside `properties`
  is not structural (pruning does its job);
- an open map (dict[str, JsonValue]: a raw object) is `additionalProperties` of any value (OPEN_VALUE),
  not a bare preserve-unknown object: the API server's CEL equality (apiserver pkg/cel/common,
  unstructuredMap.Equal) skips a key of an object its schema does not declare when the other side lacks
  it, so `self == oldSelf` let a renamed key of a bare preserve-unknown object through; a map's keys are
  declared (by additionalProperties), so a rename is a change there. `nullable` keeps a null value as
  the bare form did (the server prunes nulls of non-nullable additionalProperties);
- the root's metadata is just `type: object` (the API server owns ObjectMeta).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel

from nvcre_tui.engine.api.resources import RESOURCES, Resource
from nvcre_tui.engine.api.vocabulary import LABEL_PART_OF
from nvcre_tui.engine.names import APIEXTENSIONS_GROUP, NVCRE_GROUP, NVCRE_VERSION

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
CATEGORIES = ("nvcre",)

# JSON Schema keywords that mean the same in Kubernetes' OpenAPI v3 and are copied as they are.
KEPT_KEYWORDS = (
    "description", "enum", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
    "minProperties", "maxProperties", "multipleOf",
)
SCALAR_TYPES = ("string", "integer", "number", "boolean")
INT_OR_STRING_BRANCHES = [{"type": "integer"}, {"type": "string"}]
# The value schema of an open map: anything, null included, kept as sent.
OPEN_VALUE = {PRESERVE: True, "nullable": True}

# The server shows only the first match of a column's JSONPath (filters take one comparison, no &&).
# Controllers keep conditions in conditions.SHOWN_FIRST order, so this is Failed, else ValidationFailed (a Job
# that ran and missed a threshold), else HardwareFailed, else InProgress or Succeeded; never how it ran (conditions.HOW_RUN).
STATUS_COLUMN = {
    "name": "Status", "type": "string", "jsonPath": '.status.conditions[?(@.status=="True")].type',
    "description": "The first True condition: Failed, ValidationFailed, HardwareFailed, InProgress or Succeeded",
}
AGE_COLUMN = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

# `kubectl get` columns per kind (priority 1 columns show with `-o wide`).
PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "Certification": [
        STATUS_COLUMN,
        {"name": "Result", "type": "string", "jsonPath": ".status.summary.result"},
        {"name": "Passed", "type": "string", "jsonPath": ".status.summary.passedCategories",
         "description": "Categories passed / categories"},
        {"name": "Failed Nodes", "type": "integer", "jsonPath": ".status.summary.failedNodes",
         "description": "Nodes blamed for a failure in any category"},
        {"name": "Excluded Nodes", "type": "integer", "jsonPath": ".status.summary.excludedNodes", "priority": 1},
        AGE_COLUMN,
    ],
    "Workflow": [
        STATUS_COLUMN,
        {"name": "Nodes", "type": "integer", "jsonPath": ".status.orchestration.totalNodes"},
        {"name": "Groups", "type": "integer", "jsonPath": ".status.orchestration.totalGroups"},
        {"name": "Iteration", "type": "integer", "jsonPath": ".status.orchestration.currentIteration", "priority": 1},
        AGE_COLUMN,
    ],
    "Job": [
        STATUS_COLUMN,
        {"name": "Nodes", "type": "integer", "jsonPath": ".spec.workload.workloadRun.numNodes"},
        {"name": "Restarts", "type": "integer", "jsonPath": ".status.restartCount"},
        AGE_COLUMN,
    ],
    "WorkloadRun": [
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Nodes", "type": "integer", "jsonPath": ".spec.numNodes"},
        {"name": "Exit Code", "type": "integer", "jsonPath": ".status.exitCode", "priority": 1},
        {"name": "Failed Node", "type": "string", "jsonPath": ".status.failedNode", "priority": 1},
        AGE_COLUMN,
    ],
}

# Kinds whose spec cannot change once created: a rerun is a new object. Workflows and Jobs too: the engine never writes
# their spec, and a Job judged by thresholds edited mid-run (loosened by hand) would pass a node its Certification fails.
IMMUTABLE_SPEC_KINDS = frozenset({"Certification", "Workflow", "Job", "WorkloadRun"})
IMMUTABLE_RULE = {"rule": "self == oldSelf", "message": "spec is immutable"}
# Kinds whose name becomes a label value of every child (at most 63 characters): refused at create, not failed later.
LABEL_NAMED_KINDS = frozenset({"Certification"})
# No fieldPath: the root's metadata schema declares no properties, and a real API server refuses a path to one it does
# not declare ("fieldPath must be a valid path"); the message names the field instead.
NAME_FITS_A_LABEL_RULE = {"rule": "size(self.metadata.name) <= 63",
                          "message": "metadata.name must be at most 63 characters (it becomes a label value)"}

ENVELOPE = {
    "apiVersion": {"type": "string", "description": "The versioned schema of this object: nvcre.nvidia.com/v1alpha1."},
    "kind": {"type": "string", "description": "The kind of this object."},
    "metadata": {"type": "object"},
}


class SchemaError(ValueError):
    """A model uses a construct that has no structural-schema form (a programming error)."""


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`node` with its `$ref` inlined; sibling keys (description, default) win over the target's."""
    while "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _without_null(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`X | None` -> X, keeping the outer node's description and default."""
    branches = node.get("anyOf")
    if not branches or not any(b.get("type") == "null" for b in branches):
        return node
    rest = [b for b in branches if b.get("type") != "null"]
    outer = {k: v for k, v in node.items() if k != "anyOf"}
    inner = _resolve(rest[0], defs) if len(rest) == 1 else {"anyOf": rest}
    return {**inner, **outer}


def _is_any(node: dict[str, Any]) -> bool:
    """A converted node that accepts any JSON value (JsonValue, Any)."""
    return node.get(PRESERVE) is True and "type" not in node


def _convert(node: dict[str, Any], defs: dict[str, Any], where: str) -> dict[str, Any]:
    """One pydantic JSON Schema node as a structural OpenAPI v3 node."""
    node = _without_null(_resolve(node, defs), defs)
    out: dict[str, Any] = {key: node[key] for key in KEPT_KEYWORDS if key in node}
    if "const" in node:
        out["enum"] = [node["const"]]
    if node.get("default") is not None:
        out["default"] = node["default"]
    if "exclusiveMinimum" in node:  # JSON Schema 2020 number -> OpenAPI 3.0 boolean form
        out.update(minimum=node["exclusiveMinimum"], exclusiveMinimum=True)
    if "exclusiveMaximum" in node:
        out.update(maximum=node["exclusiveMaximum"], exclusiveMaximum=True)

    if "anyOf" in node:
        if [{"type": b.get("type")} for b in node["anyOf"]] != INT_OR_STRING_BRANCHES:
            raise SchemaError(f"{where}: only `X | None` and `int | str` unions have a structural form")
        return {**out, INT_OR_STRING: True, "anyOf": INT_OR_STRING_BRANCHES}
    kind = node.get("type")
    if kind is None:  # JsonValue / Any: anything goes, kept as sent
        return {**out, PRESERVE: True}
    if kind in SCALAR_TYPES:
        return {"type": kind, **out}
    if kind == "array":
        return {"type": "array", **out, "items": _convert(node.get("items", {}), defs, f"{where}[]")}
    if kind == "object":
        return {"type": "object", **out, **_object_body(node, defs, where)}
    raise SchemaError(f"{where}: type {kind!r} has no structural form")


def _object_body(node: dict[str, Any], defs: dict[str, Any], where: str) -> dict[str, Any]:
    """properties / additionalProperties / preserve-unknown-fields of an object node."""
    extra = node.get("additionalProperties")
    if "properties" in node:
        body: dict[str, Any] = {
            "properties": {name: _convert(sub, defs, f"{where}.{name}") for name, sub in node["properties"].items()}
        }
        if node.get("required"):
            body["required"] = list(node["required"])
        if extra is True:  # extra="allow": the model keeps unknown fields, so must the server
            body[PRESERVE] = True
        return body
    if isinstance(extra, dict):
        values = _convert(extra, defs, f"{where}.*")
        return {"additionalProperties": dict(OPEN_VALUE) if _is_any(values) else values}
    return {PRESERVE: True}  # dict[str, Any] or a model with no fields and extra allowed


def structural_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural OpenAPI v3 schema of `model` (any pydantic model), every `$ref` inlined."""
    raw = model.model_json_schema(by_alias=True)
    return _convert(raw, raw.get("$defs", {}), model.__name__)


def resource_schema(model: type[Resource]) -> dict[str, Any]:
    """The openAPIV3Schema of a top-level kind: envelope, spec (immutable for some kinds), status."""
    schema = structural_schema(model)
    properties = schema["properties"]
    properties.update({key: dict(value) for key, value in ENVELOPE.items()})
    if model.KIND in IMMUTABLE_SPEC_KINDS:
        properties["spec"]["x-kubernetes-validations"] = [dict(IMMUTABLE_RULE)]
    if model.KIND in LABEL_NAMED_KINDS:  # the root's rules may read metadata.name (and generateName) only
        schema["x-kubernetes-validations"] = [dict(NAME_FITS_A_LABEL_RULE)]
    # metadata is always present server-side; requiring it here would restrict ObjectMeta.
    required = [name for name in schema.pop("required", []) if name != "metadata"]
    if required:
        schema["required"] = required
    return schema


def crd_name(model: type[Resource]) -> str:
    """<plural>.<group>, the name the API server requires."""
    return f"{model.PLURAL}.{NVCRE_GROUP}"


def crd_for(model: type[Resource]) -> dict[str, Any]:
    """The apiextensions.k8s.io/v1 CustomResourceDefinition of one kind: a fresh copy the caller may change."""
    return json.loads(_crd_text(model))


@functools.cache
def _crd_text(model: type[Resource]) -> str:
    """crd_for's CRD as JSON, generated once per process (walking pydantic's schema takes tens of milliseconds;
    setup, status and every install ask again)."""
    return json.dumps(_generate(model))


def _generate(model: type[Resource]) -> dict[str, Any]:
    return {
        "apiVersion": f"{APIEXTENSIONS_GROUP}/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(model), "labels": {LABEL_PART_OF: "nvcre"}},
        "spec": {
            "group": NVCRE_GROUP,
            "names": {
                "kind": model.KIND,
                "listKind": f"{model.KIND}List",
                "plural": model.PLURAL,
                "singular": model.KIND.lower(),
                "shortNames": list(model.SHORT_NAMES),
                "categories": list(CATEGORIES),
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": NVCRE_VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [dict(column) for column in PRINTER_COLUMNS[model.KIND]],
                    "schema": {"openAPIV3Schema": resource_schema(model)},
                }
            ],
        },
    }


def all_crds() -> list[dict[str, Any]]:
    """The CRDs of every kind, in RESOURCES order (Certification, Workflow, Job, WorkloadRun)."""
    return [crd_for(model) for model in RESOURCES]
