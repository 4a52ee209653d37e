"""`nvcre cluster info`: what a certification would find on the cluster (as NVCRE's `cluster info`): the platform,
the GPU products, and the GPU nodes by the clique label intra-rack groups them by. Reads Nodes only, and writes nothing."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from nvcre_tui.cli.kubeflags import add_kube_arguments, check_namespace, cluster_nodes
from nvcre_tui.cli.output import print_table
from nvcre_tui.engine.api.serialize import to_json, to_yaml
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.names import is_label_key
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.planning.survey import Survey, survey


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `cluster` command group."""
    parser = groups.add_parser("cluster", help="what nvcre finds on the cluster: platform, GPU products, racks")
    commands = parser.add_subparsers(title="cluster commands", metavar="COMMAND", required=True)
    info = commands.add_parser(
        "info", help="the platform, GPU products and GPU nodes by rack, as a certification would find them",
        description="Read the Nodes (of the configured cluster, a file, or the simulated fleet) with discovery's rules: "
                    "GPU nodes are labelled nvidia.com/gpu.present=true, cordoned, not Ready and partitioned-GPU ones are excluded.")
    info.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    info.add_argument("--topology-key", metavar="LABEL",
                      help="group the GPU nodes by this node label (default: nvidia.com/gpu.clique, as intra-rack and diagnose)")
    info.add_argument("--nodes", metavar="NODES.yaml", help="Node objects from a file ('-': stdin), e.g. `kubectl get nodes -o yaml`")
    info.add_argument("--sim", action="store_true", help="the embedded simulated fleet even when a cluster is configured")
    info.add_argument("--scenario", metavar="S.yaml", help="a simulated fleet scenario")
    add_kube_arguments(info, namespace_help="accepted for symmetry: Nodes have no namespace")
    info.set_defaults(func=info_command)


def info_command(args: argparse.Namespace) -> int:
    """Print the survey of the fleet the flags name."""
    check_namespace(args.namespace)  # accepted for symmetry, and checked as everywhere
    if args.topology_key is not None and not is_label_key(args.topology_key):
        raise InputError(f"--topology-key: {args.topology_key!r} is not a label key ([prefix/]name, as kubectl takes it)")
    where, nodes = _nodes(args)
    found = survey(nodes, args.topology_key)
    if args.output == "json":
        print(to_json({"source": where, **found.to_json()}))
    elif args.output == "yaml":
        print(to_yaml([{"source": where, **found.to_json()}]), end="")
    else:
        _print(where, found)
    return 0


def _nodes(args: argparse.Namespace) -> tuple[str, list[dict[str, Any]]]:
    """(where they came from, the Node objects): a file, the configured cluster, else the simulated fleet."""
    from nvcre_tui.cli.session import on_cluster
    from nvcre_tui.cli.stdin import check_stdin_once
    from nvcre_tui.engine.planning.manifest import load_nodes
    from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario, load_scenario

    check_stdin_once(args)  # --nodes - or --scenario - on a terminal: refused, not waited on
    if args.nodes:
        others = [flag for flag, given in (("--kubeconfig/--context", args.kubeconfig or args.context), ("--sim", args.sim),
                                           ("--scenario", args.scenario)) if given]
        if others:
            raise InputError(f"--nodes and {others[0]}: each names the nodes to read; give one")
        return ("stdin" if args.nodes == "-" else args.nodes), load_nodes(args.nodes)
    if on_cluster(args):
        return asyncio.run(cluster_nodes(args, user_agent="nvcre-cluster-info"))
    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    return f"the simulator ({scenario.name})", build_nodes(scenario)


EXCLUDED_WORDS = {"Cordoned": "cordoned", "NotReady": "not Ready", "PartitionedGPUs": "with partitioned GPUs"}


def _print(where: str, found: Survey) -> None:
    """The survey as NVCRE prints it: a few lines, then the domains as a table. Names and labels come from the
    cluster: control characters in them are neutralised."""
    left_out = ", ".join(f"{count} {EXCLUDED_WORDS.get(reason, reason)}" for reason, count in found.excluded.items())
    cordoned = f", {left_out} (excluded)" if left_out else ""
    lines = [f"Source:        {where}",
             f"Nodes:         {found.nodes} ({found.gpu_nodes} with GPUs{cordoned})",
             f"Platform:      {found.platform}" + (f" ({found.platform_problem})" if found.platform_problem else ""),
             f"GPU:           {found.architecture or 'none labelled'}"]
    lines += [f"  {p.product}: {p.nodes} node{'s' if p.nodes != 1 else ''}, {p.gpus} GPUs" for p in found.products]
    lines += [f"Note:          {note}" for note in (found.unadvertised_note(), found.unlabelled_note()) if note is not None]
    lines.append(f"Topology key:  {found.topology_key} ({'intra-rack, diagnose' if found.topology_key_detected else 'given'})")
    for line in lines:
        print(printable(line, newlines=False))
    if found.domains:
        print_table(("DOMAIN", "NODES", "GPUS", "CORDONED"), [(d.name, d.nodes, d.gpus, d.cordoned) for d in found.domains])
