"""The compose form as data, with no Textual: a draft of what the user typed, turned into a Certification
body (and back, for a loaded file). Field checks reuse the API models, so every message is the one the
CLI would give for the same value."""

from __future__ import annotations

from collections.abc import Mapping

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.base import API_VERSION, ObjectMeta
from nvcre_tui.engine.api.bodies import TargetSpec, certification_spec
from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.resources import NAME_MOST, NAME_TOO_LONG, Certification
from nvcre_tui.engine.api.validation import error_message
from nvcre_tui.engine.inputs.yaml_safe import plain_scalar
from nvcre_tui.engine.planning.catalog import CatalogEntry
from nvcre_tui.engine.planning.manifest import SCALE_OPTIONS, runs_as
from nvcre_tui.engine.store.selectors import LabelSelector, parse_label_selector

Body = dict[str, Any]


@dataclass(frozen=True)
class OptionField:
    """One per-category option the form edits: its wire name, label, and how its text is typed."""

    alias: str
    label: str
    kind: str  # "scale" (a Select of the entry's testScales), "choice" (a Select of `choices`), "int" or "text"
    choices: tuple[str, ...] = ()  # a "choice" field's values, the default first


OPTION_FIELDS: tuple[OptionField, ...] = (
    OptionField("testScale", "test scale", "scale"),
    OptionField("nodesPerJob", "nodes per job", "int"),
    OptionField("minGroupSize", "min group size", "int"),
    OptionField("maxConcurrent", "max concurrent", "int"),
    OptionField("repeatCount", "repeat count", "int"),
    OptionField("timeoutPerJob", "timeout per job", "text"),
    # What a failed intra-rack or full-scale category does: report it, or narrow its failed groups down to nodes.
    OptionField("onFailure", "on failure", "choice", ("report", "diagnose")),
)
FORM_OPTIONS = frozenset(f.alias for f in OPTION_FIELDS)
DIAGNOSABLE_SCALES = frozenset({"intra-rack", "full-scale"})  # onFailure: diagnose narrows down a multi-node group
CONDITIONAL_OPTIONS = frozenset({*SCALE_OPTIONS, "onFailure"})  # offered only where the entry can use them


def fields_for(entry: CatalogEntry, values: Mapping[str, str] | None = None) -> tuple[OptionField, ...]:
    """The form options a catalog entry can use, in the engine's words (`SCALE_OPTIONS`, `runs_as`): onFailure only
    where a failed group can be diagnosed, nodesPerJob and minGroupSize only where some way of running the entry reads
    them (a per-node entry such as DCGM reads neither; offered, they could only be refused). A field a loaded file
    already set stays, so its message shows where it can be cleared."""
    diagnosable = not entry.per_node and bool(DIAGNOSABLE_SCALES & set(entry.test_scales))
    ways = {way for scale in entry.test_scales for way in runs_as(entry, scale, "diagnose" if diagnosable else None)}
    usable = {alias for alias, readers in SCALE_OPTIONS.items() if ways & set(readers)} | ({"onFailure"} if diagnosable else set())
    given = {alias for alias, text in (values or {}).items() if text.strip()}
    return tuple(f for f in OPTION_FIELDS if f.alias not in CONDITIONAL_OPTIONS or f.alias in usable | given)


# Label-selector operator -> how it is written in spec.target (None: a nodeSelector entry).
_TARGET_OPERATOR: dict[str, str | None] = {"=": None, "!=": "NotIn", "in": "In", "notin": "NotIn", "exists": "Exists", "!": "DoesNotExist"}


@dataclass(frozen=True)
class ThresholdDraft:
    """One threshold row: a metric key ("" while none is picked) and its CEL expression."""

    metric: str = ""
    expression: str = ""

    @property
    def blank(self) -> bool:
        """A row the user added but has not filled: left out of the Certification."""
        return not self.metric and not self.expression.strip()


