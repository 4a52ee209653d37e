"""`nvcre certification run` and `report` (the engine issue fills these in)."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Nothing yet: run and report arrive with the engine."""
