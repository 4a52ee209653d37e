"""`nvcre setup ...`: what a cluster needs before nvcre runs there (the CustomResourceDefinitions)."""

from __future__ import annotations

import argparse
from typing import Any

from nvcre_tui.cli.output import to_json, to_yaml
from nvcre_tui.engine.api import RESOURCES, Resource
from nvcre_tui.engine.crd import crd_for
from nvcre_tui.engine.errors import InputError


def register(groups: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `setup` command group."""
    parser = groups.add_parser("setup", help="print what a cluster needs before nvcre runs there")
    commands = parser.add_subparsers(title="setup commands", metavar="COMMAND", required=True)

    crds = commands.add_parser(
        "crds",
        help="print the CustomResourceDefinitions (pipe to `kubectl apply --server-side -f -`)",
        description="Print the nvcre.nvidia.com/v1alpha1 CustomResourceDefinitions, generated from the API models.",
    )
    crds.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml",
                      help="multi-document YAML (default) or a JSON v1 List")
    crds.add_argument("--kind", action="append", metavar="KIND",
                      help="only this kind (kind, plural or short name; repeatable)")
    crds.set_defaults(func=print_crds)


def kind_named(name: str) -> type[Resource]:
    """The resource a user means by `name`: its kind, plural or a short name, any case."""
    wanted = name.strip().lower()
    for model in RESOURCES:
        if wanted in {model.KIND.lower(), model.PLURAL, *model.SHORT_NAMES}:
            return model
    known = ", ".join(model.KIND for model in RESOURCES)
    raise InputError(f"--kind: unknown kind {name!r}; known kinds: {known}")


def selected_crds(kinds: list[str] | None) -> list[dict[str, Any]]:
    """The CRDs of the named kinds (all, in API order, when none are named)."""
    models = RESOURCES if not kinds else tuple(dict.fromkeys(kind_named(kind) for kind in kinds))
    return [crd_for(model) for model in models]


def print_crds(args: argparse.Namespace) -> int:
    """Print the CRDs as multi-document YAML or a JSON List."""
    crds = selected_crds(args.kind)
    if args.output == "json":
        print(to_json({"apiVersion": "v1", "kind": "List", "items": crds}))
    else:
        print(to_yaml(crds), end="")
    return 0
