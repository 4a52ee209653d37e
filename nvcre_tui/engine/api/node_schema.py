"""The shape of a Kubernetes Node as the engine reads it: only the fields discovery, platform detection
and node health use are typed; everything else passes through. A nodes file (`render --nodes`) is
checked against it, so a label that is a list is one line naming the field, not a traceback later."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError

from nvcre_tui.engine.api.base import Name, OpenModel
from nvcre_tui.engine.api.validation import validation_messages


def _quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and len(value) > 64):
        raise ValueError(f"must be a quantity such as 8 or \"800Gi\", got {value!r}")
    return value


QuantityValue = Annotated[Any, AfterValidator(_quantity)]


class _NodeMetadata(OpenModel):
    name: Name
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class _Taint(OpenModel):
    key: str
    value: str | None = None
    effect: str


class _NodeSpec(OpenModel):
    unschedulable: bool | None = None
    taints: list[_Taint] | None = None
    provider_id: str | None = Field(default=None, alias="providerID")


class _NodeCondition(OpenModel):
    type: str
    status: str


class _NodeStatus(OpenModel):
    allocatable: dict[str, QuantityValue] | None = None
    capacity: dict[str, QuantityValue] | None = None
    conditions: list[_NodeCondition] | None = None


class NodeShape(OpenModel):
    """A Node, checked only where the engine reads it."""

    api_version: str | None = None
    kind: str | None = None
    metadata: _NodeMetadata
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


def node_problems(node: Any, where: str, prefix: tuple[str | int, ...]) -> list[str]:
    """Every problem of one Node as `where: path: what`."""
    try:
        NodeShape.model_validate(node)
    except ValidationError as error:
        return validation_messages(error, where, prefix)
    return []
