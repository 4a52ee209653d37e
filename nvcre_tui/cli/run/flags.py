"""`run`'s flags: NVCRE's category option flags, which flags need --wait, the --name check, --category's one GPU
product, and the flags that find the certification again in the commands run advises."""

from __future__ import annotations

import argparse
import re
import shlex
from typing import Any

from nvcre_tui.engine.api.base import DNS_LABEL
from nvcre_tui.engine.api.bodies import labels_of
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRODUCT
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.discovery import is_gpu_node, node_exclusion
from nvcre_tui.engine.planning.manifest import CATEGORY_FLAG
from nvcre_tui.engine.printable import printable


def check_name(option: str, value: str) -> None:
    if not re.fullmatch(DNS_LABEL, value) or len(value) > 63:
        raise InputError(f"{option}: must be a lowercase DNS label (a-z, 0-9, '-', at most 63 characters), got {value!r}")


# NVCRE's `run` category option flags (each --category category takes those it reads): flag -> (option, type, help).
CATEGORY_OPTION_FLAGS: dict[str, tuple[str, type, str]] = {
    "--nodes-per-job": ("nodesPerJob", int, "nodes in each job"),
    "--gpus-per-node": ("gpusPerNode", int, "GPUs each pod asks for"),
    "--enable-checkpoint": ("enableCheckpoint", bool, "NVCRE's checkpoint restarts: not implemented, refused"),
    "--enable-mnnvl": ("enableMNNVL", bool, "multi-node NVLink (GB200/GB300 ComputeDomains); unset: from the nodes"),
    "--max-steps": ("maxSteps", int, "training steps (-1: no step limit, --exit-duration-mins ends the run)"),
    "--exit-duration-mins": ("exitDurationMins", int, "training stops after this many minutes"),
    "--repeat-count": ("repeatCount", int, "run each group this many times"),
    "--max-restarts": ("maxRestarts", int, "checkpoint restarts a workload may take: not implemented, refused"),
    "--storage-class": ("storageClassName", str, "storage class of checkpoint volumes: not implemented, refused"),
}
# Taken for NVCRE CLI compatibility and always refused (checkpoint restarts are not implemented): hidden from --help.
REFUSED_OPTION_FLAGS = frozenset({"--enable-checkpoint", "--max-restarts", "--storage-class"})
NEEDS_WAIT = {"--results-file": "the report is written when the run ends", "--timeout": "it bounds how long the run is followed",
              "--cleanup": "it deletes the certification once it is followed to its report"}


def category_options(args: argparse.Namespace) -> dict[str, Any]:
    """The category options the flags set (wire names); InputError when they come without --category (a file's
    categories carry their own options)."""
    given = {flag: getattr(args, option) for flag, (option, _, _) in CATEGORY_OPTION_FLAGS.items() if getattr(args, option) is not None}
    if given and not args.category:
        raise InputError(f"{next(iter(given))}: goes with --category; a file sets it in spec.categories[].options")
    return {CATEGORY_OPTION_FLAGS[flag][0]: value for flag, value in given.items()}


def again_flags(args: argparse.Namespace, simulated: bool, namespace: str) -> str:
    """The flags that find this certification again (`--state S`, `-n NS` ...), for the commands we advise."""
    flags: list[tuple[str, Any]] = [("--sim", None)] if simulated and getattr(args, "sim", False) else []
    names = ("scenario", "state") if simulated else ("kubeconfig", "context", "install_namespace")
    flags += [(f"--{name.replace('_', '-')}", getattr(args, name, None)) for name in names if getattr(args, name, None)]
    if namespace != "default":
        flags.append(("-n", namespace))
    shown = "".join(f" {flag}" + (f" {shlex.quote(str(value))}" if value is not None else "") for flag, value in flags)
    return printable(shown, newlines=False)  # advice lines stay one line each


def source(args: argparse.Namespace) -> str:
    """Where the Certification came from, for messages: its file, or --category."""
    return str(args.cert_file or CATEGORY_FLAG)


def gpu_product(nodes: list[Any]) -> str | None:
    """The one GPU product the GPU nodes hold, as NVCRE's `run --category` finds it (None: no GPU node); InputError
    naming them when there are several (a certification compares nodes of one kind)."""
    gpu = [node for node in nodes if is_gpu_node(node)]
    usable = [node for node in gpu if node_exclusion(node) is None] or gpu  # discovery leaves a cordoned one out anyway
    products = sorted({str(labels_of(node).get(LABEL_GPU_PRODUCT)) for node in usable if labels_of(node).get(LABEL_GPU_PRODUCT)})
    if len(products) > 1:
        raise InputError(f"{CATEGORY_FLAG}: the GPU nodes hold {len(products)} products ({', '.join(products)}): "
                         f"certify one at a time with --cert-file and a nodeSelector on {LABEL_GPU_PRODUCT}")
    return products[0] if products else None