@dataclass(frozen=True)
class CategoryDraft:
    """A selected catalog entry and the raw text of its form options (alias -> text, "" = default)."""

    key: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Carried:
    """What a loaded file said that the form does not edit; written back unchanged."""

    metadata: Body = field(default_factory=dict)
    target: Body = field(default_factory=dict)
    spec: Body = field(default_factory=dict)
    options: Body = field(default_factory=dict)
    category_options: dict[str, Body] = field(default_factory=dict)

    def paths(self) -> list[str]:
        """Where the carried fields sit, for a "kept from the file" hint."""
        found = [f"metadata.{k}" for k in self.metadata] + [f"spec.target.{k}" for k in self.target]
        found += [f"spec.{k}" for k in self.spec] + [f"spec.options.{k}" for k in self.options]
        found += [f"{key}: {k}" for key, options in self.category_options.items() for k in options]
        return found


@dataclass(frozen=True)
class Draft:
    """Everything the form holds, as typed."""

    name: str = ""
    selector: str = ""
    node_names: str = ""
    categories: tuple[CategoryDraft, ...] = ()
    thresholds: tuple[ThresholdDraft, ...] = ()


def name_message(name: str) -> str | None:
    """Why `name` is not a valid Certification name (a DNS subdomain), or None."""
    try:
        ObjectMeta.model_validate({"name": name})
    except ValidationError as error:
        return error_message(error.errors(include_url=False)[0])
    # as the Certification checks it (its name becomes a label value): the field said nothing, the status line did
    return NAME_TOO_LONG if len(name) > NAME_MOST else None


def parse_selector(text: str) -> tuple[LabelSelector | None, str | None]:
    """(selector, None) or (None, why the string form does not parse)."""
    try:
        return parse_label_selector(text), None
    except ValueError as error:
        return None, str(error)


def split_names(text: str) -> list[str]:
    """Comma- or space-separated node names, in order, without repeats."""
    return list(dict.fromkeys(part for part in text.replace(",", " ").split() if part))


def target_body(selector: LabelSelector, node_names: list[str], carried: Body) -> Body:
    """spec.target for a parsed selector: `=` terms as nodeSelector, the rest as matchExpressions."""
    target: Body = dict(carried)
    node_selector: dict[str, str] = {}
    expressions: list[Body] = []
    for requirement in selector.requirements:
        operator = _TARGET_OPERATOR[requirement.operator]
        if operator is None:
            node_selector[requirement.key] = next(iter(requirement.values))
        else:
            expression: Body = {"key": requirement.key, "operator": operator}
            if requirement.values:
                expression["values"] = sorted(requirement.values)
            expressions.append(expression)
    if node_selector:
        target["nodeSelector"] = node_selector
    if expressions:
        target["matchExpressions"] = expressions
    if node_names:
        target["nodeNames"] = node_names
    return target


def option_value(spec: OptionField, text: str) -> tuple[Any, str | None]:
    """(value for the manifest, inline message or None); empty text means "catalog default" (None)."""
    text = text.strip()
    if not text:
        return None, None
    value: Any = text
    if spec.kind == "int":
        # An int exactly when the same text in a file is one (ASCII digits: int() would take ٣ as 3); anything
        # else stays text as typed, so the model's "must be an integer, got '٣'" names the field, as for a file.
        scalar = plain_scalar(text)
        if isinstance(scalar, (int, float)) and not isinstance(scalar, bool):
            value = scalar  # 1e3 is the float 1000.0 in a file: said as the file's check says it
    try:
        CategoryOptions.model_validate({spec.alias: value})
    except ValidationError as error:
        return value, error_message(error.errors(include_url=False)[0])
    return value, None


def category_body(draft: CategoryDraft, carried: Body) -> Body:
    """One spec.categories item; options only when any is set."""
    domain, _, variant = draft.key.partition("/")
    options: Body = dict(carried)
    for spec in OPTION_FIELDS:
        value, _ = option_value(spec, draft.options.get(spec.alias, ""))
        if value is not None:
            options[spec.alias] = value
    item: Body = {"domain": domain, "variant": variant}
    if options:
        item["options"] = options
    return item


def thresholds_mapping(rows: tuple[ThresholdDraft, ...]) -> dict[str, str]:
    """metric -> expression for the filled rows (the first row wins when a metric repeats)."""
    mapping: dict[str, str] = {}
    for row in rows:
        if not row.blank and row.metric and row.metric not in mapping:
            mapping[row.metric] = row.expression
    return mapping


