"""The `nvcre` command: one module per command group, each with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from nvcre_tui import __version__
from nvcre_tui.engine.errors import InputError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_TIMEOUT = 3

# Command groups, one module each under nvcre_tui/cli/, in the order `nvcre --help` lists them.
COMMAND_MODULES = ("certification", "history", "setup", "controller", "parse", "console")


class _Parser(argparse.ArgumentParser):
    """argparse with our exit code for usage errors (2, like every other bad input)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    from nvcre_tui.cli import console

    parser = _Parser(prog="nvcre", description="Certify Kubernetes GPU clusters for distributed AI work.")
    parser.add_argument("--version", action="version", version=f"nvcre {__version__}")
    console.add_console_arguments(parser)
    parser.set_defaults(func=console.run_console)
    groups = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"nvcre_tui.cli.{name}").register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `nvcre` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except InputError as error:
        for message in error.messages:
            print(message, file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
