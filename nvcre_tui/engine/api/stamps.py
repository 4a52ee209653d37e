"""What our CRDs carry of the nvcre that made them: their schema's hash, its generation and nvcre's version.

`setup init` applies them stamped, and `setup crds` prints them stamped, so CRDs applied from its output (`kubectl apply`,
a GitOps repository) read as this nvcre's to `setup status` and to the engine's schema check, as init's do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from nvcre_tui import __version__
from nvcre_tui.engine.api.vocabulary import ANNOTATION_INSTALLED_BY_VERSION, ANNOTATION_SCHEMA_GENERATION, ANNOTATION_SCHEMA_HASH

# Bumped with every change of the CRDs' schema (tests/kube/test_schema_versions.py pins each generation's hashes, so a
# schema change without a bump fails there). 0 is what an install stamped with no generation is taken for: an nvcre that
# recorded none, older than generation 1.
SCHEMA_GENERATION = 4
PACKAGE_VERSION = __version__


def schema_hash(crd: Mapping[str, Any]) -> str:
    """A short, stable hash of a CRD's spec (keys sorted, so only content counts), less what changes no object: its
    short names and categories (kubectl's aliases), so renaming one does not make every install "another version"."""
    spec = dict(crd["spec"])
    spec["names"] = {k: v for k, v in (spec.get("names") or {}).items() if k not in ("shortNames", "categories")}
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def stamped(crd: dict[str, Any]) -> dict[str, Any]:
    """`crd` annotated with its schema hash, the schema generation and this nvcre's version (in place; returned)."""
    crd["metadata"].setdefault("annotations", {}).update({
        ANNOTATION_SCHEMA_HASH: schema_hash(crd), ANNOTATION_SCHEMA_GENERATION: str(SCHEMA_GENERATION),
        ANNOTATION_INSTALLED_BY_VERSION: PACKAGE_VERSION})
    return crd
