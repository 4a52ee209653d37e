"""A single-value option given twice is refused in one line naming it (exit 2): argparse kept the last value, so
`run --cert-file a.yaml --cert-file b.yaml` certified b.yaml alone and exited 0. Repeatable options (append) still
repeat."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from nvcre_tui.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
BURN_IN, DIAGNOSE = str(ROOT / "examples" / "burn-in.yaml"), str(ROOT / "examples" / "diagnose.yaml")


@pytest.mark.parametrize(("argv", "said"), [
    (["certification", "run", "--cert-file", BURN_IN, "--cert-file", DIAGNOSE], "nvcre certification run: --cert-file given twice"),
    (["certification", "run", "--cert-file", BURN_IN, "--name", "a1", "--name", "a2"], "nvcre certification run: --name given twice"),
    (["certification", "run", "--cert-file", BURN_IN, "--nodes-per-job", "2", "--nodes-per-job", "4"],
     "nvcre certification run: --nodes-per-job given twice"),
    (["certification", "list", "--state", "x.db", "--state", "y.db"], "nvcre certification list: --state given twice"),
    (["certification", "report", "burn-in", "-o", "json", "--output", "text"], "nvcre certification report: --output given twice"),
])
def test_a_single_value_option_given_twice_is_refused(argv: list[str], said: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith(said + "; ")
    assert list(tmp_path.iterdir()) == []  # nothing created


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def test_every_single_value_option_of_every_command_refuses_a_second_value() -> None:
    from nvcre_tui.cli.once import StoreOnce

    stores = [(parser.prog, action.option_strings[-1]) for parser in _parsers(build_parser()) for action in parser._actions
              if action.option_strings and type(action) is argparse._StoreAction]
    assert stores == [], f"plain store actions (the last value wins silently): {stores}"
    once = [a for p in _parsers(build_parser()) for a in p._actions if isinstance(a, StoreOnce)]
    assert len(once) > 50


def test_a_repeatable_option_still_repeats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["certification", "run", "--category", "communication/nccl-all-reduce",
                                      "--category", "diagnostics/dcgm-diag-r3", "--state", str(tmp_path / "s.db")])
    assert args.category == ["communication/nccl-all-reduce", "diagnostics/dcgm-diag-r3"]
    assert not any(name.startswith("_nvcre") for name in vars(args))  # the bookkeeping is gone
