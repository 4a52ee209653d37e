"""`nvcre` with no command (the operator console) and `nvcre wall` (the read-only wall display)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from nvcre_tui.cli.oneline import say
from nvcre_tui.engine.errors import InputError

if TYPE_CHECKING:
    from nvcre_tui.engine.kube.config import KubeTarget


def add_console_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the console (the root command and `wall`)."""
    from nvcre_tui.cli.session import add_session_arguments

    add_session_arguments(parser, namespace_help="the namespace whose certifications are shown (and composed ones created) "
                                                 "(default: the context's, else default)")
    parser.add_argument("--read-only", action="store_true", help="view only: write keys and commands are absent, every write is refused, no engine runs")
    parser.add_argument("--theme", help="nvcre-dark (default), nvcre-light or nvcre-high-contrast")


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `wall`."""
    wall = groups.add_parser("wall", help="full-screen read-only wall display (rotation, big counters, map, failures)")
    add_console_arguments(wall)
    wall.set_defaults(func=run_wall)


QUICK_ANSWER_SECONDS = 3.0  # a server answers discovery within this, or the console shows that it is connecting


def run_console(args: argparse.Namespace, *, wall: bool = False) -> int:
    """Open the console; Textual is imported only here, so the rest of the CLI starts fast."""
    from nvcre_tui.app import NvcreApp
    from nvcre_tui.cli.session import legacy_state_of, on_cluster, open_session, scenario_of, state_named_by, state_path_of
    from nvcre_tui.engine.planning.catalog_load import default_catalog

    scenario = scenario_of(args)
    read_only = args.read_only or wall
    state = state_path_of(args)
    # Start-up errors are the CLI's one-line messages (exit 2), found before the screen is taken over: a bad kubeconfig
    # or context, refused credentials or connections. A server slow to answer is left to the console, which says what
    # it connects to (q leaves) instead of a blank terminal. The cluster is loaded here, once: its exec plugin may prompt
    # (a login, an MFA code) only before the console holds the terminal.
    connecting = None
    target: KubeTarget | None = None
    if on_cluster(args):
        from nvcre_tui.cli.kubeflags import check_reachable, load_kube_target

        target = asyncio.run(load_kube_target(args))
        connecting = f"{target.server} ({target.source})"
        asyncio.run(check_reachable(args, within=QUICK_ANSWER_SECONDS, target=target))
    else:
        from nvcre_tui.engine.outfiles import check_writable
        from nvcre_tui.engine.sim_state import check_state

        if not read_only:
            check_writable(state, state_named_by(args))
        check_state(state, scenario, readonly=read_only, legacy=legacy_state_of(args))

    if not (_terminal(sys.stdin) and _terminal(sys.stdout)) and not os.environ.get("TEXTUAL_DRIVER"):  # textual serve: a browser
        # Without one Textual draws escape codes into a file or pipe until killed, or fails on a closed stdin.
        raise InputError(f"nvcre{' wall' if wall else ''}: the console needs a terminal (stdin and stdout); for output a script reads, "
                         "use a command: nvcre certification run --wait, report, render")

    async def opener() -> Any:  # opened inside the app's event loop (its connections belong to it)
        return await open_session(args, default_catalog(), live=True, want_engine=not read_only, role="console", readonly=read_only,
                                  archive_writes=not read_only, target=target)

    app = NvcreApp(scenario=scenario, state_path=state, read_only=read_only, wall=wall, theme_name=args.theme, opener=opener,
                   freeze_heap=True, connecting=connecting)
    app.run()
    if app.startup_error:
        say(app.startup_error)
        return int(app.return_code or 2)
    if app.save_error is not None:
        raise app.save_error
    return app.return_code or 0


def run_wall(args: argparse.Namespace) -> int:
    """The wall display: read-only, high contrast, rotating."""
    return run_console(args, wall=True)


def _terminal(stream: Any) -> bool:
    """Whether `stream` is an open terminal (None when the process was started with it closed)."""
    try:
        return stream is not None and bool(stream.isatty())
    except (ValueError, AttributeError):  # closed, or not a file at all
        return False
