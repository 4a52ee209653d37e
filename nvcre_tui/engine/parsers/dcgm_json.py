"""`dcgmi diag -j` JSON of DCGM 3.x, 4.x and the 4.2 hybrid, with or without --iterations.

The document is walked, not validated against one schema: DCGM changed the shape between releases,
and a shape we did not expect must end in a ParseError, never in an empty pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.parsers.base import NO_DATA, WRONG_FORMAT, ParseError
from nvcre_tui.engine.parsers.dcgm_model import (
    FAILING,
    DcgmEntityResult,
    DcgmResult,
    DcgmTest,
    DcgmWarning,
    normalize_status,
    normalize_test_name,
    summary_status,
    verdict,
)
from nvcre_tui.engine.parsers.json_text import OBJECT_START, load_json_at

KEY_3X, KEY_4X = "DCGM GPU Diagnostic", "DCGM Diagnostic"
MAX_DOCUMENTS = 32  # a wrapper running dcgmi in a loop; more is not one diagnostic run


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value) < 20:
        return int(value.strip())
    return None


def _index(value: Any) -> int | None:
    """An entity index: a JSON integer >= 0, as DCGM writes entity_id (bool and text are not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
        return None
    return value


def _gpu_index(value: Any) -> int | None:
    """A 3.x gpu_id / gpu_ids part: an index, or its digits as text."""
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None
    return _index(value)


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 24 else f"{text[:21]}..."


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _warnings(raw: Any) -> tuple[DcgmWarning, ...]:
    """3.x used plain strings, later releases objects with error ids; accept a lone string too."""
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    warnings = []
    for item in items:
        if isinstance(item, str):
            warnings.append(DcgmWarning(item))
        elif isinstance(item, dict) and isinstance(item.get("warning"), str):
            warnings.append(DcgmWarning(item["warning"], _int(item.get("error_id")),
                                        _int(item.get("error_category")), _int(item.get("error_severity"))))
    return tuple(warnings)


def _info(raw: Any) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else [raw]
    return tuple(item for item in items if isinstance(item, str))


def _entity(result: dict[str, Any]) -> tuple[str, tuple[int, ...]] | str | None:
    """(label, GPU indices) from 4.x entity fields or 3.x gpu_id / gpu_ids; None for an entry that names no entity
    and has no status (no result); the field and value, as text, when the entity it names cannot be read."""
    if "entity_id" in result:
        entity_id = _index(result["entity_id"])
        group = _text(result.get("entity_group")) or "GPU"
        if entity_id is None:
            return f"entity_id {_shown(result['entity_id'])}"
        return f"{group} {entity_id}", (entity_id,) if group.upper() == "GPU" else ()
    key = "gpu_id" if "gpu_id" in result else "gpu_ids"
    raw = result.get(key)
    if raw is None:
        return ("all GPUs", ()) if "status" in result else None
    parts = [_gpu_index(part) for part in (raw.split(",") if isinstance(raw, str) else [raw])]
    if not parts or any(part is None for part in parts):
        return f"{key} {_shown(raw)}"
    gpus = tuple(part for part in parts if part is not None)
    return (f"GPU {gpus[0]}" if len(gpus) == 1 else "GPUs " + ",".join(map(str, gpus))), gpus


def _run_suffix(iteration: int) -> str:
    return f" (iteration {iteration + 1})" if iteration else ""


def _results(name: str, raw: Any, iteration: int, unreadable: list[str]) -> list[DcgmEntityResult]:
    """A test's entity results; an entry that cannot be read (no object, an entity that is no index) is left out
    and named in `unreadable` (never dropped silently: it may be the GPU that failed)."""
    where = f"{name}{_run_suffix(iteration)}"
    if raw is None:
        return []
    if not isinstance(raw, list):
        unreadable.append(f"{where}: results {_shown(raw)} is no list of results")
        return []
    results = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            if item is not None:
                unreadable.append(f"{where} results[{index}]: {_shown(item)} is no result object")
            continue
        entity = _entity(item)
        if isinstance(entity, str):
            unreadable.append(f"{where} results[{index}]: {entity} is no entity index")
            continue
        if entity is None:
            continue
        status = normalize_status(item.get("status"))
        results.append(DcgmEntityResult(entity[0], entity[1], status, _warnings(item.get("warnings")),
                                        _info(item.get("info"))))
    return results


def _test(category: str, raw: Any, path: str, iteration: int, unreadable: list[str]) -> DcgmTest | None:
    """The test at `path` (`test_categories[2].tests[0]`), or None for no test; a test whose name is no text is
    left out and named in `unreadable`, as are result entries that cannot be read."""
    if not isinstance(raw, dict):
        return None  # 3.x output has null entries between tests
    if not isinstance(raw.get("name"), str):
        unreadable.append(f"{path}{_run_suffix(iteration)}: name {_shown(raw.get('name'))} is no test name")
        return None
    name = normalize_test_name(raw["name"])
    entity_results = tuple(_results(name, raw.get("results"), iteration, unreadable))
    summary = raw["test_summary"] if isinstance(raw.get("test_summary"), dict) else {}
    if not entity_results and "status" not in summary:
        return None
    status = normalize_status(summary["status"]) if "status" in summary else summary_status(entity_results)
    return DcgmTest(category, name, status, entity_results, _warnings(summary.get("warnings")), iteration)


def _tests(tree: dict[str, Any], iteration: int, unreadable: list[str]) -> list[DcgmTest]:
    """Every test of one run's tree; a category list or tests list of another type is named in `unreadable`."""
    categories = tree.get("test_categories")
    if categories is not None and not isinstance(categories, list):
        unreadable.append(f"test_categories{_run_suffix(iteration)}: {_shown(categories)} is no list of categories")
        return []
    tests: list[DcgmTest] = []
    for index, category in enumerate(categories or []):
        if not isinstance(category, dict):
            continue
        path, raw_tests = f"test_categories[{index}]", category.get("tests")
        if raw_tests is not None and not isinstance(raw_tests, list):
            unreadable.append(f"{path}{_run_suffix(iteration)}: tests {_shown(raw_tests)} is no list of tests")
            continue
        name = _text(category.get("category")) or "Unknown"
        tests += [test for number, raw in enumerate(raw_tests or [])
                  if (test := _test(name, raw, f"{path}.tests[{number}]", iteration, unreadable)) is not None]
    return tests


@dataclass
class _Run:
    """What one diagnostic document (one iteration) holds."""

    format: str
    version: str | None
    driver: str | None
    tests: list[DcgmTest]
    runtime_error: str | None
    unreadable: list[str]


def _run(document: dict[str, Any], iteration: int) -> _Run:
    key = KEY_3X if KEY_3X in document else KEY_4X
    tree = document[key]
    if not isinstance(tree, dict):
        raise ParseError(WRONG_FORMAT, f"'{key}' is not an object")
    metadata = document["metadata"] if isinstance(document.get("metadata"), dict) else {}
    if key == KEY_3X:
        form = "3.x"
    elif metadata or "entity_groups" in document or "test_categories" not in tree:
        form = "4.x"  # (4.x prints only the version and runtime_error inside the tree when it cannot run)
    else:
        form = "hybrid"  # 4.2: the 3.x tree, with its version inside, renamed, holding entity results
    unreadable: list[str] = []
    tests = _tests(tree, iteration, unreadable)
    version = _text(metadata.get("version")) or _text(tree.get("version"))
    driver = _text(metadata.get("Driver Version Detected")) or _text(tree.get("Driver Version Detected"))
    error = _text(tree.get("runtime_error")) or _text(document.get("runtime_error"))
    return _Run(form, version, driver, tests, error.strip() if error and error.strip() else None, unreadable)


def _documents(text: str) -> tuple[list[Any], list[str], str | None]:
    """Every JSON document in `text` (a wrapper that ran dcgmi twice printed two), the lines of other text after the
    first (each read, none dropped unseen), and why the output looks cut off: a later document that does not decode."""
    first, end = load_json_at(text)
    documents, other = [first], []
    rest = text[end:]
    while rest.strip():
        found = OBJECT_START.search(rest)
        other += [line.strip() for line in rest[: found.start() if found else len(rest)].splitlines() if line.strip()]
        if found is None:
            break
        if len(documents) == MAX_DOCUMENTS:
            raise ParseError(WRONG_FORMAT, f"more than {MAX_DOCUMENTS} JSON documents: not one dcgmi diag run")
        try:
            document, end = load_json_at(rest[found.start():])
        except ParseError as error:
            return documents, other, f"a JSON document after the first does not decode ({error.message}): output cut off?"
        documents.append(document)
        rest = rest[found.start() + end:]
    return documents, other, None


def _runs_of(document: Any) -> tuple[list[dict[str, Any]], str | None]:
    """A top-level document's runs (its --iterations, or itself) and its "Overall Result"."""
    if not isinstance(document, dict):
        raise ParseError(WRONG_FORMAT, "JSON but not a dcgmi diag document")
    overall = _text(document.get("Overall Result"))
    if isinstance(document.get("iterations"), list):
        return [item for item in document["iterations"] if isinstance(item, dict) and (KEY_3X in item or KEY_4X in item)], overall
    if KEY_3X in document or KEY_4X in document:
        return [document], overall
    raise ParseError(WRONG_FORMAT, f"JSON but not dcgmi diag output (no '{KEY_4X}' or '{KEY_3X}' section)")


def parse_dcgm_json(text: str) -> DcgmResult:
    """The DcgmResult of `dcgmi diag -j` output (text may carry warning lines before it). Several documents count
    as iterations do (any failure fails); an `Error:` line after them is a runtime error, other text a note."""
    tops, other, cut = _documents(text)
    documents: list[dict[str, Any]] = []
    overall: str | None = None
    warning: str | None = None
    for index, top in enumerate(tops):
        if index and not (isinstance(top, dict) and (KEY_3X in top or KEY_4X in top or "iterations" in top)):
            other.append(json.dumps(top)[:200])  # a wrapper's own JSON log line: text beside the results, not a result
            continue
        runs_of, said = _runs_of(top)
        documents += runs_of
        if said is not None and (overall is None or normalize_status(said) in FAILING):
            overall, warning = said, _text(top.get("warning"))
    runs = [_run(item, index) for index, item in enumerate(documents)]
    tests = tuple(test for run in runs for test in run.tests)
    errors = [line[len("Error:"):].strip() or line for line in other if line.startswith("Error:")]
    runtime_error = next((run.runtime_error for run in runs if run.runtime_error), None) or "; ".join(errors) or None
    unreadable = tuple(problem for run in runs for problem in run.unreadable)
    if not tests and runtime_error is None and (overall is None or normalize_status(overall) not in FAILING):
        if unreadable:
            raise ParseError(WRONG_FORMAT, f"unreadable dcgmi diag result: {unreadable[0]}")
        raise ParseError(NO_DATA, "dcgmi diag output holds no test results")
    first = runs[0] if runs else _Run("4.x", None, None, [], None, [])
    return DcgmResult(
        format=first.format,
        version=first.version,
        driver=first.driver,
        tests=tests,
        runtime_error=runtime_error,
        iterations=max(len(runs), 1),
        overall=overall,
        failure=verdict(tests, runtime_error, overall, warning, unreadable=unreadable),
        ignored=tuple(line for line in other if not line.startswith("Error:")),
        incomplete=cut,
    )
