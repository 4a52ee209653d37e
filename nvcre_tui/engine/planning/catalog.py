"""The workload catalog: `catalog/<domain>/<variant>.yaml` entries, option defaults and GPU node shapes.

Loading is strict: a broken entry is reported with its file and field, never skipped silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, JsonValue, ValidationError

from nvcre_tui.engine.api.base import DNS_LABEL, Duration, ResourceList, WireModel
from nvcre_tui.engine.api.options import CategoryOptions, TestScale
from nvcre_tui.engine.api.resources import MeasurementSpec, StringMatch
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.errors import BadValue, InputError
from nvcre_tui.engine.inputs import load_yaml_document
from nvcre_tui.engine.judging.thresholds import METRICS
from nvcre_tui.engine.planning.merge import deep_merge
from nvcre_tui.engine.units import parse_quantity
from nvcre_tui.paths import data_dir, shown_file


def _known_metric(key: str) -> str:
    if key not in METRICS:
        raise BadValue(f"unknown metric {key!r}; known: {', '.join(METRICS)}")
    return key


MetricKey = Annotated[str, AfterValidator(_known_metric)]

ENTRY_NAME_MAX = 40  # a domain or variant: a DNS label that leaves room in the Workflow names it is part of

# `${name}` in a template string: filled when a Workflow is rendered (render.substitute).
PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9]*)\}")

# Options a workload reads only through its template's placeholder of the same name: a category's own value for
# one its template leaves out would change nothing, so it is refused (manifest.certification_problems).
TEMPLATE_OPTIONS = ("maxBytes", "numIterations", "numCycles", "maxSteps", "exitDurationMins", "saveInterval",
                    "saveRetainInterval", "sourceRepo")
# Every placeholder render fills (render_run_spec's variables): a catalog naming another is refused when it loads.
TEMPLATE_VARIABLES = frozenset({*TEMPLATE_OPTIONS, "gpusPerNode", "mlnxPerNode", "mnnvl", "nodesPerJob", "tp", "pp", "variant",
                                "platform", "gpuArchitecture", "toolTimeoutSeconds"})


class OverrideWhen(WireModel):
    """When a catalog override applies: platform and GPU architecture matchers (empty matches all)."""

    platform: StringMatch | None = None
    gpu_architecture: StringMatch | None = Field(default=None, alias="gpuArchitecture")

    def matches(self, platform: str, architecture: str) -> bool:
        """True when both matchers (if set) accept the values."""
        return _match(self.platform, platform) and _match(self.gpu_architecture, architecture)

    def summary(self) -> str:
        """A short text such as "platform=aws, gpuArchitecture notIn [gb200, gb300]"."""
        parts = [_describe(name, m) for name, m in (("platform", self.platform), ("gpuArchitecture", self.gpu_architecture)) if m]
        return ", ".join(parts) or "always"


def _match(matcher: StringMatch | None, value: str) -> bool:
    if matcher is None:
        return True
    if matcher.equals is not None and value != matcher.equals:
        return False
    if matcher.in_ is not None and value not in matcher.in_:
        return False
    return not (matcher.not_in is not None and value in matcher.not_in)


def _describe(name: str, matcher: StringMatch) -> str:
    if matcher.equals is not None:
        return f"{name}={matcher.equals}"
    if matcher.in_ is not None:
        return f"{name} in [{', '.join(matcher.in_)}]"
    return f"{name} notIn [{', '.join(matcher.not_in or [])}]"


class CatalogOverride(WireModel):
    """A patch deep-merged into the template when `when` matches."""

    when: OverrideWhen = Field(default_factory=OverrideWhen)
    patch: dict[str, JsonValue]


class Parallelism(WireModel):
    """Tensor / pipeline parallelism of a training entry."""

    tp: Annotated[int, Field(ge=1)] = 1
    pp: Annotated[int, Field(ge=1)] = 1


def _template_option(key: str) -> str:
    """An optionMinimums key: one of TEMPLATE_OPTIONS (a misspelt key would hold nothing to its minimum)."""
    if key not in TEMPLATE_OPTIONS:
        raise BadValue(f"{key!r} is not an option a template reads ({', '.join(TEMPLATE_OPTIONS)})")
    return key


class OptionMinimum(WireModel):
    """An option's least useful value for one workload, and why (said when a smaller one is refused)."""

    least: Annotated[int, Field(ge=1)]
    why: str


class FitRequests(WireModel):
    """How a workload's cpu and memory requests follow its nodes (planning/fitting.py): the template's figure where
    the nodes have room, else `share` of the smallest allocatable among the category's nodes whose share is at least
    `least` (the rest left to their daemonsets); the nodes of which a pod then asks more than `share` are left out of
    the category (InsufficientResources; fit.pod_shortfalls), and where no node gives `least` the category is refused
    when it is planned."""

    share: Annotated[float, Field(gt=0, le=1)]
    least: ResourceList = Field(default_factory=ResourceList)


