"""The shape of a Kubernetes Node as the engine reads it: only the fields discovery, platform detection
and node health use are typed; everything else passes through. A nodes file (`render --nodes`) is
checked against it, so a label that is a list is one line naming the field, not a traceback later."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError

from nvcre_tui.engine.api.base import LabelValue, Name, OpenModel, check_label_keys
from nvcre_tui.engine.api.nodes import gpu_replicas
from nvcre_tui.engine.api.options import MAX_PER_NODE
from nvcre_tui.engine.api.validation import field_path, validation_messages
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_REPLICAS, RESOURCE_GPU
from nvcre_tui.engine.units import RESOURCE_QUANTITY_PATTERN, parse_quantity


def _quantity(value: Any) -> Any:
    if (isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and len(value) > 64)
            or (isinstance(value, int) and value < 0) or (isinstance(value, str) and not re.match(RESOURCE_QUANTITY_PATTERN, value))):
        raise ValueError(f"must be a quantity of at least 0 such as 8 or \"800Gi\", got {value!r}")
    return value


QuantityValue = Annotated[Any, AfterValidator(_quantity)]
MOST_DEVICES = 2**63 - 1  # a count the API server stores as an int64


def _whole_extended(resources: dict[str, Any] | None) -> dict[str, Any] | None:
    """Extended resources (a domain-prefixed name such as nvidia.com/gpu) are whole numbers, as the kubelet reports
    them, and fit the API server's 64-bit counts (how many GPUs a node may show: NodeShape)."""
    for key, value in (resources or {}).items():
        if "/" not in key:
            continue
        count = parse_quantity(value)
        if count != count.to_integral_value():  # "1k" is whole (the canonical form of 1000 devices)
            raise ValueError(f"{key} is an extended resource, a whole number such as 8, not {value!r}")
        if count > MOST_DEVICES:
            raise ValueError(f"{key}: {value!r} is more devices than a node can report (at most 2^63-1)")
    return resources


class _NodeMetadata(OpenModel):
    name: Name
    # as a certification's and a scenario's: label keys and values (a control character would reach the terminal)
    labels: Annotated[dict[str, LabelValue] | None, AfterValidator(check_label_keys)] = None
    annotations: dict[str, str] | None = None


class _Taint(OpenModel):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]  # the API server's only three


class _NodeSpec(OpenModel):
    unschedulable: bool | None = None
    taints: list[_Taint] | None = None
    provider_id: str | None = Field(default=None, alias="providerID")


class _NodeCondition(OpenModel):
    type: str
    status: str


class _NodeStatus(OpenModel):
    allocatable: Annotated[dict[str, QuantityValue] | None, AfterValidator(_whole_extended)] = None
    capacity: Annotated[dict[str, QuantityValue] | None, AfterValidator(_whole_extended)] = None
    conditions: list[_NodeCondition] | None = None
    node_info: dict[str, Any] | None = None  # kubelet, kernel, OS image, runtime (text), swap (1.30: an object): a mapping


class NodeShape(OpenModel):
    """A Node, checked only where the engine reads it."""

    api_version: str | None = None
    kind: str | None = None
    metadata: _NodeMetadata
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None

    def gpu_problems(self) -> list[tuple[tuple[str, ...], str]]:
        """(path, what) of each GPU count no node shows: nvidia.com/gpu at most MAX_PER_NODE, as gpusPerNode, times
        nvidia.com/gpu.replicas where GFD says each GPU is shared (time-slicing or MPS advertise every GPU that many
        times: discovery leaves such a node out)."""
        most = MAX_PER_NODE * (gpu_replicas(self.metadata.labels or {}) or 1)
        found: list[tuple[tuple[str, ...], str]] = []
        for section, counts in (("allocatable", self.status and self.status.allocatable), ("capacity", self.status and self.status.capacity)):
            value = (counts or {}).get(RESOURCE_GPU)
            if value is not None and (count := parse_quantity(value)) > most:
                found.append((("status", section), f"{RESOURCE_GPU}: {value!r} is {count:f} GPUs on one node; at most {most}"
                              + ("" if most > MAX_PER_NODE else f" (more only as {LABEL_GPU_REPLICAS} shares of each GPU)")))
        return found


def node_problems(node: Any, where: str, prefix: tuple[str | int, ...]) -> list[str]:
    """Every problem of one Node as `where: path: what`."""
    try:
        shape = NodeShape.model_validate(node)
    except ValidationError as error:
        return validation_messages(error, where, prefix)
    return [f"{where}: {field_path((*prefix, *field))}: {what}" for field, what in shape.gpu_problems()]
