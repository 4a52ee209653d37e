"""Read manifests (Certifications, node lists) from YAML files, with errors that name file and field."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from nvcre_tui.engine.api import Certification
from nvcre_tui.engine.catalog import Catalog
from nvcre_tui.engine.errors import InputError, field_path
from nvcre_tui.engine.validation import validation_messages


def read_text(path: str) -> tuple[str, str]:
    """(display name, text) of a file, or of stdin for "-"."""
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {getattr(error, 'strerror', None) or error}") from None


def parse_yaml_documents(name: str, text: str) -> list[Any]:
    """Every non-empty YAML document in `text`; a syntax error names file, line and column."""
    try:
        documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise InputError(f"{where}: invalid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{name}: invalid YAML: {error}") from None
    return documents


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
        for key in sorted(options.thresholds or {}):
            if key not in entry.metrics:
                yields = ", ".join(entry.metrics) or "no metrics (pass/fail by exit status)"
                problems.append((field_path((*base, "options", "thresholds", key)), f"{entry.key} does not measure {key}; it yields {yields}"))
        if options.test_scale and options.test_scale not in entry.test_scales:
            problems.append((
                field_path((*base, "options", "testScale")),
                f"{entry.key} does not run at {options.test_scale}; it supports {', '.join(entry.test_scales)}",
            ))
    return [f"{path}: {message}" for path, message in problems]


def load_certification(path: str, catalog: Catalog) -> Certification:
    """Read, validate and catalog-check one Certification; InputError lists every problem."""
    name, text = read_text(path)
    return certification_from_text(name, text, catalog)


def certification_from_text(name: str, text: str, catalog: Catalog) -> Certification:
    """As load_certification, from text already read (the console's compose screen uses this)."""
    documents = parse_yaml_documents(name, text)
    if len(documents) != 1:
        raise InputError(f"{name}: expected exactly one Certification document, found {len(documents)}")
    document = documents[0]
    if not isinstance(document, dict):
        raise InputError(f"{name}: a Certification must be a mapping, got {type(document).__name__}")
    try:
        cert = Certification.model_validate(document)
    except ValidationError as error:
        raise InputError(validation_messages(error, name)) from None
    problems = certification_problems(cert, catalog)
    if problems:
        raise InputError([f"{name}: {problem}" for problem in problems])
    return cert
