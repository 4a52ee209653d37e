"""`nvcre setup crds`: the CRDs, chosen by --kind, printed as YAML or a JSON List."""

from __future__ import annotations

import argparse
from typing import Any

from nvcre_tui.engine.api.crd import crd_for
from nvcre_tui.engine.api.resources import RESOURCES, Resource
from nvcre_tui.engine.api.serialize import to_json, to_yaml
from nvcre_tui.engine.api.stamps import stamped
from nvcre_tui.engine.errors import InputError


# The short names before they took the nv prefix (cert-manager owns cert, Argo wf): --kind still understands them,
# so scripts written against them keep working; the CRDs no longer declare them.
FORMER_SHORT_NAMES = {"cert": "Certification", "certs": "Certification", "wf": "Workflow", "wlr": "WorkloadRun"}


def kind_named(name: str) -> type[Resource]:
    """The resource a user means by `name`: its kind, plural or a short name (or a former one), any case."""
    wanted = name.strip().lower()
    wanted = FORMER_SHORT_NAMES.get(wanted, wanted).lower()
    for model in RESOURCES:
        if wanted in {model.KIND.lower(), model.PLURAL, *model.SHORT_NAMES}:
            return model
    known = ", ".join(model.KIND for model in RESOURCES)
    raise InputError(f"--kind: unknown kind {name!r}; known kinds: {known}")


def selected_crds(kinds: list[str] | None) -> list[dict[str, Any]]:
    """The CRDs of the named kinds (all, in API order, when none are named), stamped as `setup init` applies them: CRDs
    applied from this output read as this nvcre's to `setup status` and the engine."""
    models = RESOURCES if not kinds else tuple(dict.fromkeys(kind_named(kind) for kind in kinds))
    return [stamped(crd_for(model)) for model in models]


def print_crds(args: argparse.Namespace) -> int:
    """Print the CRDs as multi-document YAML or a JSON List."""
    crds = selected_crds(args.kind)
    if args.output == "json":
        print(to_json({"apiVersion": "v1", "kind": "List", "items": crds}))
    else:
        print(to_yaml(crds), end="")
    return 0
