"""Review a compose draft against the catalog and today's nodes, with no Textual: the YAML, inline
messages per field, the matching-node count, the plan per category and the problems that block submit.

A user who may not list Nodes (nodes None) gets no count and no plan: what needs no Node is checked (check_category,
as `certification run` does for such a user), and the engine plans the certification once it is submitted.

Everything here calls the engine (manifest parsing, thresholds, discovery, rendering); nothing is
re-checked by hand, so the console refuses exactly what `nvcre certification run` would refuse.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from nvcre_tui.compose.form import OPTION_FIELDS, Body, Carried, Draft, certification_body, name_message, option_value, parse_selector, split_names
from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.serialize import to_yaml
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.judging.thresholds import METRICS, threshold_problems
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.discovery import is_gpu_node, matches_target
from nvcre_tui.engine.planning.manifest import certification_from_text, certification_problems
from nvcre_tui.engine.planning.render import (
    UNPLANNED,
    RenderedCategory,
    RenderError,
    check_category,
    check_certification,
    render_category,
    render_certification,
)

WHERE = "compose"
NODES_UNKNOWN = f"{UNPLANNED} once submitted; node counts are unknown here"


@dataclass(frozen=True)
class CategoryPlan:
    """What one category would run on today's nodes, or why it cannot."""

    key: str
    test_scale: str = ""
    groups: int = 0  # the groups it starts with (a diagnosis: its first round's)
    smallest: int = 0  # nodes in its smallest and largest group, as the engine partitions them
    largest: int = 0
    diagnose: bool = False  # the groups are a diagnosis's first round: later rounds split the failed ones
    diagnose_on_failure: bool = False  # onFailure: diagnose: a failed group is narrowed down to its nodes
    eligible: int = 0
    excluded: tuple[tuple[str, str], ...] = ()  # (node, reason)
    error: str | None = None
    unplanned: bool = False  # the Nodes cannot be read: only what needs none was checked, the engine plans it


@dataclass(frozen=True)
class Review:
    """The form's state, checked."""

    body: Body
    yaml: str
    name_message: str | None
    selector_message: str | None
    matched: int | None  # GPU nodes the target selects; None while the selector does not parse, or the Nodes are unknown
    gpu_nodes: int
    unknown_names: tuple[str, ...]
    names_message: str | None  # why a typed node name cannot be one (before "not in today's nodes")
    option_messages: dict[tuple[str, str], str]  # (category key, option alias) -> message
    threshold_messages: tuple[str | None, ...]  # one per row
    metrics: tuple[str, ...]  # what the selected categories measure, in METRICS order
    plan: tuple[CategoryPlan, ...]
    problems: tuple[str, ...]  # each blocks submit; `where: field.path: message`, as the CLI prints
    nodes_unknown: str | None = None  # why nothing is planned here (this user may not list Nodes), said once

    @property
    def match_text(self) -> str:
        """"8 of 32 nodes match" (GPU nodes)."""
        return "" if self.matched is None else f"{self.matched} of {self.gpu_nodes} nodes match"


def _yielded_metrics(draft: Draft, catalog: Catalog) -> tuple[str, ...]:
    measured = {m for item in draft.categories if (entry := catalog.entries.get(item.key)) for m in entry.metrics}
    return tuple(key for key in METRICS if key in measured)


def _threshold_messages(draft: Draft, metrics: tuple[str, ...]) -> tuple[str | None, ...]:
    messages: list[str | None] = []
    seen: set[str] = set()
    for row in draft.thresholds:
        if row.blank:
            messages.append(None)
        elif not row.metric:
            messages.append("pick a metric for this expression")
        elif row.metric in seen:
            messages.append(f"{row.metric} already has a threshold above; one expression per metric")
        elif problems := threshold_problems({row.metric: row.expression}):
            messages.append(problems[0][1])
        elif row.metric not in metrics:
            measured = ", ".join(metrics) or "nothing (pass/fail by exit status)"
            messages.append(f"no selected category measures {row.metric}; they measure {measured}")
        else:
            messages.append(None)
        seen.add(row.metric)
    return tuple(messages)


