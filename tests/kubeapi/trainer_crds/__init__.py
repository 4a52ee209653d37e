"""Kubeflow Trainer's CustomResourceDefinitions (github.com/kubeflow/trainer, manifests/base/crds/, Apache License
2.0), gzipped: the emulator serves them so the runner's TrainJobs and TrainingRuntimes meet the real schemas, defaults
and CEL rules. Here: the v2.3.0 release (the newest, what the tests use by default); in v2.1.0/ the oldest release nvcre
supports (podTemplateOverrides, numProcPerNode int-or-string); in main/ the main branch at 8c0f505 (2026-08-21,
unreleased: numProcPerNode `self >= 1` rules, numNodes minimum 0)."""

from __future__ import annotations

import copy
import gzip
from functools import cache
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
TRAINER_VERSION = "v2.3.0"
#: Every vendored version -> its folder; the oldest release nvcre supports, the newest release, the unreleased main.
TRAINER_VERSIONS = {"v2.1.0": HERE / "v2.1.0", TRAINER_VERSION: HERE, "main": HERE / "main"}


@cache
def _load(plural: str, version: str) -> dict[str, Any]:
    text = gzip.decompress((TRAINER_VERSIONS[version] / f"trainer.kubeflow.org_{plural}.yaml.gz").read_bytes())
    return dict(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def real_trainer_crd(plural: str, version: str = TRAINER_VERSION) -> dict[str, Any]:
    """The CRD of `plural` (trainjobs, trainingruntimes) in `version` (a TRAINER_VERSIONS key), a fresh copy each time."""
    return copy.deepcopy(_load(plural, version))


def jobset_crd() -> dict[str, Any]:
    """A stand-in for JobSet's CRD (jobset.x-k8s.io/v1alpha2 jobsets), which the Trainer needs: served, so the runner
    creates TrainJobs; its schema keeps whatever it is given (nvcre never writes a JobSet)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "jobsets.jobset.x-k8s.io"},
            "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced",
                     "names": {"plural": "jobsets", "singular": "jobset", "kind": "JobSet", "listKind": "JobSetList"},
                     "versions": [{"name": "v1alpha2", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
