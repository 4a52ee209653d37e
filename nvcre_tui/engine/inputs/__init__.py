"""The one way nvcre reads YAML and JSON input: bounded reads, then strict parsing (see limits.py).

Imports only the leaf module errors: every layer may read input through it.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs.json_safe import parse_json
from nvcre_tui.engine.inputs.limits import MAX_DEPTH, MAX_LOG_LINE_CHARS, MAX_STATE_BYTES, MAX_WHOLE_OUTPUT_BYTES, MAX_YAML_BYTES, \
    TEXT_PROBE_CHARS
from nvcre_tui.engine.inputs.read import STDIN, STDIN_NAME, MissingInput, read_bytes, read_text
from nvcre_tui.engine.inputs.yaml_safe import parse_yaml_documents

__all__ = [
    "MAX_DEPTH", "MAX_LOG_LINE_CHARS", "MAX_STATE_BYTES", "MAX_WHOLE_OUTPUT_BYTES", "MAX_YAML_BYTES", "STDIN", "STDIN_NAME", "MissingInput",
    "TEXT_PROBE_CHARS",
    "load_json", "load_yaml_document", "load_yaml_documents", "parse_json", "parse_yaml_documents", "read_bytes", "read_text",
]


def load_yaml_documents(path: str, limit: int = MAX_YAML_BYTES) -> tuple[str, list[Any]]:
    """(display name, non-empty documents) of a YAML file, or stdin for "-"."""
    name, text = read_text(path, limit)
    return name, parse_yaml_documents(name, text)


def load_yaml_document(path: str, name: str | None = None, limit: int = MAX_YAML_BYTES) -> Any:
    """The one YAML document of a data file (None when empty); messages call the file `name`."""
    name, text = read_text(path, limit, name)
    documents = parse_yaml_documents(name, text)
    if len(documents) > 1:
        raise InputError(f"{name}: expected one YAML document, found {len(documents)}")
    return documents[0] if documents else None


def load_json(path: str, limit: int = MAX_STATE_BYTES) -> tuple[str, Any]:
    """(display name, value) of a JSON file; a missing file is MissingInput (an InputError)."""
    name, text = read_text(path, limit)
    return name, parse_json(name, text)