class CatalogEntry(WireModel):
    """One entry, after `extends` are merged in."""

    domain: str
    variant: str
    title: str
    description: str = ""
    template: dict[str, JsonValue]
    measurement: MeasurementSpec
    metrics: list[MetricKey]
    time_budget: Duration
    # A training's Jobs fail WorkloadStalled when it logs no progress for this many times its average step time x log
    # interval (or no step within the startupStallTimeoutSeconds option): engine/judging/stall.py.
    stall_multiplier: Annotated[int, Field(ge=1)] | None = None
    test_scales: Annotated[list[TestScale], Field(min_length=1)]
    per_node: bool = False
    min_gpus: Annotated[int, Field(ge=1)] | None = Field(default=None, alias="minGPUs")
    parallelism: dict[str, Parallelism] | None = None
    defaults: CategoryOptions | None = None
    scale_defaults: dict[TestScale, CategoryOptions] | None = None
    overrides: list[CatalogOverride] = Field(default_factory=list)
    # The least value of an option (of TEMPLATE_OPTIONS) with which the workload measures anything at all; a negative
    # value is the option's own sentinel (maxSteps -1: no step limit) and is not held to it.
    option_minimums: dict[Annotated[str, AfterValidator(_template_option)], OptionMinimum] = Field(default_factory=dict)
    fit_requests: FitRequests | None = None  # None: the template's cpu and memory requests, whatever the nodes

    @property
    def key(self) -> str:
        """domain/variant."""
        return f"{self.domain}/{self.variant}"

    @property
    def placeholders(self) -> frozenset[str]:
        """The names of the placeholders in its template and its overrides' patches."""
        return frozenset(PLACEHOLDER.findall(json.dumps([self.template, [override.patch for override in self.overrides]])))

    @property
    def template_options(self) -> frozenset[str]:
        """The TEMPLATE_OPTIONS its template (or an override's patch) has a placeholder for."""
        return self.placeholders & frozenset(TEMPLATE_OPTIONS)

    @property
    def framework(self) -> str:
        """mpi, torch or exec."""
        framework = self.template.get("framework")
        return next(iter(framework)) if isinstance(framework, dict) and framework else "exec"

    def parallelism_for(self, architecture: str) -> Parallelism:
        """TP/PP for an architecture (gb300 sizes like gb200), else the `default` key."""
        table = self.parallelism or {}
        arch = "gb200" if architecture == "gb300" else architecture
        return table.get(arch) or table.get("default") or Parallelism()


class ArchShape(WireModel):
    """Node shape of one GPU architecture."""

    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    mlnx_per_node: Annotated[int, Field(ge=0)] | None = None
    enable_mnnvl: bool | None = Field(default=None, alias="enableMNNVL")
    max_bytes: str | None = None


class GpuDefaults(WireModel):
    """catalog/_defaults/gpu-defaults.yaml."""

    architectures: dict[str, ArchShape]
    unknown: ArchShape
    platforms: dict[str, dict[str, ArchShape]] = Field(default_factory=dict)

    def shape(self, platform: str, architecture: str) -> ArchShape:
        """The architecture's shape with its platform correction applied."""
        base = self.architectures.get(architecture, self.unknown)
        correction = self.platforms.get(platform, {}).get(architecture)
        if correction is None:
            return base
        return ArchShape.model_validate({**base.model_dump(), **correction.model_dump(exclude_none=True)})

    def known(self, architecture: str) -> bool:
        """Whether the architecture has its own shape (else the `unknown` fallback applies)."""
        return architecture in self.architectures


class OptionDefaults(WireModel):
    """catalog/_defaults/options.yaml."""

    defaults: CategoryOptions
    scale_defaults: dict[TestScale, CategoryOptions] = Field(default_factory=dict)


@dataclass(frozen=True)
class Catalog:
    """Every entry plus the defaults, loaded from one folder."""

    root: Path
    entries: dict[str, CatalogEntry]
    gpu_defaults: GpuDefaults
    option_defaults: OptionDefaults

    def find(self, domain: str, variant: str) -> CatalogEntry | None:
        """The entry, or None."""
        return self.entries.get(f"{domain}/{variant}")

    def domains(self) -> list[str]:
        """Domain names, sorted."""
        return sorted({entry.domain for entry in self.entries.values()})

    def variants(self, domain: str) -> list[str]:
        """Variant names of a domain, sorted."""
        return sorted(entry.variant for entry in self.entries.values() if entry.domain == domain)

    def readers(self, option: str) -> list[str]:
        """The entries (domain/variant, sorted) whose template reads `option`, one of TEMPLATE_OPTIONS."""
        return sorted(key for key, entry in self.entries.items() if option in entry.template_options)

    def unknown_category(self, domain: str, variant: str) -> tuple[str, str] | None:
        """(field, message) when domain/variant is not in the catalog, else None."""
        if domain not in self.domains():
            return "domain", f"unknown domain {domain!r}; known: {', '.join(self.domains())}"
        if self.find(domain, variant) is None:
            return "variant", f"unknown variant {variant!r} in domain {domain}; known: {', '.join(self.variants(domain))}"
        return None


def _shown(root: Path, relative: str | Path) -> str:
    return shown_file("catalog", root, relative)


