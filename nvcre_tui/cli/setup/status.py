"""`nvcre setup status`: what is installed, as a table or JSON, and its exit code."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from nvcre_tui.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.setup.shared import install_namespace, on_cluster
from nvcre_tui.cli.status_rows import status_rows, unreadable_summary
from nvcre_tui.engine.api.serialize import to_json
from nvcre_tui.engine.clock import Clock

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


def status_command(args: argparse.Namespace) -> int:
    """Report what is installed; exit 0 when our part is, 1 when not, 2 when not known (a read of it refused)."""
    return asyncio.run(on_cluster(args, "status", lambda store, clock: show_status(store, clock, args)))


async def show_status(store: KubeStore, clock: Clock, args: argparse.Namespace) -> int:
    from nvcre_tui.engine.kube.status import probe

    await store.served_groups()  # credentials the server refuses are one line, not a table of "unknown" rows
    status = await probe(store, clock, install_namespace(args))
    if args.output == "json":
        print(to_json(status.to_json()))
    else:
        print_table(("CHECK", "STATE", "DETAIL"), status_rows(status))
    if (unread := unreadable_summary(status)) is not None:  # on stderr: stdout stays the table, or JSON
        say(f"nvcre setup status: {unread}")
    if status.install_unknown:  # a read refused (RBAC) is exit 2, as a refused or unreachable read is for every command
        return EXIT_BAD_INPUT
    return EXIT_OK if status.installed else EXIT_FAILED
