"""Log pane benchmark: 100,000 lines appended, a screenful rendered, paging, as ratios to an idle app.

    python bench/tui_logs.py [--lines N] [--rounds R]

All numbers come from one process and one headless app at 120x40:
- idle:      `await pilot.pause()` with nothing to do (the unit of every ratio);
- append:    `append_lines(N lines)` in one batch plus the layout and render of the screen that follows;
- page up:   press page-up and await the render (median over R presses, following paused);
- page wrap: the same with wrapping on (rows come from a bisect over prefix sums);
- search:    a regex over every buffered line and the jump to the first match (one O(N) pass, by design);
- screen:    rendering one screenful of never-seen lines straight through `render_line` (no cache hits);
- follow:    the logs screen's cursor placing 100 new lines in a capped 22,000-line answer (a pod log's kept
             head + tail, where the answer stopped growing: the anchor is searched for, not counted).
The ratios, not the milliseconds, are the result: a shared machine adds tens of percent of noise.
Not run by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from textual.app import App, ComposeResult  # noqa: E402 - after the environment it reads at import
from textual.pilot import Pilot  # noqa: E402
from timing import median_ms, timed_ms

from nvcre_tui.engine.report.logtail import LogCursor  # noqa: E402
from nvcre_tui.widgets.log_view import LogLines, LogView  # noqa: E402

SIZE = (120, 40)


class BenchApp(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView()


def synthetic(count: int) -> list[str]:
    """Kubelet-stamped lines of 40 to 190 characters, like an nccl-tests log with NCCL INFO noise."""
    return [f"2026-01-01T00:00:{i % 60:02d}.{i:09d}Z gpu-node-{i % 32:02d}:{i}:{i * 7 % 99991} [{i % 8}] NCCL INFO "
            f"line {i:06d} {'x' * (i * 7919 % 150)}" for i in range(count)]


async def run(count: int, rounds: int) -> dict[str, float]:
    lines = synthetic(count)
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        log = app.query_one(LogLines)
        log.focus()
        await pilot.pause()
        idle = await median_ms(rounds, pilot.pause)

        async def append() -> None:
            log.append_lines(lines)
            await pilot.pause()

        results = {"idle": idle, "append": await timed_ms(append)}
        await pilot.press("s")  # pause following so page-up moves freely
        results["page up"] = await median_ms(rounds, lambda: page_up(pilot))
        log.wrap = True
        await pilot.pause()
        results["page wrap"] = await median_ms(rounds, lambda: page_up(pilot))
        log.wrap = False

        async def search() -> None:
            log.search("line 0500")
            await pilot.pause()

        results["search"] = await timed_ms(search)
        results["screen"] = await median_ms(rounds, lambda: fresh_screen(log))
    results["follow"] = await median_ms(rounds, follow_step(lines))
    return results


def follow_step(lines: list[str]) -> Callable[[], Awaitable[None]]:
    """One read of a capped answer with 100 new lines, as the logs screen's LogCursor handles it."""
    head, tail = 2_000, 20_000
    cursor = LogCursor()
    position = head + tail
    cursor.advance(lines[:head] + lines[position - tail:position])

    async def step() -> None:
        nonlocal position
        position = min(position + 100, len(lines))
        fresh = cursor.advance(lines[:head] + lines[position - tail:position])
        assert not fresh.gap

    return step


async def page_up(pilot: Pilot[None]) -> None:
    await pilot.press("pageup")
    await pilot.pause()


async def fresh_screen(log: LogLines) -> None:
    log._cache.clear()  # noqa: SLF001 - the benchmark measures uncached rendering on purpose
    for y in range(log.size.height):
        log.render_line(y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    results = asyncio.run(run(args.lines, args.rounds))
    idle = results["idle"]
    print(f"log pane, {args.lines:,} lines at {SIZE[0]}x{SIZE[1]}; medians of {args.rounds} rounds")
    for name, ms in results.items():
        print(f"  {name:<10} {ms:9.2f} ms   {ms / idle:8.1f} × idle")


if __name__ == "__main__":
    main()
