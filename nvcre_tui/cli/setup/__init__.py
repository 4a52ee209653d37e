"""`nvcre setup ...`: what a cluster needs before nvcre runs there.

`crds` prints our CustomResourceDefinitions; `init` applies them with the namespace, the engine's
ServiceAccount and RBAC (server-side apply, field manager `nvcre`); `controller` the Deployment running `nvcre controller`
(engine/kube/deployment.py); `status` tells what is installed and what nvcre relies on; `reset` removes what init and
controller made.

This module registers the commands; each has its module (crds, install, controller, status, reset), beside what they
share: shared (flags, the cluster store), preflight (RBAC asked before anything is written), bindings (the
cluster-wide bindings installs share), crdwait, nodes (the simulated fleet's Nodes) and namespace (finalisation).
"""

from __future__ import annotations

import argparse

from nvcre_tui.cli.kubeflags import add_kube_arguments
from nvcre_tui.cli.setup.controller import controller_command
from nvcre_tui.cli.setup.crds import print_crds
from nvcre_tui.cli.setup.install import init_command
from nvcre_tui.cli.setup.reset import reset_command
from nvcre_tui.cli.setup.shared import timeout_seconds
from nvcre_tui.cli.setup.status import status_command

NAMESPACE_HELP = "the namespace nvcre is installed in: its engine's ServiceAccount, RBAC and Lease (default: nvcre-system)"
INSTALL_FLAGS = ("--install-namespace", "-n", "--namespace")  # the name every command uses; -n as `setup` always took it


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `setup` command group."""
    parser = groups.add_parser("setup", help="install nvcre on a cluster, check it, remove it")
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
    add_kube_arguments(crds, namespace_help="accepted for symmetry: CRDs are cluster-scoped and printing them reads no cluster")
    crds.set_defaults(func=print_crds)

    init = commands.add_parser(
        "init", help="install the CRDs, the namespace, the engine's ServiceAccount and RBAC",
        description="Server-side apply (field manager nvcre) of the CRDs, the install namespace, the "
                    "nvcre-engine ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding; "
                    "waits until the CRDs are Established.")
    init.add_argument("--dry-run", action="store_true",
                      help="print what would be applied (validated by a server-side dry run when a cluster is configured)")
    init.add_argument("--sim-runner", action="store_true",
                      help="also let the engine's ServiceAccount write Nodes, for an in-cluster `nvcre controller "
                           "--sim-runner` on a cluster without GPUs (the simulated fleet registers and cordons Nodes)")
    init.add_argument("--timeout", type=timeout_seconds, default=60.0, metavar="SECONDS",
                      help="how long to wait for the CRDs to be Established (default 60)")
    init.add_argument("--force", action="store_true",
                      help="replace CRDs a newer nvcre installed with this version's older schema (a downgrade), or change "
                           "the CRDs' schema while an engine of another version holds the Lease: each refused without it")
    add_kube_arguments(init, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    init.set_defaults(func=init_command)

    controller = commands.add_parser(
        "controller", help="print or apply the Deployment running `nvcre controller` in the install namespace",
        description="Server-side apply (field manager nvcre) of the nvcre-engine Deployment in the install namespace: one "
                    "replica (the nvcre-engine Lease elects the one engine), the engine's ServiceAccount, metrics on the "
                    "port named metrics, a liveness probe on /healthz, non-root with a read-only root filesystem. "
                    "Run `setup init` first; `setup reset` deletes it.")
    controller.add_argument("--image", metavar="IMAGE",  # required: said by check_image, in the words of a bad one
                            help="(required) an image with this package installed and ENTRYPOINT nvcre (the repository's Dockerfile)")
    shown = controller.add_mutually_exclusive_group()  # -o yaml reads no cluster: a dry run beside it would validate nothing
    shown.add_argument("--dry-run", action="store_true",
                       help="print the Deployment, validated by a server-side dry run; nothing applied")
    shown.add_argument("-o", "--output", choices=("yaml",), default=None,
                       help="only print the Deployment as YAML, reading no cluster (for kubectl apply or GitOps)")
    add_kube_arguments(controller, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    controller.set_defaults(func=controller_command)

    status = commands.add_parser(
        "status", help="what is installed: CRDs, RBAC, engine lease, Kubeflow Trainer, GPU Operator, DCGM",
        description="Exit 0 when nvcre's part (CRDs, namespace, RBAC) is installed and current, 1 when not, 2 when that is "
                    "not known: a read of it this user is refused (RBAC; its rows say unknown), or the cluster unreachable.")
    status.add_argument("-o", "--output", choices=("table", "json"), default="table")
    add_kube_arguments(status, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    status.set_defaults(func=status_command)

    reset = commands.add_parser(
        "reset", help="remove what init made (the CRDs, and with them every Certification)",
        description="Delete the controller's Deployment (setup controller), the CRDs (which deletes every Certification, "
                    "Workflow, Job and WorkloadRun), the engine's RBAC and ServiceAccount, and the install namespace.")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.add_argument("--force", action="store_true", help="even while certifications are still running or an engine holds the lease")
    reset.add_argument("--timeout", type=timeout_seconds, default=120.0, metavar="SECONDS",
                       help="how long to wait for the CRDs to be gone (default 120)")
    add_kube_arguments(reset, namespace_help=NAMESPACE_HELP, namespace_flags=INSTALL_FLAGS)
    reset.set_defaults(func=reset_command)
