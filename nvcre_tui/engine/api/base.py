"""Shared pieces of the nvcre.nvidia.com/v1alpha1 models: wire format, metadata, conditions, targets.

Every model speaks camelCase on the wire (alias_generator) and accepts snake_case in Python.
Spec models forbid unknown fields so a misspelt field is reported, not silently ignored.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from nvcre_tui.engine.api.vocabulary import LABEL_KAI_QUEUE, LABEL_MANAGED_BY
from nvcre_tui.engine.names import DNS_SUBDOMAIN, LABEL_VALUE, NVCRE_GROUP, NVCRE_VERSION, is_label_key
from nvcre_tui.engine.units import DURATION_PATTERN, QUANTITY_PATTERN, RESOURCE_QUANTITY_PATTERN, parse_duration

API_VERSION = f"{NVCRE_GROUP}/{NVCRE_VERSION}"

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class WireModel(BaseModel):
    """Base of every API model: camelCase aliases, unknown fields are errors."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_default=False,
        use_enum_values=True,
        strict=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The Kubernetes-JSON form: camelCase keys, unset fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class OpenModel(WireModel):
    """A model whose unknown fields are kept (server-populated metadata, raw Kubernetes objects)."""

    model_config = ConfigDict(extra="allow")


def _check_duration(value: str) -> str:
    parse_duration(value)
    return value


Duration = Annotated[str, Field(pattern=DURATION_PATTERN), AfterValidator(_check_duration)]
Quantity = Annotated[str, Field(pattern=QUANTITY_PATTERN)]
Name = Annotated[str, Field(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN)]
LabelValue = Annotated[str, Field(max_length=63, pattern=LABEL_VALUE)]
Namespace = Annotated[str, Field(max_length=63, pattern=DNS_LABEL)]


class OwnerReference(WireModel):
    """metadata.ownerReferences[]: cascading delete and the controller link."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(OpenModel):
    """metadata: what users write (name, namespace, labels, annotations) and what the store fills in."""

    name: Name
    namespace: Namespace | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    finalizers: list[str] | None = None
    owner_references: list[OwnerReference] | None = None


class Condition(WireModel):
    """A status condition; InProgress / Succeeded / Failed are mutually exclusive, the rest additive."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str = ""
    last_transition_time: str | None = None
    observed_generation: int | None = None


class LocalObjectReference(WireModel):
    """A reference by name in the same namespace (pull secrets)."""

    name: Name


class TypedLocalObjectReference(WireModel):
    """A typed reference in the same namespace (result ConfigMaps)."""

    api_group: str | None = None
    kind: str
    name: str


class ObjectReference(WireModel):
    """A reference to a named object, possibly in another namespace."""

    api_version: str | None = None
    kind: str | None = None
    name: str
    namespace: str | None = None


def shown_name(value: str) -> str:
    """A name or key as a message quotes it: whole up to 80 characters, else its start and length (one line, not the
    megabyte a script pasted)."""
    return repr(value) if len(value) <= 80 else f"{value[:60]!r}... ({len(value)} characters)"


def _check_keys(mapping: dict[str, str] | None, what: str) -> dict[str, str] | None:
    for key in mapping or {}:
        if not is_label_key(key):
            raise ValueError(f"{shown_name(key)} is not a valid {what} key ([prefix/]name, name up to 63 of A-Z a-z 0-9 - _ ., prefix a DNS subdomain)")
    return mapping


def check_label_keys(labels: dict[str, str] | None) -> dict[str, str] | None:
    """`labels` whose every key is a label key (a qualified name such as kueue.x-k8s.io/queue-name)."""
    return _check_keys(labels, "label")


def check_annotation_keys(annotations: dict[str, str] | None) -> dict[str, str] | None:
    """`annotations` whose every key is an annotation key (the same qualified names as label keys)."""
    return _check_keys(annotations, "annotation")


# metadata the API server and its controllers write (ObjectMeta keeps them on objects read back). In an input file
# they were copied from a live object, and do harm: a finalizer nothing removes keeps the object forever.
SERVER_SET_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
                       "deletionGracePeriodSeconds", "finalizers", "ownerReferences", "managedFields", "selfLink")
