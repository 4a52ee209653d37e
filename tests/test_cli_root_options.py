"""Every option the root parser (the console) and a command both take means the same before the command as after it:
`nvcre --kubeconfig X certification run` is `nvcre certification run --kubeconfig X`, for every such pair the command tree
has. Given at both places, the command refuses the pair in one line."""

from __future__ import annotations

import argparse

import pytest

from nvcre_tui.cli import _root_actions, _root_options, build_parser

PARSER = build_parser()
VALUE = "value-1"


def _commands(parser: argparse.ArgumentParser, words: list[str]) -> list[tuple[list[str], argparse.ArgumentParser]]:
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None:
        return [(words, parser)]
    return [found for name, child in sub.choices.items() for found in _commands(child, [*words, name])]


PAIRS = [(words, action.option_strings[-1], action.nargs == 0)
         for words, command in _commands(PARSER, []) for action in _root_actions(PARSER)
         if action.option_strings[-1] in command._option_string_actions]


def _parsed(argv: list[str]) -> dict[str, object] | None:
    try:
        return vars(_root_options(PARSER, PARSER.parse_args(argv), argv))
    except SystemExit:  # the command needs its own arguments (a NAME): not this pair's concern
        return None


def test_the_tree_has_such_pairs() -> None:
    assert ("certification", "run") in {tuple(words) for words, _, _ in PAIRS}
    assert {flag for _, flag, _ in PAIRS} >= {"--kubeconfig", "--context", "--namespace", "--state", "--history", "--sim"}


def _positionals(words: list[str]) -> list[str] | None:
    """What the command needs besides options (a NAME, a FILE), found by trying; None when neither will do."""
    for extra in ([], ["name-1"], ["name-1", "name-2"], ["--cert-file", "cert.yaml"], ["nccl", "out.txt"]):
        try:
            PARSER.parse_args([*words, *extra])
        except SystemExit:
            continue
        return extra
    return None


@pytest.mark.parametrize(("words", "flag", "switch"), PAIRS, ids=[f"{' '.join(w)} {f}" for w, f, _ in PAIRS])
def test_an_option_before_the_command_is_the_commands(words: list[str], flag: str, switch: bool,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    extra = _positionals(words)
    if extra is None:
        pytest.fail(f"{' '.join(words)}: no arguments found that it parses")
    given = [flag] if switch else [flag, VALUE]
    after = _parsed([*words, *given, *extra])
    assert after is not None
    assert _parsed([*given, *words, *extra]) == after
    if not switch:
        both = [*given, *words, flag, "other", *extra]
        with pytest.raises(SystemExit):
            _root_options(PARSER, PARSER.parse_args(both), both)
        assert "given twice; give it once" in capsys.readouterr().err
