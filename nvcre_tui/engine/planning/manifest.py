"""Read manifests (Certifications, node lists) from YAML files, with errors that name file and field."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine import inputs
from nvcre_tui.engine.api.base import API_VERSION, SERVER_SET_METADATA, InputObjectMeta
from nvcre_tui.engine.api.node_schema import node_problems
from nvcre_tui.engine.api.options import IMAGE_PATTERN, CategoryOptions
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRESENT
from nvcre_tui.engine.api.validation import pattern_problem, validation_messages
from nvcre_tui.engine.errors import InputError, field_path
from nvcre_tui.engine.names import DNS_SUBDOMAIN
from nvcre_tui.engine.inputs import MAX_YAML_BYTES, parse_yaml_documents
from nvcre_tui.engine.parsers.measurements import GOODPUT, STEP_TIME, TFLOPS_PER_GPU
from nvcre_tui.engine.planning.catalog import TEMPLATE_OPTIONS, Catalog, CatalogEntry


def read_text(path: str) -> tuple[str, str]:
    """(display name, text) of a YAML file, or of stdin for "-" (bounded: see inputs/limits.py)."""
    return inputs.read_text(path, MAX_YAML_BYTES)


def certification_problems(cert: Certification, catalog: Catalog) -> list[str]:
    """Checks the models cannot make alone: catalog membership, metrics and testScales per entry."""
    problems = []
    for index, category in enumerate(cert.spec.categories):
        base: tuple[str | int, ...] = ("spec", "categories", index)
        unknown = catalog.unknown_category(category.domain, category.variant)
        if unknown:
            problems.append((field_path((*base, unknown[0])), unknown[1]))
            continue
        entry = catalog.find(category.domain, category.variant)
        assert entry is not None
        options = cert.spec.category_options(index)
        # Global thresholds apply to the categories that measure them; a category's own must all apply.
        own = category.options.thresholds if category.options else None
        for key in sorted(own or {}):
            if key not in entry.metrics:
                yields = ", ".join(entry.metrics) or "no metrics (pass/fail by exit status)"
                problems.append((field_path((*base, "options", "thresholds", key)), f"{entry.key} does not measure {key}; it yields {yields}"))
        if options.test_scale and options.test_scale not in entry.test_scales:
            problems.append((
                field_path((*base, "options", "testScale")),
                f"{entry.key} does not run at {options.test_scale}; it supports {', '.join(entry.test_scales)}",
            ))
        short = _too_short_for(options, entry)
        if short:  # named where maxSteps was set: the category's options, spec.options, or the spec itself
            where = ((*base, "options") if category.options and category.options.max_steps is not None
                     else ("spec", "options") if cert.spec.options and cert.spec.options.max_steps is not None else ("spec",))
            problems.append((field_path((*where, "maxSteps")), short))
        if options.image and _runs_as_root_on_the_node(entry):
            where = ((*base, "options") if category.options and category.options.image else ("spec", "options")
                     if cert.spec.options and cert.spec.options.image else ("spec",))
            problems.append((field_path((*where, "image")), f"{entry.key} runs privileged on the node's network: only with the catalog's "
                             "image (one a certification names would run as root on the node, on behalf of whoever may create "
                             "Certifications); leave it out"))
    problems += _global_threshold_problems(cert, catalog)
    problems += _option_problems(cert, catalog)
    problems += _pod_field_problems(cert)
    return [f"{path}: {message}" for path, message in problems]


def _runs_as_root_on_the_node(entry: CatalogEntry) -> bool:
    """Whether the entry's pods are privileged or on the host network (DCGM level 4) on some platform."""
    return any(bool(template.get(key)) for template in (entry.template, *(o.patch for o in entry.overrides))
               for key in ("privileged", "hostNetwork"))


def _global_threshold_problems(cert: Certification, catalog: Catalog) -> list[tuple[str, str]]:
    """A global threshold applies to the categories that measure its metric and set no thresholds of their own
    (theirs replace the global ones whole); one that applies to none would judge nothing, and the certification
    would pass without it."""
    entries = [(category, catalog.find(category.domain, category.variant)) for category in cert.spec.categories]
    if any(entry is None for _, entry in entries):
        return []  # an unknown category is refused by name already
    inline = CategoryOptions.model_validate(CategoryOptions.set_fields(cert.spec))
    problems = []
    for base, options in ((("spec",), inline), (("spec", "options"), cert.spec.options)):
        for key in sorted((options.thresholds if options else None) or {}):
            if any(entry is not None and key in entry.metrics and not (category.options and category.options.thresholds is not None)
                   for category, entry in entries):
                continue
            measured = [entry.key for category, entry in entries if entry is not None and key in entry.metrics]
            why = (f"{', '.join(measured)} {'measures' if len(measured) == 1 else 'measure'} it but set thresholds of "
                   "their own, which replace the global ones" if measured else "no category of the certification measures it")
            problems.append((field_path((*base, "thresholds", key)), f"applies to no category: {why}"))
    return problems


