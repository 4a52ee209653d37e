"""Objects as text: block-style multi-document YAML and indented JSON, the way `render`, `setup`, the
compose preview and the reports print manifests (JSON with control characters escaped for a terminal)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from nvcre_tui.engine.printable import json_printable


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


class _Dumper(yaml.SafeDumper):
    """Block-style YAML with multi-line strings as literal blocks."""


_Dumper.add_representer(str, _str_presenter)


def to_yaml(documents: Sequence[Any]) -> str:
    """Multi-document YAML, keys in insertion order."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def to_json(value: Any) -> str:
    """Indented JSON (control characters escaped, so it is safe on a terminal)."""
    return json_printable(json.dumps(value, indent=2, ensure_ascii=False))
