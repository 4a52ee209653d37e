"""`nvcre` with no command (the operator console) and `nvcre wall` (the read-only wall display)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_console_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the console (the root command and `wall`)."""
    parser.add_argument("--sim", action="store_true", help="run on the embedded simulated fleet (the default: no cluster support yet)")
    parser.add_argument("--scenario", metavar="S.yaml", help="simulated fleet scenario (implies --sim)")
    parser.add_argument("--read-only", action="store_true", help="view only: write keys and commands are absent and every write is refused")
    parser.add_argument("--theme", help="nvcre-dark (default), nvcre-light or nvcre-high-contrast")
    parser.add_argument("--state", metavar="PATH", help="simulator state file shared with `nvcre certification run/report`")


def register(groups: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `wall`."""
    wall = groups.add_parser("wall", help="full-screen read-only wall display (rotation, big counters, map, failures)")
    add_console_arguments(wall)
    wall.set_defaults(func=run_wall)


def run_console(args: argparse.Namespace, *, wall: bool = False) -> int:
    """Open the console; Textual is imported only here, so the rest of the CLI starts fast."""
    from nvcre_tui.app import NvcreApp
    from nvcre_tui.engine.session import default_state_path
    from nvcre_tui.engine.sim.scenario import default_scenario, load_scenario

    from nvcre_tui.engine.outfiles import check_writable
    from nvcre_tui.engine.state_file import load_state

    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    state = Path(args.state) if args.state else default_state_path()
    # Start-up errors are the CLI's one-line messages (exit 2), found before the screen is taken over.
    load_state(state, scenario.to_wire(), scenario.name)
    if not (args.read_only or wall):
        check_writable(state, "--state")
    app = NvcreApp(scenario=scenario, state_path=state, read_only=args.read_only, wall=wall, theme_name=args.theme)
    app.run()
    if app.save_error is not None:
        raise app.save_error
    return app.return_code or 0


def run_wall(args: argparse.Namespace) -> int:
    """The wall display: read-only, high contrast, rotating."""
    return run_console(args, wall=True)