def _pod_field_problems(cert: Certification) -> list[tuple[str, str]]:
    """An image and a scheduler name as the API server takes them in a pod spec. Checked here, on input (as every
    check of certification_problems, skipped for a started certification), not in the models: a certification an
    earlier nvcre accepted stays readable and keeps running."""
    found = []
    scheduler = cert.spec.gang_scheduler
    if scheduler is not None and not (len(scheduler.scheduler_name) <= 253 and re.fullmatch(DNS_SUBDOMAIN, scheduler.scheduler_name)):
        found.append((field_path(("spec", "gangScheduler", "schedulerName")), pattern_problem(DNS_SUBDOMAIN, scheduler.scheduler_name)))
    placed: list[tuple[tuple[str | int, ...], CategoryOptions | None]] = [(("spec", "options"), cert.spec.options)]
    placed += [(("spec", "categories", index, "options"), category.options) for index, category in enumerate(cert.spec.categories)]
    for where, options in placed:
        if options is not None and options.image is not None and not re.fullmatch(IMAGE_PATTERN, options.image):
            found.append((field_path((*where, "image")), pattern_problem(IMAGE_PATTERN, options.image)))
    return found


# Training speed and goodput are measured on steps logged past warm-up (parsers/training_model.py PROFILES: Megatron's
# first 10 steps are warm-up and it logs every 10th), so a run needs 20 steps before a step-time, TFLOP/s or goodput
# threshold has anything to judge. (planning may not import the parsers; a test holds the two together.)
WARMUP_STEPS = 10
LEAST_MEASURED_STEPS = 20


def _too_short_for(options: CategoryOptions, entry: CatalogEntry) -> str | None:
    """Why the category's maxSteps leaves it nothing to measure (every logged step warm-up), or None: such a run
    measures no goodput, TFLOP/s or step time, and no measurement is never a pass (controllers/job.py), thresholds or
    not; those its thresholds name are named."""
    measured = [key for key in (GOODPUT, TFLOPS_PER_GPU, STEP_TIME) if key in entry.metrics]
    named = sorted(key for key in options.thresholds or {} if key in measured)
    steps = options.max_steps
    if not measured or steps is None or not WARMUP_STEPS <= steps < LEAST_MEASURED_STEPS:  # fewer log nothing: refused apart
        return None
    minimum = entry.option_minimums.get("maxSteps")
    if minimum is not None and steps < minimum.least:  # the catalog's least refuses it already (option_problem): one line
        return None
    return (f"{entry.key} measures {' and '.join(named or sorted(measured))} on steps past warm-up (the first {WARMUP_STEPS}), "
            f"and maxSteps {steps} logs none, which never passes: give at least {LEAST_MEASURED_STEPS} (-1: no step limit)")


# Options of NVCRE's checkpoint restarts, which nvcre does not implement: set, they would change nothing.
CHECKPOINT_OPTIONS = ("enableCheckpoint", "storageClassName", "storageSize", "saveTopK", "maxRestarts")
NO_CHECKPOINTS = ("used only by checkpoint restarts, which nvcre does not implement (a training run is measured from "
                  "start to end, and a failed run fails its group); leave it out")


def option_problem(key: str, value: Any, entries: list[CatalogEntry], catalog: Catalog) -> str | None:
    """Why setting option `key` to `value` for these categories would change nothing, or None."""
    if key in CHECKPOINT_OPTIONS and value is not False:
        return NO_CHECKPOINTS
    if key in TEMPLATE_OPTIONS and not any(key in entry.template_options for entry in entries):
        taken_by = ", ".join(catalog.readers(key)) or "no category"
        if len(entries) == 1:
            return f"{entries[0].key} does not read {key} (taken by {taken_by})"
        return f"none of the certification's categories reads {key} (taken by {taken_by})"
    for entry in entries:
        minimum = entry.option_minimums.get(key)
        if minimum is not None and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < minimum.least:
            return f"{entry.key} needs {key} of at least {minimum.least}, got {value}: {minimum.why}"
    return None


# Orchestration options and the ways of running that read them; elsewhere they would change nothing: intra-node and
# per-node categories run one node per Job, intra-rack one clique per Job, diagnose plans its own groups.
SCALE_OPTIONS: dict[str, tuple[str, ...]] = {
    "nodesPerJob": ("testScale full-scale",),
    "minGroupSize": ("testScale diagnose", "onFailure: diagnose"),
}


