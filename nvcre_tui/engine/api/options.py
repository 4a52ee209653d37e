"""CategoryOptions: the knobs of a certification category, global (spec / spec.options) or per category.

Unset means "use the catalog default"; defaults are resolved in catalog.py, never here, so a
manifest written back out says only what the user said.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from nvcre_tui.engine.api.base import (
    Duration,
    LabelValue,
    LocalObjectReference,
    Name,
    Quantity,
    ResourceRequirements,
    TargetSpec,
    WireModel,
    check_label_keys,
    QUALIFIED_NAME_MAX,
    is_qualified_name,
    shown_name,
)
from nvcre_tui.engine.units import MAX_BYTES_PATTERN, MAX_DURATION_SECONDS, parse_duration, parse_max_bytes, parse_quantity

TestScale = Literal["intra-node", "intra-rack", "diagnose", "full-scale"]
SOURCE_REPO_PATTERN = r"^(https|ssh)://[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+$"
# An image reference is printable ASCII without spaces (registry/path:tag@digest); the runtime parses the rest. Past
# this, a space, newline or escape sequence would reach every pod spec and the reports.
IMAGE_PATTERN = r"^[!-~]+$"

# Upper bounds of counts (README, "Ranges"): past them a value is a typo that would make the simulator
# or the planner loop for hours.
MAX_NODES = 20_000  # nodes per job, group sizes, concurrent jobs: the largest fleet
MAX_PER_NODE = 64  # GPUs or NICs on one node
MAX_REPEATS = 1_000  # repeats, restarts, checkpoints kept
MAX_COUNT = 1_000_000_000  # steps, iterations, cycles, intervals
MAX_SECONDS = int(MAX_DURATION_SECONDS)


def _check_max_bytes(value: str) -> str:
    parse_max_bytes(value)
    return value


class WorkloadMetadata(WireModel):
    """Labels put on the workload object (for example a Kueue queue name)."""

    labels: dict[str, LabelValue] | None = None

    _keys = field_validator("labels")(check_label_keys)


class CategoryOptions(WireModel):
    """Options of one category; see reference section 1.1 for each field's meaning."""

    nodes_per_job: Annotated[int, Field(ge=1, le=MAX_NODES)] | None = None
    enable_checkpoint: bool | None = None
    max_steps: Annotated[int, Field(ge=-1, le=MAX_COUNT)] | None = None
    exit_duration_mins: Annotated[int, Field(ge=1, le=MAX_SECONDS // 60)] | None = None
    startup_stall_timeout_seconds: Annotated[int, Field(ge=1, le=MAX_SECONDS)] | None = None
    gpus_per_node: Annotated[int, Field(ge=1, le=MAX_PER_NODE)] | None = None
    mlnx_per_node: Annotated[int, Field(ge=0, le=MAX_PER_NODE)] | None = None
    nic_resource_name: Annotated[str, Field(max_length=QUALIFIED_NAME_MAX)] | None = None
    resources: ResourceRequirements | None = None
    enable_mnnvl: bool | None = Field(default=None, alias="enableMNNVL")
    image: Annotated[str, Field(min_length=1, max_length=512)] | None = None  # IMAGE_PATTERN: on input (manifest.py)
    image_pull_secrets: list[LocalObjectReference] | None = None
    storage_class_name: Name | None = None
    save_interval: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    save_retain_interval: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    save_top_k: Annotated[int, Field(ge=1, le=MAX_REPEATS)] | None = Field(default=None, alias="saveTopK")
    storage_size: Quantity | None = None
    max_restarts: Annotated[int, Field(ge=0, le=MAX_REPEATS)] | None = None
    repeat_count: Annotated[int, Field(ge=1, le=MAX_REPEATS)] | None = None
    test_scale: TestScale | None = None
    max_bytes: Annotated[str, Field(pattern=MAX_BYTES_PATTERN), AfterValidator(_check_max_bytes)] | None = None
    num_iterations: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    num_cycles: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    thresholds: dict[str, str] | None = None
    max_concurrent: Annotated[int, Field(ge=0, le=MAX_NODES)] | None = None
    min_group_size: Annotated[int, Field(ge=1, le=MAX_NODES)] | None = None
    on_failure: Literal["report", "diagnose"] | None = None  # diagnose: narrow a failed intra-rack/full-scale run down to nodes
    timeout_per_job: Duration | None = None
    measurement_timeout: Duration | None = None
    scheduling_stall_grace_seconds: Annotated[int, Field(ge=1, le=MAX_SECONDS)] | None = None
    source_repo: Annotated[str, Field(max_length=2048, pattern=SOURCE_REPO_PATTERN)] | None = None
    workload_metadata: WorkloadMetadata | None = None
    priority_class_name: Name | None = None

    @field_validator("nic_resource_name")
    @classmethod
    def _qualified_nic(cls, name: str | None) -> str | None:
        if name is None:
            return name
        domain = name.split("/", 1)[0] if "/" in name else ""
        if not is_qualified_name(name) or domain.endswith(("k8s.io", "kubernetes.io")):
            raise PydanticCustomError(
                "nic_name", "must be an extended resource name outside k8s.io / kubernetes.io, got {value}", {"value": shown_name(name)}
            )
        return name

    @field_validator("timeout_per_job", "measurement_timeout", mode="before")
    @classmethod
    def _duration_is_text(cls, value: Any) -> Any:
        """A duration written unquoted as a date, a time or a number reaches us as one (`timeoutPerJob: 2019-01-01`):
        say what is wanted, not that a string was."""
        if value is None or isinstance(value, str):
            return value
        shown = value.isoformat() if isinstance(value, (datetime.date, datetime.time)) else repr(value)
        raise PydanticCustomError(
            "duration_type", "must be a duration such as 90s, 15m or 1h30m, got {shown}", {"shown": shown[:60]}
        )

    @field_validator("timeout_per_job", "measurement_timeout")
    @classmethod
    def _duration_above_zero(cls, value: str | None) -> str | None:
        """No time, or less than the second Kubernetes counts in, is no budget: every Job would time out at once and
        blame its nodes for it."""
        if value is not None and parse_duration(value) < 1:
            raise PydanticCustomError("duration_zero", "must be at least 1s, got {shown}", {"shown": repr(value)})
        return value

    @field_validator("thresholds")
    @classmethod
    def _thresholds_compile(cls, thresholds: dict[str, str] | None) -> dict[str, str] | None:
        from nvcre_tui.engine.judging.thresholds import threshold_problems

        if thresholds is None:
            return None
        problems = threshold_problems(thresholds)
        if problems:
            key, message = problems[0]
            raise PydanticCustomError("threshold", "{message}", {"key": key, "message": message})
        return thresholds

    @field_validator("resources")
    @classmethod
    def _requests_within_limits(cls, resources: ResourceRequirements | None) -> ResourceRequirements | None:
        if resources is None or resources.limits is None or resources.requests is None:
            return resources
        for name in ("cpu", "memory"):
            limit, request = getattr(resources.limits, name), getattr(resources.requests, name)
            if limit is not None and request is not None and parse_quantity(request) > parse_quantity(limit):
                raise PydanticCustomError(
                    "request_over_limit",
                    "requests.{name} ({request}) must not exceed limits.{name} ({limit})",
                    {"name": name, "request": request, "limit": limit},
                )
        return resources

    def merged_with(self, override: CategoryOptions | None) -> CategoryOptions:
        """These options overridden field by field by `override`: a non-nil value wins whole (thresholds, resources and
        imagePullSecrets too), except workloadMetadata.labels, which merge per key."""
        if override is None:
            return self
        merged: dict[str, Any] = {}
        for name in CategoryOptions.model_fields:
            mine, theirs = getattr(self, name), getattr(override, name)
            merged[name] = theirs if theirs is not None else mine
        if self.workload_metadata and override.workload_metadata:
            labels = {**(self.workload_metadata.labels or {}), **(override.workload_metadata.labels or {})}
            merged["workload_metadata"] = WorkloadMetadata(labels=labels)
        return CategoryOptions.model_validate(merged)

    def set_fields(self) -> dict[str, Any]:
        """Only the options that are set, keyed by Python name."""
        return {name: getattr(self, name) for name in CategoryOptions.model_fields if getattr(self, name) is not None}


CATEGORY_NAME_MAX = 63


class Category(WireModel):
    """One category of a certification: a catalog entry, its options, and (an nvcre extension) its own
    target replacing spec.target, so categories on different nodes can run side by side."""

    # At most a DNS label each (the catalog's are a few words; both name the Workflow): the API server refuses a 1 MB
    # one, which the engine's CategoryNotFound status and event repeated until the write passed etcd's limit
    domain: Annotated[str, Field(min_length=1, max_length=CATEGORY_NAME_MAX)]
    variant: Annotated[str, Field(min_length=1, max_length=CATEGORY_NAME_MAX)]
    options: CategoryOptions | None = None
    target: TargetSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_option_inline(cls, data: Any) -> Any:
        """An option written beside domain and variant (`testScale: intra-rack`) is refused, as every unknown field, but
        naming where it goes: "unknown field" alone left the user to guess (spec takes options inline, a category not)."""
        if isinstance(data, dict):
            inline = [key for key in data if isinstance(key, str) and key not in cls.model_fields and key in option_aliases()]
            if inline:
                raise PydanticCustomError("option_inline", "unknown field: a category's options go under its options "
                                          "(options.{key})", {"key": inline[0]})
        return data

    @property
    def key(self) -> str:
        """domain/variant, as the catalog names entries."""
        return f"{self.domain}/{self.variant}"


def option_aliases() -> set[str]:
    """The wire names of every option (to recognise options written inline in spec)."""
    return {field.alias or name for name, field in CategoryOptions.model_fields.items()}