def left_out(draft: Draft) -> list[str]:
    """What the form holds that `certification_body` cannot carry into a manifest, each said with its field: a
    selector that does not parse (left out, the file would target every node), a threshold row without a metric, a
    second row for a metric. A file saved without them would load and mean something else."""
    said = []
    if draft.selector.strip() and (why := parse_selector(draft.selector)[1]) is not None:
        said.append(f"node selector: {why}")
    seen: set[str] = set()
    for row in draft.thresholds:
        if not row.blank and not row.metric:
            said.append(f"threshold {row.expression.strip()!r}: pick its metric")
        elif row.metric in seen:
            said.append(f"threshold {row.metric}: a second row for it")
        seen.add(row.metric)
    return said


def certification_body(draft: Draft, carried: Carried | None = None) -> Body:
    """The Certification the form describes, as a manifest mapping (global options under spec.options).

    An unparseable selector leaves the selector out (the form reports it separately)."""
    carried = carried or Carried()
    selector, _ = parse_selector(draft.selector)
    target = target_body(selector or LabelSelector(), split_names(draft.node_names), carried.target)
    spec: Body = {"target": target}
    spec["categories"] = [category_body(item, carried.category_options.get(item.key, {})) for item in draft.categories]
    spec.update(carried.spec)
    options: Body = dict(carried.options)
    thresholds = thresholds_mapping(draft.thresholds)
    if thresholds:
        options["thresholds"] = thresholds
    if options:
        spec["options"] = options
    # The name goes in as typed: " x " is refused with the field named, as in a file, never silently trimmed.
    metadata: Body = {"name": draft.name, **{k: v for k, v in carried.metadata.items() if k != "name"}}
    return {"apiVersion": API_VERSION, "kind": "Certification", "metadata": metadata, "spec": spec}


def selector_text(target: TargetSpec) -> str:
    """The string form of a target's nodeSelector and matchExpressions (for a loaded file)."""
    return str(parse_label_selector({"matchLabels": target.get("nodeSelector") or {}, "matchExpressions": target.get("matchExpressions") or []}))


def draft_from_certification(cert: Certification) -> tuple[Draft, Carried]:
    """Fill the form from a parsed Certification; what the form cannot show is carried through."""
    wire = cert.to_wire()
    spec = certification_spec(wire)
    target = spec.get("target") or {}
    own_fields = {"target", "categories", "options"}
    inline = CategoryOptions.model_validate(CategoryOptions.set_fields(cert.spec)).to_wire()
    global_options = {**inline, **(spec.get("options") or {})}
    thresholds = global_options.pop("thresholds", None) or {}
    categories: list[CategoryDraft] = []
    carried_options: dict[str, Body] = {}
    for item in spec["categories"]:
        key = f"{item['domain']}/{item['variant']}"
        if any(c.key == key for c in categories):
            continue  # the form selects each entry once; a repeat is reported by the caller
        options = item.get("options") or {}
        categories.append(CategoryDraft(key, {a: str(v) for a, v in options.items() if a in FORM_OPTIONS}))
        rest = {a: v for a, v in options.items() if a not in FORM_OPTIONS}
        if rest:
            carried_options[key] = rest
    draft = Draft(
        name=cert.metadata.name, selector=selector_text(target), node_names=", ".join(target.get("nodeNames") or []),
        categories=tuple(categories), thresholds=tuple(ThresholdDraft(k, v) for k, v in thresholds.items()),
    )
    carried = Carried(
        metadata={k: v for k, v in wire["metadata"].items() if k in ("labels", "annotations")},
        target={k: v for k, v in target.items() if k not in ("nodeSelector", "matchExpressions", "nodeNames")},
        spec={k: v for k, v in spec.items() if k not in own_fields and k not in inline},
        options=global_options, category_options=carried_options,
    )
    return draft, carried


def repeated_categories(cert: Certification) -> list[str]:
    """Entries listed more than once (the form keeps the first)."""
    keys = [c.key for c in cert.spec.categories]
    return sorted({k for k in keys if keys.count(k) > 1})
