"""A single-value option given twice is refused: argparse's store action keeps the last value, so
`--cert-file a.yaml --cert-file b.yaml` ran b.yaml alone and said nothing (a silent drop). The parser class
registers this action as its default; repeatable options say so with action="append"."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

SEEN = "_nvcre_given_options"  # the namespace attribute holding the dests given so far; removed after parsing


class StoreOnce(argparse._StoreAction):
    """argparse's "store", refusing a second occurrence of the same option (`--state x --state y`, or `-o` and
    `--output` both) with one line naming it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if self.option_strings:  # a positional is called once (or with its default): nothing to refuse
            seen: set[str] = namespace.__dict__.setdefault(SEEN, set())
            if self.dest in seen:
                parser.error(f"{self.option_strings[-1]} given twice; give it once")
            seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def forget_given(namespace: argparse.Namespace) -> None:
    """Drop the bookkeeping from a parsed namespace (commands read only their own options)."""
    namespace.__dict__.pop(SEEN, None)
