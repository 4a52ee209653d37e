"""A value that starts with '-' and a digit is taken as the option's value: `--timeout -5m` said "argument --timeout:
expected one argument" (argparse took -5m for an option; only plain numbers like -5 passed), and the duration then
says what is wrong with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.units import parse_duration

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


@pytest.mark.parametrize("argv", [
    ["certification", "run", "--cert-file", BURN_IN, "--wait", "--timeout", "-5m"],
    ["certification", "run", "--cert-file", BURN_IN, "--wait", "--timeout=-5m"],
    ["certification", "delete", "burn-in", "--wait", "--timeout", "-5m"],
])
def test_a_negative_duration_is_named_as_such(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--state", str(tmp_path / "s.db")]) == 2
    assert capsys.readouterr().err == "--timeout: a duration cannot be negative, got '-5m'\n"
    assert list(tmp_path.iterdir()) == []


def test_a_word_of_a_dash_and_a_letter_is_still_an_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "list", "-x5"]) == 2
    assert "unrecognized arguments: -x5" in capsys.readouterr().err


def test_parse_duration_says_negative() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        parse_duration("-1h30m")
