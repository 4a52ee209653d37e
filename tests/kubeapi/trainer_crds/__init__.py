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
