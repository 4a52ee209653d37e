"""A word a command does not take is refused by that command, naming its own help: `nvcre history nodes gpu-node-03`
(meant: `history node NAME`) said "see nvcre --help", the top of the tree, not the command typed."""

from __future__ import annotations

import pytest

from nvcre_tui.cli import main


@pytest.mark.parametrize(("argv", "said"), [
    (["history", "nodes", "gpu-node-03"], "nvcre history nodes: unrecognized arguments: gpu-node-03; see nvcre history nodes --help"),
    (["certification", "list", "--bogus"], "nvcre certification list: unrecognized arguments: --bogus; see nvcre certification list --help"),
    (["--bogus"], "nvcre: unrecognized arguments: --bogus; see nvcre --help"),
])
def test_an_unknown_word_names_the_help_of_the_command_typed(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == said + "\n"


@pytest.mark.parametrize(("argv", "said"), [
    (["history", "certifications", "--last", "1000000000000000000000"], "argument --last: must be a whole number >= 1 of at most 18 digits, "
                                                                       "got '1000000000000000000000'"),
    (["history", "certifications", "--last", "0"], "argument --last: must be a whole number >= 1, got '0'"),
    (["certification", "run", "--nodes-per-job", "99999999999999999999"], "argument --nodes-per-job: must be a whole number of at most 18 "
                                                                          "digits, got '99999999999999999999'"),
])
def test_a_number_too_long_is_said_too_long(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--last 1000000000000000000000` said "must be a whole number >= 1", which it is: it has more digits than taken."""
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert said in line, line
