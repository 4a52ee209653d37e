"""Kubeflow Trainer's CustomResourceDefinitions as its v2.3.0 release ships them
(github.com/kubeflow/trainer, manifests/base/crds/, Apache License 2.0), gzipped: the emulator serves
them so the runner's TrainJobs and TrainingRuntimes meet the real schemas, defaults and CEL rules."""

from __future__ import annotations

import copy
import gzip
from functools import cache
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
TRAINER_VERSION = "v2.3.0"


@cache
def _load(plural: str) -> dict[str, Any]:
    text = gzip.decompress((HERE / f"trainer.kubeflow.org_{plural}.yaml.gz").read_bytes())
    return dict(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def real_trainer_crd(plural: str) -> dict[str, Any]:
    """The CRD of `plural` (trainjobs, trainingruntimes), a fresh copy each time."""
    return copy.deepcopy(_load(plural))


def jobset_crd() -> dict[str, Any]:
    """A stand-in for JobSet's CRD (jobset.x-k8s.io/v1alpha2 jobsets), which the Trainer needs: served, so the runner
    creates TrainJobs; its schema keeps whatever it is given (nvcre never writes a JobSet)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "jobsets.jobset.x-k8s.io"},
            "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced",
                     "names": {"plural": "jobsets", "singular": "jobset", "kind": "JobSet", "listKind": "JobSetList"},
                     "versions": [{"name": "v1alpha2", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
