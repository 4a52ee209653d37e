"""`nvcre certification run`, on the embedded simulated fleet or a cluster: create a certification, and with --wait
follow it to its report (cli/report.py).

Exit codes: 0 PASSED or INCOMPLETE, 1 FAILED, 2 bad input, 3 timeout.

This module registers `run`; flags and timeout hold its flags and --timeout's default, submit checks them and
opens the session, create makes the certification, follow (progress, waiting, cleanup) is --wait.
"""

from __future__ import annotations

import argparse

from nvcre_tui.cli import registry
from nvcre_tui.cli.delete import CLEANUP_WAIT_SECONDS
from nvcre_tui.cli.filepaths import file_path
from nvcre_tui.cli.numbers import integer
from nvcre_tui.cli.run.flags import CATEGORY_OPTION_FLAGS, REFUSED_OPTION_FLAGS
from nvcre_tui.cli.run.submit import run_command
from nvcre_tui.cli.session import add_session_arguments
from nvcre_tui.engine.planning.manifest import CATEGORY_FLAG
from nvcre_tui.engine.units import format_duration


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `run` to the certification group."""
    run = commands.add_parser("run", help="create a certification (and with --wait, follow it to its report)")
    what = run.add_mutually_exclusive_group(required=True)
    what.add_argument("--cert-file", metavar="F", help="Certification YAML")
    what.add_argument(CATEGORY_FLAG, action="append", metavar="D/V",
                      help="a catalog category (repeatable) on every GPU node of the one GPU product found")
    for flag, (option, kind, help_text) in CATEGORY_OPTION_FLAGS.items():
        # NVCRE's checkpoint flags are taken (so a script gets the refusal naming them) but not offered in --help
        shown = argparse.SUPPRESS if flag in REFUSED_OPTION_FLAGS else f"with --category: {help_text}"
        if kind is bool:
            run.add_argument(flag, dest=option, action=argparse.BooleanOptionalAction, default=None, help=shown)
        else:
            run.add_argument(flag, dest=option, type=integer if kind is int else kind, metavar="N" if kind is int else "NAME", default=None,
                             help=shown)
    add_session_arguments(run, namespace_help="namespace of the Certification (default: the file's, else the context's, else default)")
    run.add_argument("--name", help="certification name (default: metadata.name of the file; with --category nvcre-YYYYMMDD-HHMMSS)")
    run.add_argument("--wait", action="store_true", help="follow progress, then print the report")
    run.add_argument("--timeout", metavar="D", help="with --wait: give up after D (simulated time on the simulator; default: from the categories' budgets)")
    run.add_argument("--results-file", metavar="F", type=file_path, help="write the JSON report here")
    registry.add_arguments(run)
    run.add_argument("--setup", action="store_true",
                     help="on a cluster: first install or update what `nvcre setup init` installs (the CRDs, the install namespace, "
                          "RBAC), as NVCRE's --setup; left installed afterwards (`nvcre setup reset` removes it)")
    run.add_argument("--cleanup", action="store_true",
                     help="with --wait: delete the certification after its report, on every exit (timed out, ctrl-c); "
                          f"archived first; waits up to {format_duration(CLEANUP_WAIT_SECONDS)} for its Workflows, Jobs and runs to go")
    run.set_defaults(func=run_command)
