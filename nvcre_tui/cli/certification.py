"""`nvcre certification ...`: list-categories, render (and run, report, delete, list: run/, report.py, delete.py, listing.py)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from nvcre_tui.cli.kubeflags import add_kube_arguments, cluster_nodes, cluster_version, file_namespace_agrees
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.stdin import check_stdin_once
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.serialize import to_json, to_yaml
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube.config import cluster_configured
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import load_certification, load_nodes
from nvcre_tui.engine.planning.render import RenderedCategory, render_certification
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario, load_scenario


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `certification` command group."""
    parser = groups.add_parser("certification", aliases=["cert"], help="list catalog categories, render, run and report certifications")
    commands = parser.add_subparsers(title="certification commands", metavar="COMMAND", required=True)

    categories = commands.add_parser("list-categories", help="the catalog's categories")
    categories.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    add_kube_arguments(categories, namespace_help="accepted for symmetry; the catalog is the same on every cluster")
    categories.set_defaults(func=list_categories)

    render = commands.add_parser("render", help="validate a certification offline and print the Workflows it would create")
    render.add_argument("file", metavar="FILE", help="Certification YAML ('-' for stdin)")
    source = render.add_mutually_exclusive_group()
    source.add_argument("--nodes", metavar="NODES.yaml", help="Node objects to render on (default: the embedded simulated fleet)")
    source.add_argument("--scenario", metavar="S.yaml", help="render on a simulated fleet scenario")
    render.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    add_kube_arguments(render, namespace_help="the namespace the Workflows are rendered in (default: the file's, else default)")
    render.add_argument("--workloads", action="store_true",
                        help="print each group's workload objects (TrainJob + TrainingRuntime ...) instead of the Workflows")
    render.add_argument("--batch", action="store_true",
                        help="with --workloads: the fallback without Kubeflow Trainer (batch/v1 Indexed Job + headless Service)")
    render.set_defaults(func=render_command)

    from nvcre_tui.cli import delete, listing, logs, report, run  # run, report, delete, list and logs live in their own modules

    run.register(commands)
    report.register(commands)
    delete.register(commands)
    listing.register(commands)
    logs.register(commands)


def category_rows(catalog: Catalog) -> list[dict[str, Any]]:
    """One record per catalog entry (the list-categories output)."""
    return [
        {
            "domain": entry.domain, "variant": entry.variant, "title": entry.title, "framework": entry.framework,
            "testScales": list(entry.test_scales), "metrics": list(entry.metrics), "timeBudget": entry.time_budget,
            "perNode": entry.per_node, "description": entry.description,
        }
        for entry in sorted(catalog.entries.values(), key=lambda e: e.key)
    ]


def list_categories(args: argparse.Namespace) -> int:
    """Print the catalog."""
    rows = category_rows(default_catalog())
    if args.output == "json":
        print(to_json(rows))
    elif args.output == "yaml":
        print(to_yaml([rows]), end="")
    else:
        print_table(
            ("DOMAIN", "VARIANT", "FRAMEWORK", "TEST SCALES", "METRICS", "BUDGET"),
            [(r["domain"], r["variant"], r["framework"], ",".join(r["testScales"]), ",".join(r["metrics"]) or "-", r["timeBudget"]) for r in rows],
        )
    return 0


def target_nodes(nodes_file: str | None, scenario_file: str | None, args: argparse.Namespace | None = None) -> list[dict[str, Any]]:
    """Nodes from a file, a scenario, the cluster the kube flags name (read only), or the embedded default fleet."""
    given = [flag for flag, value in (("--nodes", nodes_file), ("--scenario", scenario_file),  # (argparse: not both of these)
                                      ("--kubeconfig/--context", args is not None and (args.kubeconfig or args.context))) if value]
    if len(given) > 1:
        raise InputError(f"{' and '.join(given)}: each names the nodes to plan on; give one")
    if nodes_file:
        return load_nodes(nodes_file)
    if args is not None and (args.kubeconfig or args.context):
        return asyncio.run(cluster_nodes(args, user_agent="nvcre-render"))[1]
    scenario = load_scenario(scenario_file) if scenario_file else default_scenario()
    return build_nodes(scenario)


def offline_note(args: argparse.Namespace, nodes: list[dict[str, Any]]) -> str | None:
    """What to say after planning on the embedded default fleet: its platform's settings (AWS EFA) are not yours."""
    if args.nodes or args.scenario or args.kubeconfig or args.context:
        return None
    how = "--kubeconfig or --context plans on its Nodes" if cluster_configured() else "--nodes FILE (kubectl get nodes -o yaml) plans on yours"
    return f"# planned offline on the embedded simulated fleet ({len(nodes)} nodes: {default_scenario().name}), not on your cluster: {how}"


def render_command(args: argparse.Namespace) -> int:
    """Validate offline; print one Workflow per category with its planned groups."""
    if args.batch and not args.workloads:
        raise InputError("--batch: only with --workloads")
    check_stdin_once(args)
    catalog = default_catalog()
    cert = load_certification(args.file, catalog)
    cert.metadata.namespace = file_namespace_agrees(args.namespace, cert.metadata.namespace, "<stdin>" if args.file == "-" else args.file)
    nodes = target_nodes(args.nodes, args.scenario, args)
    rendered = render_certification(cert, nodes, catalog, "<stdin>" if args.file == "-" else args.file)
    if args.workloads:
        _print_workloads(cert, rendered, args)
    else:
        documents = [item.workflow.to_wire() for item in rendered]
        if args.output == "json":
            print(to_json({"apiVersion": "v1", "kind": "List", "items": documents}))
        else:
            print(to_yaml(documents), end="")
    if note := offline_note(args, nodes):  # after what was planned: a refused certification says one line only
        print(note, file=sys.stderr)
    return 0


def _print_workloads(cert: Certification, rendered: list[RenderedCategory], args: argparse.Namespace) -> None:
    """Each planned group's workload objects: YAML documents under a comment naming category, group and
    nodes (kubectl apply -f takes the stream as is), or one JSON List."""
    from nvcre_tui.engine.workloads.plan import category_workloads

    # the cluster's Kubernetes, where its Nodes were read: a fabric's sidecar needs 1.29, as the runner finds
    version = asyncio.run(cluster_version(args, user_agent="nvcre-render")) if args.kubeconfig or args.context else None
    groups = [group for index, item in enumerate(rendered)
              for group in category_workloads(cert, index, item, trainer=not args.batch, server_version=version)]
    if args.output == "json":
        print(to_json({"apiVersion": "v1", "kind": "List", "items": [obj for group in groups for obj in group.objects]}))
        for g in groups:  # JSON has no comments: a group's fabric note goes to stderr, naming the group
            if g.note:
                print(f"nvcre: {g.category} {g.group}: {g.note}", file=sys.stderr)
        return
    chunks = [f"# {g.category} {g.group} (Job {g.job}) on {', '.join(g.nodes)}\n" + (f"# {g.note}\n" if g.note else "") + to_yaml(g.objects)
              for g in groups]
    print("---\n".join(chunks), end="")