def _read_yaml(path: Path, root: Path) -> Any:
    relative = path.relative_to(root) if path.is_relative_to(root) else path
    return load_yaml_document(str(path), _shown(root, relative))  # catalog overrides are input too


def _with_extends(path: Path, root: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The document at `path` with its `extends` merged underneath (overrides lists concatenate)."""
    if path in seen:
        raise InputError(f"{_shown(root, path.relative_to(root))}: extends cycle")
    document = _read_yaml(path, root)
    if not isinstance(document, dict):
        raise InputError(f"{_shown(root, path.relative_to(root))}: must be a mapping")
    merged: dict[str, Any] = {}
    overrides: list[Any] = []
    for base in _listed(document, "extends", _shown(root, path.relative_to(root))):
        if not isinstance(base, str) or not (root / base).resolve().is_relative_to(root):
            raise InputError(f"{_shown(root, path.relative_to(root))}: extends: {base!r} is not a file inside the catalog folder")
        if not (root / base).is_file():  # the extending file is at fault, named with the file it misses
            raise InputError(f"{_shown(root, path.relative_to(root))}: extends: {base!r}: no such file ({_shown(root, base)})")
        base_doc = _with_extends(root / base, root, (*seen, path))
        overrides += base_doc.pop("overrides", [])
        merged = deep_merge(merged, base_doc)
    overrides += _listed(document, "overrides", _shown(root, path.relative_to(root)))
    merged = deep_merge(merged, document)
    merged["overrides"] = overrides
    return merged


def _listed(document: dict[str, Any], key: str, where: str) -> list[Any]:
    """`document[key]`, taken out: a list, or none (a string here would be read letter by letter)."""
    value = document.pop(key, None)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}: {key}: must be a list, got {value!r:.60}")
    return value


def _validated(model: type[WireModel], data: Any, where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InputError(validation_messages(error, where)) from None


def _least_over_requests(entry: CatalogEntry) -> str | None:
    """Where an entry's fitRequests.least asks more than a request of its template (or of an override's patch) gives."""
    least = entry.fit_requests.least.to_wire() if entry.fit_requests else {}
    sources = [("the template", entry.template), *((f"override {index}", o.patch) for index, o in enumerate(entry.overrides))]
    for where, template in sources:
        resources = template.get("resources")
        requests = resources.get("requests") if isinstance(resources, dict) else None
        for name, amount in least.items():
            asked = requests.get(name) if isinstance(requests, dict) else None
            if isinstance(asked, str) and parse_quantity(asked) < parse_quantity(amount):
                return f"{name} {amount} is more than {where} requests ({asked})"
    return None


def read_catalog(root: Path | None = None) -> Catalog:
    """Read and validate every entry under `root` (default: the shipped catalog/); catalog_load.load_catalog also
    renders each, which this module cannot (rendering builds on it)."""
    root = (root or data_dir("catalog")).resolve()
    if not root.is_dir():
        raise InputError(f"{root}: catalog folder not found" + (" (it is a file)" if root.exists() else ""))
    if not (root / "_defaults" / "gpu-defaults.yaml").is_file():
        raise InputError(f"{root}: not a catalog folder (it has no _defaults/gpu-defaults.yaml; copy the shipped catalog/ and change it)")
    entries: dict[str, CatalogEntry] = {}
    for path in sorted(root.glob("*/*.yaml")):
        domain, variant = path.parent.name, path.stem
        if domain.startswith("_"):
            continue
        for part, name in (("folder", domain), ("file name", variant)):
            if not re.fullmatch(DNS_LABEL, name) or len(name) > ENTRY_NAME_MAX:  # both go into Workflow names and labels
                raise InputError(f"{_shown(root, f'{domain}/{variant}.yaml')}: the {part} {name!r} must be lowercase letters, digits and '-' "
                                 "(it names Workflows)")
        data = _with_extends(path, root)
        data.update(domain=domain, variant=variant)
        entry = _validated(CatalogEntry, data, _shown(root, f"{domain}/{variant}.yaml"))
        if unknown := sorted(entry.placeholders - TEMPLATE_VARIABLES):  # found here, not by the first render of it
            raise InputError(f"{_shown(root, f'{domain}/{variant}.yaml')}: unknown placeholder "
                             f"{', '.join(f'${{{name}}}' for name in unknown)} (in it or a file it extends); "
                             f"known: {', '.join(sorted(TEMPLATE_VARIABLES))}")
        if problem := _least_over_requests(entry):  # else every node would be refused, however large
            raise InputError(f"{_shown(root, f'{domain}/{variant}.yaml')}: fitRequests.least: {problem} (in it or a file it extends)")
        entries[entry.key] = entry
    gpu = _validated(GpuDefaults, _read_yaml(root / "_defaults/gpu-defaults.yaml", root), _shown(root, "_defaults/gpu-defaults.yaml"))
    options = _validated(OptionDefaults, _read_yaml(root / "_defaults/options.yaml", root), _shown(root, "_defaults/options.yaml"))
    return Catalog(root=root, entries=entries, gpu_defaults=gpu, option_defaults=options)
