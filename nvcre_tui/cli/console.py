"""`nvcre` with no command: the operator console."""

from __future__ import annotations

import argparse


def add_console_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the console (the root command)."""
    parser.add_argument("--sim", action="store_true", help="run on the embedded simulated fleet even when a cluster is configured")
    parser.add_argument("--scenario", metavar="S.yaml", help="simulated fleet scenario (implies --sim)")
    parser.add_argument("--read-only", action="store_true", help="view only: every write is refused")


def register(groups: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """No subcommands yet (the wall display arrives with the console issue)."""


def run_console(args: argparse.Namespace) -> int:
    """Open the console; imports Textual only here, so the rest of the CLI starts fast."""
    from nvcre_tui.app import NvcreApp
    from nvcre_tui.engine.sim.scenario import default_scenario, load_scenario

    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    NvcreApp(scenario=scenario, read_only=args.read_only).run()
    return 0
