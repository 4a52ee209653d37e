"""The kube flags every command that talks to a cluster takes (`--kubeconfig`, `--context`, `-n`), as kubectl."""

from __future__ import annotations

import argparse
import asyncio
import re
from typing import TYPE_CHECKING, Any

from nvcre_tui.engine.api.base import DNS_LABEL
from nvcre_tui.engine.clock import Clock, SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.names import DNS_SUBDOMAIN
from nvcre_tui.engine.printable import printable

if TYPE_CHECKING:  # the Kubernetes client is imported only by commands that reach a cluster
    from nvcre_tui.engine.kube.config import KubeTarget
    from nvcre_tui.engine.store.kube import KubeStore

__all__ = ["add_kube_arguments", "check_certification_names", "check_namespace", "cluster_nodes", "cluster_version", "load_kube_target",
           "open_kube_store"]



def add_kube_arguments(parser: argparse.ArgumentParser, *, namespace_help: str | None = None,
                       namespace_default: str | None = None, namespace_flags: tuple[str, ...] = ("-n", "--namespace")) -> None:
    """--kubeconfig PATH, --context NAME, -n/--namespace NS (default: the context's namespace, else default); `setup`'s
    namespace is the install namespace, under its own name first (`--install-namespace`, -n and --namespace its aliases)."""
    group = parser.add_argument_group("cluster")
    group.add_argument("--kubeconfig", metavar="PATH",
                       help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
    group.add_argument("--context", metavar="NAME", help="kubeconfig context (default: its current-context)")
    group.add_argument(*namespace_flags, dest="namespace", metavar="NS", default=namespace_default,
                       help=namespace_help or "namespace (default: the context's namespace, else default)")


def check_namespace(namespace: str | None, flag: str = "--namespace") -> str | None:
    """The namespace if it is a DNS label, as the API server requires (or None); else InputError naming the flag,
    so a typo fails here in one line rather than as a server error."""
    if namespace is not None and (not re.fullmatch(DNS_LABEL, namespace) or len(namespace) > 63):
        raise InputError(f"{flag}: must be a lowercase DNS label (a-z, 0-9, '-', at most 63 characters), "
                         f"got {namespace!r}")
    return namespace


def file_namespace_agrees(namespace: str | None, in_file: str | None, source: str) -> str | None:
    """-n checked, and refused where the file names another namespace (as kubectl refuses it); the namespace the
    Certification goes to (None: the file's, else the context's, else default)."""
    check_namespace(namespace)
    if namespace and in_file and namespace != in_file:
        raise InputError(f"{source}: metadata.namespace {in_file!r} does not match -n {namespace!r}: "
                         f"pass -n {in_file}, or leave the namespace out of the file")
    return namespace or in_file


def check_certification_names(names: list[str]) -> None:
    """InputError naming NAME unless every name could be a certification's (a DNS subdomain, as the API server
    requires: `.` would reach the collection's URL) and none is given twice."""
    for name in names:
        if len(name) > 253 or not re.fullmatch(DNS_SUBDOMAIN, name):
            raise InputError(printable(f"NAME: {name!r} is not a certification name (a lowercase DNS subdomain: a-z, 0-9, "
                                       "'-' and '.', at most 253 characters)", newlines=False))
    if len(set(names)) != len(names):
        raise InputError(f"NAME: {next(n for n in names if names.count(n) > 1)!r} is given twice")


async def load_kube_target(args: argparse.Namespace) -> KubeTarget:
    """The cluster the flags name; InputError (one line) on a missing file, unknown context, bad YAML."""
    from nvcre_tui.engine.kube.config import load_target

    namespace = check_namespace(getattr(args, "namespace", None))
    return await load_target(getattr(args, "kubeconfig", None), getattr(args, "context", None), namespace)


async def check_reachable(args: argparse.Namespace, within: float, target: KubeTarget | None = None) -> None:
    """One discovery read as a viewer (it needs credentials, /version does not): a bad kubeconfig, credentials the
    server refuses or a server that refuses connections is one line (exit 2) before the console takes the screen. A
    server that has not answered within `within` seconds is left to the console, which says what it connects to.
    `target`: the flags' cluster, loaded already (its exec plugin is not run again)."""
    from nvcre_tui.engine.kube.session import VIEWER_AGENT
    from nvcre_tui.engine.store.errors import NotKubernetes, StoreError

    store = await open_kube_store(args, user_agent=VIEWER_AGENT, target=target)
    target = store.target
    try:
        await asyncio.wait_for(store.served_groups(), within)
    except TimeoutError:
        pass
    except NotKubernetes as error:  # its message names the server already
        raise InputError(f"{target.server} ({target.source}): {error.detail}") from None
    except StoreError as error:  # where, as every command's first read says it (not "nvcre: Unauthorized: discovery: Unauthorized")
        raise InputError(f"{target.server} ({target.source}): {error}") from None
    finally:
        await store.close()


async def open_kube_store(args: argparse.Namespace, *, user_agent: str, clock: Clock | None = None,
                          target: KubeTarget | None = None) -> KubeStore:
    """A KubeStore on the cluster the flags name (`target`, when loaded already; the caller closes it)."""
    from nvcre_tui.engine.store.kube import KubeStore

    return KubeStore(target or await load_kube_target(args), clock or SystemClock(), user_agent=user_agent)


async def cluster_nodes(args: argparse.Namespace, *, user_agent: str) -> tuple[str, list[dict[str, Any]]]:
    """(`cluster <context or server>`, its Node objects), read once with the flags' credentials; a store error is an
    InputError naming the server."""
    from nvcre_tui.engine.api.nodes import NODES_GRANT
    from nvcre_tui.engine.grants import rbac_refused
    from nvcre_tui.engine.store.errors import NotKubernetes, StoreError
    from nvcre_tui.engine.store.protocol import NODE

    store = await open_kube_store(args, user_agent=user_agent)
    where = f"cluster {store.target.context or store.target.server}"
    try:
        return where, (await store.list(NODE)).items
    except NotKubernetes as error:  # it names the server
        raise InputError(str(error)) from None
    except StoreError as error:
        # RBAC's refusal: which grant it takes, as no built-in namespaced role has it (README, "Users' roles"). Credentials
        # the server refused (401) are no missing grant: the error says so, and a grant would not help.
        grant = f"; this command reads every Node: it takes {NODES_GRANT}" if rbac_refused(error) else ""
        raise InputError(f"nodes of {store.target.server} ({store.target.source}): {error}{grant}") from None
    finally:
        await store.close()


async def cluster_version(args: argparse.Namespace, *, user_agent: str) -> tuple[int, int] | None:
    """The Kubernetes (major, minor) of the server the flags name, from its /version; None when it does not say or
    cannot be read (what needs it is then rendered as on a current server, as offline)."""
    from nvcre_tui.engine.store.errors import StoreError

    store = await open_kube_store(args, user_agent=user_agent)
    try:
        return await store.server_version()
    except StoreError:
        return None
    finally:
        await store.close()