def runs_as(entry: CatalogEntry, test_scale: str | None, on_failure: str | None) -> list[str]:
    """How a category runs with these options, in SCALE_OPTIONS' words (unknown testScales: as the catalog default)."""
    if entry.per_node:
        return ["one node per Job"]
    scale = test_scale if test_scale in entry.test_scales else entry.test_scales[0]
    return [f"testScale {scale}"] + (["onFailure: diagnose"] if on_failure == "diagnose" else [])


def scale_problem(key: str, readers: list[tuple[CatalogEntry, list[str]]]) -> str | None:
    """Why option `key` would change nothing for these categories (each with runs_as), or None."""
    wanted = SCALE_OPTIONS.get(key)
    if wanted is None or not readers or any(set(ways) & set(wanted) for _, ways in readers):
        return None
    read_by = " or ".join(wanted)
    if len(readers) == 1:
        entry, ways = readers[0]
        return f"{entry.key} runs {' with '.join(ways)}, which does not read {key} (read by {read_by}); leave it out"
    return f"none of the certification's categories reads {key} (read by {read_by}); leave it out"


def _option_problems(cert: Certification, catalog: Catalog) -> list[tuple[str, str]]:
    """Options that would change nothing: checkpoint options, a template option no category of theirs reads, and an
    orchestration option no category of theirs runs in a way that reads (SCALE_OPTIONS)."""
    entries = [catalog.find(c.domain, c.variant) for c in cert.spec.categories]
    known = [entry for entry in entries if entry is not None]
    ways = {}
    for index, entry in enumerate(entries):
        if entry is not None:
            own = cert.spec.category_options(index)
            ways[index] = runs_as(entry, own.test_scale, own.on_failure)
    every = [(entry, ways[index]) for index, entry in enumerate(entries) if entry is not None]
    inline = CategoryOptions.model_validate(CategoryOptions.set_fields(cert.spec))
    scopes: list[tuple[tuple[str | int, ...], CategoryOptions | None, list[CatalogEntry], list[tuple[CatalogEntry, list[str]]]]] = [
        (("spec",), inline, known, every), (("spec", "options"), cert.spec.options, known, every)]
    scopes += [(("spec", "categories", index, "options"), category.options, [entry], [(entry, ways[index])])
               for index, (category, entry) in enumerate(zip(cert.spec.categories, entries, strict=True)) if entry is not None]
    problems = []
    for base, options, readers, running in scopes:
        for key, value in (options.to_wire() if options else {}).items():
            problem = (option_problem(key, value, readers, catalog) or scale_problem(key, running)) if readers else None
            if problem:
                problems.append((field_path((*base, key)), problem))
    return problems


def load_certification(path: str, catalog: Catalog) -> Certification:
    """Read, validate and catalog-check one Certification; InputError lists every problem."""
    name, text = read_text(path)
    return certification_from_text(name, text, catalog)


CATEGORY_FLAG = "--category"


def certification_for_categories(keys: list[str], name: str, catalog: Catalog, options: dict[str, Any] | None = None,
                                  flags: dict[str, str] | None = None) -> Certification:
    """A Certification of these catalog categories (`domain/variant`, as `run --category` takes them) on every GPU
    node (`nvidia.com/gpu.present=true`), named `name`; each category takes those of `options` (wire names) it reads.
    InputError names a key that is not one, or an option (by its flag in `flags`, option -> flag) that would change
    nothing."""
    categories: list[dict[str, Any]] = []
    for key in keys:
        domain, slash, variant = key.partition("/")
        if not slash or not domain or not variant or "/" in variant:
            raise InputError(f"{CATEGORY_FLAG}: expected DOMAIN/VARIANT (see `nvcre certification list-categories`), got {key!r}")
        categories.append({"domain": domain, "variant": variant})
    entries = [catalog.find(c["domain"], c["variant"]) for c in categories]
    known = [entry for entry in entries if entry is not None]
    running = [(entry, runs_as(entry, (options or {}).get("testScale"), (options or {}).get("onFailure"))) for entry in known]
    for option, value in (options or {}).items() if len(known) == len(entries) else ():  # else: the unknown is told
        problem = option_problem(option, value, known, catalog) or scale_problem(option, running)
        if problem:
            raise InputError(f"{(flags or {}).get(option, option)}: {problem}")
    for category, entry in zip(categories, entries, strict=True):  # each takes the flags it reads (one at least does)
        own = {k: v for k, v in (options or {}).items() if _reads(entry, k, options or {})}
        if own:
            category["options"] = own
    document = {"apiVersion": API_VERSION, "kind": "Certification", "metadata": {"name": name},
                "spec": {"target": {"nodeSelector": {LABEL_GPU_PRESENT: "true"}}, "categories": categories}}
    return certification_from_text(CATEGORY_FLAG, json.dumps(document), catalog)


