"""The `nvcre` command: one module per command group, each with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from nvcre_tui import __version__
from nvcre_tui.cli.bug import bug_line, command_of
from nvcre_tui.cli.interrupt import EXIT_INTERRUPTED
from nvcre_tui.cli.once import StoreOnce, forget_given
from nvcre_tui.cli.oneline import say as _say
from nvcre_tui.cli.stdout import quiet_stdout, take_stderr, take_stdout, verdict_printed
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.store.errors import StoreError, failure_line

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_TIMEOUT = 3

# Command groups, one module each under nvcre_tui/cli/, in the order `nvcre --help` lists them.
COMMAND_MODULES = ("certification", "cluster", "history", "setup", "controller", "parse", "console")


def _given(text: str) -> str:
    """An option's or argument's value, refused when empty: `--state ""` (an unset shell variable) would
    otherwise mean the default file, a silent drop."""
    if not text:
        raise argparse.ArgumentTypeError("empty")
    return text


_NEGATIVE_VALUE = re.compile(r"-[0-9.]")


class _Parser(argparse.ArgumentParser):
    """argparse with our exit code for usage errors (2, like every other bad input), told in one line like them,
    no empty values, and no single-value option given twice."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("type", None, _given)  # every option and argument without a type of its own
        self.register("action", None, StoreOnce)  # every option without an action of its own
        self.register("action", "store", StoreOnce)

    # [Any]: the subparsers' class is the caller's parser_class (the base class's overloads decide it from that argument)
    def add_subparsers(self, **kwargs: Any) -> argparse._SubParsersAction[Any]:
        commands = super().add_subparsers(**kwargs)
        commands.type = str  # argparse passes the command's whole argv through it: the command's parser checks its values
        return commands

    def _parse_optional(self, arg_string: str) -> Any:
        """A word that starts with '-' and a digit is a value, not an option: `--timeout -5m` took -5m for an unknown
        flag ("--timeout: expected one argument"); argparse lets through only plain negative numbers (-5, -1.5). The
        value's own check then says what is wrong with it (a duration cannot be negative)."""
        if _NEGATIVE_VALUE.match(arg_string) and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message}; see {self.prog} --help\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """A command's parser refuses what it does not know itself, naming its own help ("nvcre history nodes:
        unrecognized arguments: gpu-node-03; see nvcre history nodes --help"): argparse left it to the root parser,
        which pointed at `nvcre --help`."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        forget_given(parsed)
        return parsed, extras

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """argparse drops a write that fails; help or --version on stdout to a full disk (/dev/full) must fail as
        any other output does (main: one line, exit 74). stderr stays best effort."""
        if message and file is not None and file is not sys.stderr:
            file.write(message)
            flush = getattr(file, "flush", None)
            if flush is not None:
                flush()
            return
        super()._print_message(message, file)


ROOT = "root_"  # the dest prefix of the console's options on the root parser (see _root_options)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    from nvcre_tui.cli import console

    parser = _Parser(prog="nvcre", description="Certify Kubernetes GPU clusters for distributed AI work.")
    parser.add_argument("--version", action="version", version=f"nvcre {__version__}")
    console.add_console_arguments(parser)
    for action in _root_actions(parser):
        if action.metavar is None and action.nargs != 0:
            action.metavar = action.dest.upper()
        action.dest = ROOT + action.dest
    parser.set_defaults(func=console.run_console)
    groups = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"nvcre_tui.cli.{name}").register(groups)
    return parser


def _root_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")]


def _root_options(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str]) -> argparse.Namespace:
    """The console's options on the root parser, under their own names: without a command they are the console's;
    before a command they are the command's, as if given after it (`nvcre --kubeconfig X certification run` is
    `nvcre certification run --kubeconfig X`): argparse would let the command's defaults overwrite them, a silent drop,
    so the words are moved after the command and parsed again. Given at both places, the command's parser refuses the
    pair in one line (`--kubeconfig given twice; give it once`); one the command does not take is refused too."""
    from nvcre_tui.cli import console

    given = []
    for action in _root_actions(parser):
        value = vars(args).pop(action.dest)
        if args.func is console.run_console:
            setattr(args, action.dest.removeprefix(ROOT), value)
        elif value != action.default:
            given.append(action.option_strings[-1])
    if not given:
        return args
    moved = _moved_after_the_command(parser, argv)
    if moved is None:  # not met (an option's value that is a command's name, `--`): refused as before, never dropped
        flags = ", ".join(given)
        raise InputError(f"nvcre: {flags} before the command would be ignored: give {'it' if len(given) == 1 else 'them'} after the command "
                         f"(nvcre COMMAND {given[0]} ...)")
    args = parser.parse_args(moved)
    for action in _root_actions(parser):
        vars(args).pop(action.dest)  # all at their defaults now: the command's own hold the values
    return args


def _moved_after_the_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str] | None:
    """`argv` with the root options before the command moved after the command's words (each as `--long=value`, so
    an abbreviation or a value starting with `-` reads the same to the command's parser); None when it cannot tell."""
    moved: list[tuple[str, str]] = []  # (the option as the command gets it, its long name)
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in ("-", "--"):
        found = parser._parse_optional(argv[i])
        if isinstance(found, list):  # Python 3.12+: every match
            found = found[0] if len(found) == 1 else None
        if not found or found[0] is None:
            return None
        action, explicit = found[0], found[-1]
        name = action.option_strings[-1]
        if action.nargs == 0:
            moved.append((name, name))
            i += 1
        elif explicit is not None:
            moved.append((f"{name}={explicit}", name))
            i += 1
        elif i + 1 < len(argv):
            moved.append((f"{name}={argv[i + 1]}", name))
            i += 2
        else:
            return None
    words: list[str] = []
    command = parser
    while i < len(argv):
        choices = next((a.choices for a in command._actions if isinstance(a, argparse._SubParsersAction)), None)
        if not isinstance(choices, dict) or argv[i] not in choices:
            break
        command = choices[argv[i]]
        words.append(argv[i])
        i += 1
    if not words:
        return None
    for _, name in moved:
        if name not in command._option_string_actions:
            raise InputError(f"nvcre: {name} is the console's option (nvcre {name} ...), and this command does not take it")
    return [*words, *(option for option, _ in moved), *argv[i:]]


