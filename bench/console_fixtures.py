"""What the console tests' shared prepared stores save: a finished certification reopened from a state
saved once (tests/console/conftest.py's finished_* fixtures) against re-running the engine per test.

Run: `python bench/console_fixtures.py [--rounds N]`. Prints the median per session of each way and
the ratio, measured in this process (the machine's load cancels out of the ratio)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from timing import median_ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.console.harness import EXAMPLE, INTRA_NODE, reopen, save_finished, session_with  # noqa: E402


async def compare(rounds: int, texts: tuple[str, ...], state: Path) -> tuple[float, float]:
    async def rerun_once() -> None:
        await (await session_with(*texts)).close()

    async def reopen_once() -> None:
        await (await reopen(state)).close()

    return await median_ms(rounds, rerun_once), await median_ms(rounds, reopen_once)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        for label, texts in (("INTRA_NODE", (INTRA_NODE,)), ("INTRA_NODE + example", (INTRA_NODE, EXAMPLE))):
            state = save_finished(Path(folder) / f"{len(texts)}.json", *texts)
            rerun, reopened = asyncio.run(compare(rounds, texts, state))
            print(f"{label:22} re-run engine {rerun:8.1f} ms   reopen saved state {reopened:6.1f} ms   ratio {rerun / reopened:6.1f}x")


if __name__ == "__main__":
    main()