def _form_problems(draft: Draft, selector_message: str | None, threshold_messages: tuple[str | None, ...]) -> list[str]:
    """Problems found by the form itself, worded as the CLI words its own (`where: field.path: message`).

    Rows without a metric or repeating one never reach the YAML; bad CEL repeats the manifest check's
    message exactly (deduplicated later) but names every bad row, where the manifest check names the first."""
    problems = [f"{WHERE}: spec.target: {selector_message}"] if selector_message else []
    for row, message in zip(draft.thresholds, threshold_messages, strict=True):
        if message:
            path = f"spec.options.thresholds.{row.metric}" if row.metric else "spec.options.thresholds"
            problems.append(f"{WHERE}: {path}: {message}")
    return problems


def _plannable(body: Body) -> Body:
    """A copy the plan can use while the name or a threshold is still being typed: it depends on neither."""
    plain = copy.deepcopy(body)
    plain["metadata"] = {"name": "plan-preview"}
    spec = plain["spec"]
    for holder in [spec.get("options") or {}, *[(c.get("options") or {}) for c in spec["categories"]]]:
        holder.pop("thresholds", None)
    return plain


def _plan_of(item: RenderedCategory) -> CategoryPlan:
    """What the render planned: its groups are the engine's own partition (a diagnosis's first round)."""
    orchestration = item.workflow.spec.orchestration
    status = item.workflow.status.orchestration if item.workflow.status is not None else None
    sizes = [len(group.nodes) for group in item.groups] or [0]
    return CategoryPlan(
        key=item.entry.key, test_scale=orchestration.test_scale or "", groups=len(item.groups),
        smallest=min(sizes), largest=max(sizes), diagnose=status is not None and status.diagnose is not None,
        diagnose_on_failure=orchestration.on_failure is not None and orchestration.on_failure.diagnose is not None,
        eligible=len(item.discovery.nodes), excluded=tuple((x.name, x.message or x.reason) for x in item.discovery.excluded),
    )


def _unplanned(cert: Certification, catalog: Catalog) -> tuple[tuple[CategoryPlan, ...], list[str]]:
    """Where the Nodes cannot be read: each category checked as far as it can be without them (check_category), and
    the problems `certification run` refuses such a user for, worded alike."""
    plans = []
    for index, category in enumerate(cert.spec.categories):
        try:
            entry, options = check_category(cert, index, catalog)
        except RenderError as failure:
            plans.append(CategoryPlan(key=category.key, error=str(failure)))
            continue
        plans.append(CategoryPlan(key=entry.key, test_scale=options.test_scale or entry.test_scales[0], unplanned=True,
                                  diagnose_on_failure=options.on_failure == "diagnose"))
    try:
        check_certification(cert, catalog, WHERE)
    except InputError as error:
        return tuple(plans), error.messages
    return tuple(plans), []


def plan(body: Body, nodes: list[dict[str, Any]] | None, catalog: Catalog) -> tuple[tuple[CategoryPlan, ...], list[str]]:
    """(plan per category, render problems) on `nodes` (None: they cannot be read, only what needs none is checked);
    empty while other fields do not validate."""
    try:
        cert = Certification.model_validate(_plannable(body))
    except ValidationError:
        return (), []
    if certification_problems(cert, catalog):
        return (), []
    if nodes is None:
        return _unplanned(cert, catalog)
    try:
        return tuple(_plan_of(item) for item in render_certification(cert, nodes, catalog, WHERE)), []
    except InputError as error:
        problems = error.messages
    plans = []
    for index, category in enumerate(cert.spec.categories):
        try:
            plans.append(_plan_of(render_category(cert, index, nodes, catalog)))
        except RenderError as failure:
            plans.append(CategoryPlan(key=category.key, error=str(failure)))
    return tuple(plans), problems


def _target(body: Body) -> TargetSpec | None:
    try:
        return TargetSpec.model_validate(body["spec"]["target"])
    except ValidationError:
        return None