# Errors of a full or failing output (stdout on /dev/full, a disk that filled up): told as such, not as a bug.
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EBADF})  # EBADF: closed at start
EXIT_OUTPUT = 74  # sysexits' EX_IOERR: not 1, which is FAILED
EXIT_INTERNAL = 70  # a bug: no input should get here (the property test fails on it)


def _flush_before_error() -> None:
    """What a command printed before its error (`report a damaged` printed a's report): flushed now, so that a reader
    gone meanwhile (`| head`) is not an `Exception ignored ... BrokenPipeError` traceback from the interpreter's final
    flush. The error is still said, and its exit code kept."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
    except OSError as error:  # a full disk: the error's own lines follow, and this one
        quiet_stdout()
        _say(f"nvcre: cannot write the output: {error.strerror or error}")


def store_error_line(error: StoreError) -> str:
    """The one line a store error ends a command with: what failed, where (the object the error names) and why
    (failure_line: never its class name)."""
    return f"nvcre: {failure_line(error)}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `nvcre` console script: every outcome is an exit code and at most a few
    lines on stderr, never a traceback (NVCRE_DEBUG=1 shows the traceback of an internal error)."""
    take_stdout()  # every byte written or an error: a full disk or a closed stdout is never a silent loss
    take_stderr()  # a reader of stderr going away stops nothing: progress and notes are not the outcome
    command = "nvcre"  # which one a bug is told in (bug_line), once known
    try:
        parser = build_parser()
        words = list(sys.argv[1:] if argv is None else argv)
        command = command_of(parser, words)
        try:
            args = _root_options(parser, parser.parse_args(words), words)
        except SystemExit as done:  # --help, --version, or a usage error (told already): its code, not a raise
            return int(done.code or 0) if not isinstance(done.code, str) else EXIT_BAD_INPUT
        code = args.func(args)
        try:
            sys.stdout.flush()  # a reader that went away (`| head`) shows up here, not at exit
        except BrokenPipeError:  # it has what it wanted; a verdict's exit code is still the command's (a FAILED report)
            quiet_stdout()
            return code if verdict_printed() else EXIT_OK
    except InputError as error:
        _flush_before_error()
        for message in error.messages:
            _say(message)
        return EXIT_BAD_INPUT
    except StoreError as error:  # the API server refused a read nothing else expected (RBAC), or stayed away: one line
        _flush_before_error()
        _say(with_grant(store_error_line(error), error))  # a read RBAC refused: which role grants it (grants.READS)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader of our output stopped reading: it has what it wanted
        quiet_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        _say("nvcre: interrupted; nothing more was saved")
        return EXIT_INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the last line: a bug, told in one line
        if isinstance(error, OSError) and error.errno in OUTPUT_ERRNOS and error.filename is None:  # not a named file: stdout
            quiet_stdout()  # the final flush at exit would fail the same way
            _say(f"nvcre: cannot write the output: {error.strerror or error}")
            return EXIT_OUTPUT
        if os.environ.get("NVCRE_DEBUG"):
            raise
        _say(bug_line(error, command))
        return EXIT_INTERNAL
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