def _reads(entry: CatalogEntry | None, key: str, options: dict[str, Any]) -> bool:
    """Whether a category (None: not in the catalog) run with `options` reads option `key`."""
    if key in TEMPLATE_OPTIONS:
        return entry is not None and key in entry.template_options
    return entry is None or scale_problem(key, [(entry, runs_as(entry, options.get("testScale"), options.get("onFailure")))]) is None


def certification_from_text(name: str, text: str, catalog: Catalog) -> Certification:
    """As load_certification, from text already read (the console's compose screen uses this)."""
    documents = parse_yaml_documents(name, text)
    if len(documents) != 1:
        raise InputError(f"{name}: expected exactly one Certification document, found {len(documents)}")
    document = documents[0]
    if not isinstance(document, dict):
        raise InputError(f"{name}: a Certification must be a mapping, got {type(document).__name__}")
    document, problems = _input_metadata(name, document)
    try:
        cert = Certification.model_validate(document)
    except ValidationError as error:
        raise InputError(list(dict.fromkeys(problems + validation_messages(error, name)))) from None
    if problems:
        raise InputError(problems)
    problems = certification_problems(cert, catalog)
    if problems:
        raise InputError([f"{name}: {problem}" for problem in problems])
    return cert


# metadata fields a certification file may not carry, and why (any other unknown one is refused as unknown).
REFUSED_METADATA = {
    **dict.fromkeys(SERVER_SET_METADATA, "set by the server, not in a certification file"),
    "generateName": "not taken: a certification is named by metadata.name (`run --name` gives another)",
}


def _input_metadata(name: str, document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the document without refused metadata fields, the problems of its metadata as an input file writes it).
    ObjectMeta keeps what the server sets, for objects read back; a file is held to InputObjectMeta."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return document, []  # missing or not a mapping: the Certification model says so
    problems = [f"{name}: metadata.{key}: {REFUSED_METADATA[key]}" for key in metadata if key in REFUSED_METADATA]
    kept = {key: value for key, value in metadata.items() if key not in REFUSED_METADATA}  # each problem told once
    try:
        InputObjectMeta.model_validate(kept)
    except ValidationError as error:
        problems += validation_messages(error, name, ("metadata",))
    return {**document, "metadata": kept}, problems


NODE_LIST_KINDS = ("List", "NodeList")  # `kubectl get nodes -o yaml`, the API's own list


def nodes_from_documents(name: str, documents: list[Any]) -> list[dict[str, Any]]:
    """Nodes from a NodeList / List, a YAML list, or one Node per document; each must have a name."""
    if len(documents) == 1 and isinstance(documents[0], dict) and "items" in documents[0]:
        items, prefix = documents[0]["items"], "items"
        listed = documents[0]
        if listed.get("kind", "List") not in NODE_LIST_KINDS:  # a PodList's items are no Nodes, even when they look it
            raise InputError(f"{name}: kind: must be List or NodeList, got {listed.get('kind')!r}")
        if listed.get("apiVersion", "v1") != "v1":
            raise InputError(f"{name}: apiVersion: must be v1, got {listed.get('apiVersion')!r}")
    elif len(documents) == 1 and isinstance(documents[0], list):
        items, prefix = documents[0], ""
    else:
        items, prefix = documents, "document"
    if isinstance(items, list) and not items:  # `kubectl get nodes -o yaml` with no node: nothing to certify
        raise InputError(f"{name}: {prefix or 'the list'} holds no Node: give at least one")
    if not isinstance(items, list):
        raise InputError(f"{name}: expected a list of Node objects")
    problems = []
    for index, node in enumerate(items):
        where = f"{prefix}[{index}]" if prefix else f"[{index}]"
        if not isinstance(node, dict):
            problems.append(f"{name}: {where}: must be a Node mapping")
        elif node.get("kind", "Node") != "Node":
            problems.append(f"{name}: {where}.kind: must be Node, got {node.get('kind')!r}")
        elif node.get("apiVersion", "v1") != "v1":
            problems.append(f"{name}: {where}.apiVersion: must be v1 (Nodes are core/v1), got {node.get('apiVersion')!r}")
        elif not isinstance(node.get("metadata"), dict) or not node["metadata"].get("name"):
            problems.append(f"{name}: {where}.metadata.name: required field is missing")
        else:
            problems += node_problems(node, name, (*((prefix,) if prefix else ()), index))
    if problems:
        raise InputError(problems)
    names = [node["metadata"]["name"] for node in items]
    duplicates = sorted(n for n, seen in Counter(names).items() if seen > 1)
    if duplicates:
        problems.append(f"{name}: duplicate node names: {', '.join(map(str, duplicates))}")
    if problems:
        raise InputError(problems)
    return items


def load_nodes(path: str) -> list[dict[str, Any]]:
    """Read Node objects from a YAML file."""
    name, text = read_text(path)
    return nodes_from_documents(name, parse_yaml_documents(name, text))
