"""catalog/_workloads/: the workload data that is not part of a catalog entry.

- pods.yaml: pod annotations (secondary networks) and tolerations per platform / architecture;
- standalone.yaml: the base NCCL env and platform patches a standalone WorkloadRun gets;
- fabrics.yaml: fabrics whose pod pieces depend on what the group's Nodes carry (GKE's GPUDirect-TCPXO);
- claims.yaml: the DRA ResourceClaimTemplates a run's resourceClaims may name besides the ComputeDomain channel.
Loaded strictly: a broken file is reported with its name and field.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pydantic import Field, JsonValue, ValidationError, model_validator

from nvcre_tui.engine.api.base import WireModel
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import load_yaml_document
from nvcre_tui.engine.planning.catalog import PLACEHOLDER, CatalogOverride, OverrideWhen
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


class NodeLabelNeed(WireModel):
    """A label every node of the group must carry with one of `values` (its machine type)."""

    key: str = Field(min_length=1)
    values: list[str] = Field(min_length=1)


class NetworksNeed(WireModel):
    """Secondary networks read from the nodes' allocatable (`<resourcePrefix><network>`), attached to `interfaces` in
    natural name order through a JSON annotation listing `leading` first."""

    resource_prefix: str = Field(min_length=1)
    annotation: str = Field(min_length=1)
    leading: list[dict[str, str]] = Field(default_factory=list)
    interfaces: list[str] = Field(min_length=1)


class Fabric(WireModel):
    """One fabric of fabrics.yaml: what it needs of the nodes, and what it adds to the run and its GPU pods."""

    name: str = Field(min_length=1)
    when: OverrideWhen = Field(default_factory=OverrideWhen)
    used_by: str = Field(min_length=1)  # an env variable: the fabric is for runs that set it
    node_label: NodeLabelNeed | None = None
    networks: NetworksNeed | None = None
    annotations: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    sidecars: list[dict[str, JsonValue]] = Field(default_factory=list)
    volumes: list[dict[str, JsonValue]] = Field(default_factory=list)
    volume_mounts: list[dict[str, JsonValue]] = Field(default_factory=list)


class FabricData(WireModel):
    """fabrics.yaml."""

    fabrics: list[Fabric] = Field(default_factory=list)


class DeviceRequest(WireModel):
    """`count` devices of one DeviceClass, asked by name in a claim."""

    name: str = Field(min_length=1)
    device_class_name: str = Field(min_length=1)
    count: int = Field(ge=1)


class ClaimTemplate(WireModel):
    """The ResourceClaimTemplate `<job><suffix>` a pod claim named `claim` takes."""

    claim: str = Field(min_length=1)
    suffix: str = Field(pattern=r"^-[a-z0-9-]+$")
    requests: list[DeviceRequest] = Field(min_length=1)


class ClaimData(WireModel):
    """claims.yaml."""

    templates: list[ClaimTemplate] = Field(default_factory=list)

    def find(self, claim: str) -> ClaimTemplate | None:
        """The template of a claim name; None: the ComputeDomain's channel."""
        return next((item for item in self.templates if item.claim == claim), None)


STANDALONE_VARIABLES = frozenset({"mnnvl", "mlnxPerNode"})  # the placeholders env.standalone_spec fills


class StandaloneData(WireModel):
    """standalone.yaml."""

    env: dict[str, str]
    overrides: list[CatalogOverride] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_placeholders(self) -> StandaloneData:
        """Refused when loaded, not by the first standalone run that meets the placeholder."""
        found = set(PLACEHOLDER.findall(json.dumps([self.env, [override.patch for override in self.overrides]])))
        if unknown := sorted(found - STANDALONE_VARIABLES):
            raise ValueError(f"unknown placeholder {', '.join(f'${{{name}}}' for name in unknown)}; "
                             f"known: {', '.join(sorted(STANDALONE_VARIABLES))}")
        return self


def _load(name: str, model: type[WireModel], root: Path | None) -> Any:
    folder = root or data_dir("catalog")
    path = folder / "_workloads" / name
    where = shown_file("catalog", folder, f"_workloads/{name}")
    document = load_yaml_document(str(path), where)  # the strict loader, as the rest of the catalog: a site's copy is input
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


@functools.lru_cache(maxsize=4)
def fabric_data(root: Path | None = None) -> FabricData:
    """fabrics.yaml (cached per catalog folder)."""
    return _load("fabrics.yaml", FabricData, root)


@functools.lru_cache(maxsize=4)
def claim_data(root: Path | None = None) -> ClaimData:
    """claims.yaml (cached per catalog folder)."""
    return _load("claims.yaml", ClaimData, root)