# `compose: field.path: message`, as every problem is worded: the path says which field shows it.
_PROBLEM = re.compile(rf"^{WHERE}: (?P<path>[^:\s]+): (?P<message>.*)$")
_CATEGORY_OPTION = re.compile(r"^spec\.categories\[(?P<index>\d+)\]\.options\.(?P<alias>\w+)$")


def _at_fields(problems: list[str]) -> list[tuple[str, str]]:
    """(field path, message) of each problem, in order."""
    return [(found["path"], found["message"]) for problem in problems if (found := _PROBLEM.match(problem))]


def _option_messages(draft: Draft, problems: list[str]) -> dict[tuple[str, str], str]:
    """A message per option field: its own value's check first, else what the whole certification's checks and the
    plan said of it (nodesPerJob above the eligible nodes, onFailure with an intra-node scale, an option the category
    does not read), which only the status line showed."""
    messages = {}
    for item in draft.categories:
        for spec in OPTION_FIELDS:
            _, message = option_value(spec, item.options.get(spec.alias, ""))
            if message:
                messages[(item.key, spec.alias)] = message
    for path, message in _at_fields(problems):
        if (option := _CATEGORY_OPTION.match(path)) and int(option["index"]) < len(draft.categories):
            messages.setdefault((draft.categories[int(option["index"])].key, option["alias"]), message)
    return messages


def _once_per_threshold(problems: list[str]) -> list[str]:
    """The problems, with one per threshold: the form's row check said it first and says what is measured instead
    (the file check's "applies to no category" about the same row counted it twice)."""
    said: set[str] = set()
    kept = []
    for problem in problems:
        found = _PROBLEM.match(problem)
        path = found["path"] if found and found["path"].startswith("spec.options.thresholds.") else None
        if path in said:
            continue
        if path:
            said.add(path)
        kept.append(problem)
    return kept


def _names_message(problems: list[str]) -> str | None:
    """The first problem of a typed node name (an upper-case name is not "not in today's nodes", it cannot be one)."""
    return next((message for path, message in _at_fields(problems) if path.startswith("spec.target.nodeNames")), None)


def taken_message(name: str, taken: Collection[str]) -> str | None:
    """Why `name` cannot be submitted because a certification holds it already (the store would refuse it), or None."""
    return f"a certification named {name} exists already; choose another name (or delete that one first)" if name in taken else None


def review(draft: Draft, carried: Carried | None, nodes: list[dict[str, Any]] | None, catalog: Catalog,
           taken: Collection[str] = ()) -> Review:
    """Check the whole draft: the one function the compose screen calls after every change. `nodes`: today's Nodes, or
    None when this user may not list them. `taken`: the names of the certifications that exist (in the namespace it
    submits to)."""
    body = certification_body(draft, carried)
    text = to_yaml([body])
    selector, selector_message = parse_selector(draft.selector)
    gpu = [node for node in nodes or () if is_gpu_node(node)]
    target = _target(body) if selector is not None and nodes is not None else None
    known = None if nodes is None else {node_name(node) for node in nodes}
    metrics = _yielded_metrics(draft, catalog)
    threshold_messages = _threshold_messages(draft, metrics)
    problems = _form_problems(draft, selector_message, threshold_messages)
    collision = taken_message(str(body["metadata"].get("name") or ""), taken)
    if collision:
        problems.append(f"{WHERE}: metadata.name: {collision}")
    try:
        certification_from_text(WHERE, text, catalog)
    except InputError as error:
        problems += error.messages
    plans, render_problems = plan(body, nodes, catalog)
    every = _once_per_threshold(problems + render_problems)
    return Review(
        body=body, yaml=text, name_message=name_message(draft.name) or collision, selector_message=selector_message,
        matched=None if target is None else sum(1 for node in gpu if matches_target(node, target)), gpu_nodes=len(gpu),
        unknown_names=() if known is None else tuple(n for n in split_names(draft.node_names) if n not in known),
        names_message=_names_message(every), option_messages=_option_messages(draft, every),
        threshold_messages=threshold_messages, metrics=metrics, plan=plans, problems=tuple(dict.fromkeys(every)),
        nodes_unknown=NODES_UNKNOWN if nodes is None else None,
    )
