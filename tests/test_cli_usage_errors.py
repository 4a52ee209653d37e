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
