"""What every `nvcre setup` command uses: its --timeout and --install-namespace values, the store on the cluster its
flags name (a store error said in one line), and how kubectl names an object."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli import EXIT_BAD_INPUT
from nvcre_tui.cli.kubeflags import check_namespace, open_kube_store
from nvcre_tui.cli.oneline import say
from nvcre_tui.engine.clock import Clock, SystemClock

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


Obj = dict[str, Any]
USER_AGENT = "nvcre-setup"


MAX_WAIT_SECONDS = 86_400.0


def timeout_seconds(text: str) -> float:
    """A --timeout value: seconds, >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number), got {text!r}") from None
    if not 0 <= value <= MAX_WAIT_SECONDS:  # also NaN and inf
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_WAIT_SECONDS:g} seconds (a day), got {text!r}")
    return value


def install_namespace(args: argparse.Namespace) -> str:
    from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE

    return check_namespace(args.namespace, "--install-namespace") or INSTALL_NAMESPACE


async def on_cluster(args: argparse.Namespace, command: str,
                     body: Callable[[KubeStore, Clock], Awaitable[int]], clock: Clock | None = None) -> int:
    """Run `body` with a store on the cluster the flags name; a store error (refused, unreachable, unauthorized)
    is one line and exit 2, as for every other command."""
    from nvcre_tui.engine.store.errors import StoreError

    clock = clock or SystemClock()
    store = await open_kube_store(args, user_agent=USER_AGENT, clock=clock)
    try:
        return await body(store, clock)
    except StoreError as error:
        say(f"nvcre setup {command}: {' '.join(error.message.split())}")
        return EXIT_BAD_INPUT
    finally:
        await store.close()


def resource_ref(obj: dict[str, Any]) -> str:
    """How kubectl names an object in its output: `customresourcedefinition.apiextensions.k8s.io/NAME`."""
    from nvcre_tui.engine.store.protocol import kind_of

    kind = kind_of(obj)
    return f"{kind.kind.lower()}{'.' + kind.group if kind.group else ''}/{obj['metadata']['name']}"
