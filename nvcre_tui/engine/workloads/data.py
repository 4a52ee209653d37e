"""catalog/_workloads/: the workload data that is not part of a catalog entry.

- pods.yaml: pod annotations (secondary networks) and tolerations per platform / architecture;
- standalone.yaml: the base NCCL env and platform patches a standalone WorkloadRun gets.
Loaded strictly: a broken file is reported with its name and field.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, JsonValue, ValidationError

from nvcre_tui.engine.api.base import WireModel
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog import CatalogOverride, OverrideWhen
from nvcre_tui.paths import data_dir, shown_file


class PerNic(WireModel):
    """An annotation value repeated once per NIC (comma-joined); no annotation without NICs."""

    per_nic: str = Field(min_length=1)


class PodOverride(WireModel):
    """Annotations and tolerations for the GPU pods when `when` matches."""

    when: OverrideWhen = Field(default_factory=OverrideWhen)
    requires: str | None = None  # an extended resource the pod must request for this item to apply
    annotations: dict[str, str | PerNic] = Field(default_factory=dict)
    tolerations: list[dict[str, JsonValue]] = Field(default_factory=list)


class PodData(WireModel):
    """pods.yaml."""

    overrides: list[PodOverride] = Field(default_factory=list)


class StandaloneData(WireModel):
    """standalone.yaml."""

    env: dict[str, str]
    overrides: list[CatalogOverride] = Field(default_factory=list)


def _load(name: str, model: type[WireModel], root: Path | None) -> Any:
    folder = root or data_dir("catalog")
    path = folder / "_workloads" / name
    where = shown_file("catalog", folder, f"_workloads/{name}")
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(f"{where}: cannot read: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{where}: invalid YAML: {str(error).splitlines()[0]}") from None
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise InputError(validation_messages(error, where)) from None


@functools.lru_cache(maxsize=4)
def pod_data(root: Path | None = None) -> PodData:
    """pods.yaml (cached per catalog folder)."""
    return _load("pods.yaml", PodData, root)


@functools.lru_cache(maxsize=4)
def standalone_data(root: Path | None = None) -> StandaloneData:
    """standalone.yaml (cached per catalog folder)."""
    return _load("standalone.yaml", StandaloneData, root)