MAX_ANNOTATIONS_BYTES = 256 * 1024  # the API server's limit on an object's annotations, keys and values together


class InputObjectMeta(WireModel):
    """metadata as an input file may write it: name, namespace, labels and annotations, checked as the API server
    checks them (unknown fields are refused, as ObjectMeta, which also reads objects back, cannot)."""

    name: Name
    namespace: Namespace | None = None
    labels: dict[str, LabelValue] | None = None
    annotations: dict[str, str] | None = None

    _label_keys = field_validator("labels")(check_label_keys)
    _annotation_keys = field_validator("annotations")(check_annotation_keys)

    @field_validator("annotations")
    @classmethod
    def _annotations_fit(cls, annotations: dict[str, str] | None) -> dict[str, str] | None:
        size = sum(len(key.encode()) + len(value.encode()) for key, value in (annotations or {}).items())
        if size > MAX_ANNOTATIONS_BYTES:
            raise ValueError(f"{size} bytes in all, more than the {MAX_ANNOTATIONS_BYTES} the API server takes")
        return annotations


# The longest label key or qualified name: a 253-character DNS prefix, '/', a 63-character name. The CRD says so too, so
# the API server refuses a megabyte key, which the engine's InvalidSpec status and event repeated past etcd's limit.
QUALIFIED_NAME_MAX = 253 + 1 + 63


def _label_key(key: str) -> str:
    check_label_keys({key: ""})
    return key


class NodeSelectorRequirement(WireModel):
    """One matchExpressions term over node labels: In and NotIn need values, Exists and DoesNotExist take none
    (as the API server's node selector validation says)."""

    key: str = Field(min_length=1, max_length=QUALIFIED_NAME_MAX)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[LabelValue] | None = None

    _key = field_validator("key")(_label_key)

    @model_validator(mode="after")
    def _values_fit_the_operator(self) -> NodeSelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs values")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self


class TaintSelector(WireModel):
    """A taint the target nodes must all carry; matching tolerations go into workload pods (so its key and value
    must be what a toleration takes: a label key and a label value)."""

    key: str = Field(min_length=1, max_length=QUALIFIED_NAME_MAX)
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None

    _key = field_validator("key")(_label_key)


class TargetSpec(WireModel):
    """Which nodes: label selector AND matchExpressions AND nodeNames AND taints."""

    node_selector: dict[str, LabelValue] | None = None
    match_expressions: list[NodeSelectorRequirement] | None = None
    node_names: list[Name] | None = None
    taint_selectors: list[TaintSelector] | None = None

    _keys = field_validator("node_selector")(check_label_keys)


ResourceQuantity = Annotated[str, Field(pattern=RESOURCE_QUANTITY_PATTERN)]


class ResourceList(WireModel):
    """cpu and memory amounts."""

    cpu: ResourceQuantity | None = None
    memory: ResourceQuantity | None = None


class ResourceRequirements(WireModel):
    """Container resources; each request must not exceed its limit (checked in options)."""

    limits: ResourceList | None = None
    requests: ResourceList | None = None


class GangScheduler(WireModel):
    """Gang scheduler injected into every pod template (KAI, Run:ai ...)."""

    scheduler_name: str = Field(min_length=1)  # a DNS subdomain, checked on input (manifest.py): stored ones stay readable
    queue: LabelValue = "default-queue"
    queue_label_key: str = LABEL_KAI_QUEUE

    @field_validator("queue_label_key")
    @classmethod
    def _not_reserved(cls, key: str) -> str:
        if key == LABEL_MANAGED_BY or key.startswith(f"{NVCRE_GROUP}/"):
            raise ValueError(f"{key!r} is reserved")
        check_label_keys({key: ""})
        return key


def is_qualified_name(value: str) -> bool:
    """A Kubernetes qualified name with a prefix, e.g. nvidia.com/mlnxnics: the name up to 63 characters, the prefix up
    to 253 (a megabyte one went into every pod's resource requests)."""
    prefix, _, name = value.rpartition("/")
    return len(name) <= 63 and len(prefix) <= 253 and bool(re.match(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", value))
