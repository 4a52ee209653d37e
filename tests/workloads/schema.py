"""Structural checks of emitted manifests against the real APIs: every field must exist with the right type
(a misspelt field is pruned or rejected by a real server, so it must fail here).

- Kubernetes core / batch types: the kubernetes_asyncio models (`openapi_types` and `attribute_map` list
  every field of every type), walked recursively;
- Kubeflow Trainer v1alpha1 TrainJob / TrainingRuntime and the JobSet spec inside it: a minimal schema
  written from the upstream Go types (pkg/apis/trainer/v1alpha1/*_types.go and the CRD YAML, Trainer
  v2.2+, JobSet v0.12); embedded Kubernetes types (JobSpec, EnvVar ...) again go to the models;
- NVIDIA DRA driver ComputeDomain (resource.nvidia.com/v1beta1): spec.numNodes and spec.channel;
- Kubernetes DRA ResourceClaimTemplate (resource.k8s.io v1, v1beta2, v1beta1): the models again.
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache
from typing import Any

from kubernetes_asyncio.client import models

Schema = Any  # a model name ("V1JobSpec"), a python type, a dict of field -> Schema, [Schema], Enum, Map


class Enum(tuple):
    """One of these strings."""


class Map:
    """A map of string keys to `value`."""

    def __init__(self, value: Schema) -> None:
        self.value = value


def check(value: Any, schema: Schema, path: str = "") -> list[str]:
    """Problems of `value` against `schema`, as `path: message` lines (empty: valid)."""
    if isinstance(schema, str):
        return check_api_object(value, schema, path)
    if isinstance(schema, Enum):
        return [] if value in schema else [f"{path}: {value!r} not one of {list(schema)}"]
    if isinstance(schema, Map):
        if not isinstance(value, dict):
            return [f"{path}: expected a map, got {type(value).__name__}"]
        return [p for key, item in value.items() for p in check(item, schema.value, f"{path}[{key}]")]
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in check(item, schema[0], f"{path}[{i}]")]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        problems = [f"{path}.{key}: no such field" for key in value if key not in schema]
        return problems + [p for key, item in value.items() if key in schema for p in check(item, schema[key], f"{path}.{key}")]
    return _check_scalar(value, schema, path)


def _check_scalar(value: Any, kind: type, path: str) -> list[str]:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return [f"{path}: expected an integer, got {value!r}"]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return []  # a JSON number without a fraction is a number (a CRD schema's `minimum: 1`)
    if kind is not int and not isinstance(value, kind):
        return [f"{path}: expected {kind.__name__}, got {value!r}"]
    return []


_OPENAPI_SCALARS: dict[str, type | None] = {"str": str, "int": int, "bool": bool, "float": float, "datetime": str, "date": str, "object": None}


def _check_openapi(value: Any, type_name: str, path: str) -> list[str]:
    if type_name.startswith("list["):
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in _check_openapi(item, type_name[5:-1], f"{path}[{i}]")]
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            return [f"{path}: expected a map, got {type(value).__name__}"]
        inner = type_name[5:-1].split(", ", 1)[1]
        return [p for key, item in value.items() for p in _check_openapi(item, inner, f"{path}[{key}]")]
    if type_name in _OPENAPI_SCALARS:
        kind = _OPENAPI_SCALARS[type_name]
        return [] if kind is None else _check_scalar(value, kind, path)
    return check_api_object(value, type_name, path)


@lru_cache(maxsize=None)
def required_fields(model_name: str) -> tuple[str, ...]:
    """The wire names of the fields the API type `model_name` requires (its OpenAPI `required`, which the generated
    model's setters enforce with `... and <attr> is None: raise ValueError`): the Go fields a server's validation
    answers `Required value` (or an out-of-range zero) for when they are missing."""
    model = getattr(models, model_name)
    needed = []
    for attr, wire in model.attribute_map.items():
        setter = getattr(model, attr).fset
        if setter is not None and f"and {attr} is None" in inspect.getsource(setter):
            needed.append(wire)
    return tuple(needed)


def check_api_object(value: Any, model_name: str, path: str) -> list[str]:
    """Fields of `value` that the Kubernetes API type `model_name` (a kubernetes-asyncio model) lacks, or of the wrong
    shape, and the fields it requires that `value` misses."""
    model = getattr(models, model_name)
    if not isinstance(value, dict):
        return [f"{path}: expected {model_name}, got {type(value).__name__}"]
    by_wire = {wire: attr for attr, wire in model.attribute_map.items()}
    problems = [f"{path}.{wire}: required by {model_name}, missing" for wire in required_fields(model_name)
                if value.get(wire) is None]
    for key, item in value.items():
        if key not in by_wire:
            problems.append(f"{path}.{key}: no such field in {model_name}")
        else:
            problems += _check_openapi(item, model.openapi_types[by_wire[key]], f"{path}.{key}")
    return problems


# ----------------------------------------------------------------------------- Kubeflow Trainer v1alpha1

TEMPLATE_META = {"labels": Map(str), "annotations": Map(str), "name": str, "namespace": str, "finalizers": [str]}
REPLICATED_JOB = {
    "name": str, "groupName": str, "replicas": int,
    "dependsOn": [{"name": str, "status": Enum(("Ready", "Complete"))}],
    "template": {"metadata": TEMPLATE_META, "spec": "V1JobSpec"},
}
JOBSET_SPEC = {
    "replicatedJobs": [REPLICATED_JOB],
    "network": {"enableDNSHostnames": bool, "subdomain": str, "publishNotReadyAddresses": bool},
    "successPolicy": {"operator": Enum(("All", "Any")), "targetReplicatedJobs": [str]},
    "startupPolicy": {"startupPolicyOrder": Enum(("AnyOrder", "InOrder"))},
    "failurePolicy": {"maxRestarts": int, "restartStrategy": str, "rules": [dict]},
    "coordinator": {"replicatedJob": str, "jobIndex": int, "podIndex": int},
    "suspend": bool, "managedBy": str, "ttlSecondsAfterFinished": int,
}
ML_POLICY = {
    "numNodes": int,
    "torch": {"envInjection": {"targets": [{"jobName": str, "containerNames": [str]}]}},
    "mpi": {"numProcPerNode": int, "mpiImplementation": Enum(("OpenMPI",)), "sshAuthMountPath": str, "runLauncherAsNode": bool},
    "jax": {}, "xgboost": {}, "flux": {"numProcPerNode": int},
}
TRAINING_RUNTIME = {
    "apiVersion": Enum(("trainer.kubeflow.org/v1alpha1",)), "kind": Enum(("TrainingRuntime",)), "metadata": "V1ObjectMeta",
    "spec": {"mlPolicy": ML_POLICY, "podGroupPolicy": dict, "template": {"metadata": TEMPLATE_META, "spec": JOBSET_SPEC}},
}
TRAIN_JOB = {
    "apiVersion": Enum(("trainer.kubeflow.org/v1alpha1",)), "kind": Enum(("TrainJob",)), "metadata": "V1ObjectMeta",
    "spec": {
        "runtimeRef": {"name": str, "apiGroup": str, "kind": Enum(("TrainingRuntime", "ClusterTrainingRuntime"))},
        "trainer": {"image": str, "command": [str], "args": [str], "env": ["V1EnvVar"], "numNodes": int, "numProcPerNode": int,
                    "resourcesPerNode": "V1ResourceRequirements"},
        "initializer": dict, "runtimePatches": [dict], "suspend": bool, "activeDeadlineSeconds": int, "managedBy": str,
    },
}
COMPUTE_DOMAIN = {
    "apiVersion": Enum(("resource.nvidia.com/v1beta1",)), "kind": Enum(("ComputeDomain",)), "metadata": "V1ObjectMeta",
    "spec": {"numNodes": int, "channel": {"allocationMode": Enum(("Single", "All")), "resourceClaimTemplate": {"name": str}}},
}
SCHEMAS: dict[tuple[str, str], Schema] = {
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): TRAIN_JOB,
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): TRAINING_RUNTIME,
    ("resource.nvidia.com/v1beta1", "ComputeDomain"): COMPUTE_DOMAIN,
    ("batch/v1", "Job"): "V1Job", ("v1", "Service"): "V1Service", ("v1", "ConfigMap"): "V1ConfigMap", ("v1", "Secret"): "V1Secret",
    # AWS GB300's RoCE claim template, in each DRA version a server may serve
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): "V1ResourceClaimTemplate",
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"): "V1beta2ResourceClaimTemplate",
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate"): "V1beta1ResourceClaimTemplate",
}
RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def check_object(obj: dict[str, Any]) -> list[str]:
    """Problems of one emitted object: its kind's schema, plus the name rules a server enforces."""
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key not in SCHEMAS:
        return [f"{key}: no schema for this kind"]
    where = f"{obj['kind']}/{obj.get('metadata', {}).get('name')}"
    problems = check(obj, SCHEMAS[key], where) + label_problems(obj, where)
    name = obj.get("metadata", {}).get("name", "")
    if not RFC1035.match(name) or len(name) > 63:
        problems.append(f"{where}: metadata.name is not an RFC 1035 label of at most 63 characters")
    if obj["kind"] == "TrainingRuntime":
        policies = [k for k in ("torch", "mpi", "jax", "xgboost", "flux") if k in obj["spec"].get("mlPolicy", {})]
        if len(policies) > 1:
            problems.append(f"{where}: only one ML policy may be set, got {policies}")
    return problems


# ----------------------------------------------------------------------------- pod rules a server enforces

TRAINER_VOLUMES = frozenset({"mpi-ssh-auth", "mpi-hostfile"})  # the Trainer adds these to the pods it creates


def pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs inside a TrainingRuntime or a batch Job."""
    if obj["kind"] == "TrainingRuntime":
        return [job["template"]["spec"]["template"]["spec"] for job in obj["spec"]["template"]["spec"]["replicatedJobs"]]
    if obj["kind"] == "Job":
        return [obj["spec"]["template"]["spec"]]
    return []


def pod_problems(pod: dict[str, Any], provided: frozenset[str] = frozenset()) -> list[str]:
    """Rules the API server checks beyond field types: mounts name a volume, claims name a pod claim,
    extended resources (anything but cpu / memory) request what they limit, hugepages come with memory."""
    volumes = {v["name"] for v in pod.get("volumes", [])} | provided
    claims = {c["name"] for c in pod.get("resourceClaims", [])}
    problems = []
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        name = container["name"]
        problems += [f"{name}: mount {m['name']} has no volume" for m in container.get("volumeMounts", []) if m["name"] not in volumes]
        resources = container.get("resources", {})
        problems += [f"{name}: claim {c['name']} not in pod resourceClaims" for c in resources.get("claims", []) if c["name"] not in claims]
        limits, requests = resources.get("limits", {}), resources.get("requests", {})
        for key, value in limits.items():
            if key in ("cpu", "memory"):
                continue
            if requests.get(key) != value:
                problems.append(f"{name}: {key} request {requests.get(key)!r} differs from its limit {value!r}")
            if key.startswith("hugepages-") and "memory" not in limits and "cpu" not in limits:
                problems.append(f"{name}: {key} without a cpu or memory limit")
            if not key.startswith("hugepages-") and not re.fullmatch(r"[1-9][0-9]*", value):
                problems.append(f"{name}: {key}={value!r} is not a whole number of devices")
    return problems


LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_MAPS = ("labels", "matchLabels", "selector")


def label_problems(value: Any, path: str = "") -> list[str]:
    """Label values anywhere in an object (labels, matchLabels, a Service selector): at most 63 characters
    of the allowed alphabet."""
    problems = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in LABEL_MAPS and isinstance(item, dict) and all(isinstance(v, str) for v in item.values()):
                problems += [f"{path}.{key}[{k}]: {v!r} is not a valid label value" for k, v in item.items()
                             if len(v) > 63 or not LABEL_VALUE.match(v)]
            else:
                problems += label_problems(item, f"{path}.{key}")
    elif isinstance(value, list):
        problems += [p for i, item in enumerate(value) for p in label_problems(item, f"{path}[{i}]")]
    return problems
