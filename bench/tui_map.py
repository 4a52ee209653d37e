"""Rack map benchmark: batched state updates and key latency on a 4,096-node map, as ratios to an idle app.

    python bench/tui_map.py [--rounds N]

All numbers come from one process and one headless app at 200x50, so the ratios compare like with like:
- idle frame:  `await pilot.pause()` with nothing to do (the unit for the update ratio);
- update:      `update_states(1,000 changes)` plus the refresh and render of the affected visible lines;
- key idle:    press an arrow key and await `pilot.pause()` with no updates (the unit for the key ratio);
- key loaded:  the same while a background task applies 1,000 state changes per second (50 every 50 ms).
`pilot.pause()` (and `pilot.press`) return once the process has been idle for a moment, so under steady load
they also measure how soon the feed leaves a gap. The "key to screen" lines isolate the widget: a key event is
posted and the clock stops when the line showing the moved cursor has been rendered. Not run by pytest.
Medians over --rounds samples; on a shared machine expect run-to-run noise of tens of percent.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from textual.app import ComposeResult
from textual.pilot import Pilot
from textual.strip import Strip
from timing import median_ms

from nvcre_tui.theme import ThemedApp
from nvcre_tui.widgets.node_state import NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap

SIZE = (200, 50)
RACKS, PER_RACK = 128, 32  # 4,096 nodes
CHANGES_PER_BATCH = 1_000
FEED_PER_SECOND, FEED_INTERVAL = 1_000, 0.05


class BenchApp(ThemedApp[None]):
    def __init__(self, cells: list[NodeCell]) -> None:
        super().__init__()
        self.cells = cells

    def compose(self) -> ComposeResult:
        yield RackMap(self.cells)


def fleet(rng: random.Random) -> list[NodeCell]:
    states = list(NodeState)
    return [NodeCell(f"n{r:03d}-{n:02d}", f"rack-{r:03d}", rng.choice(states)) for r in range(RACKS) for n in range(PER_RACK)]


def changes(rng: random.Random, names: list[str], count: int) -> dict[str, NodeState]:
    states = list(NodeState)
    return {name: rng.choice(states) for name in rng.sample(names, count)}


async def feed(rack_map: RackMap, rng: random.Random, names: list[str], stop: asyncio.Event) -> int:
    """Apply FEED_PER_SECOND changes per second in small batches until `stop`; return how many were sent."""
    sent = 0
    per_batch = int(FEED_PER_SECOND * FEED_INTERVAL)
    due = time.perf_counter()
    while not stop.is_set():
        rack_map.update_states(changes(rng, names, per_batch))
        sent += per_batch
        due += FEED_INTERVAL  # a deadline, not a fixed sleep, so slow frames do not lower the rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
    return sent


async def run(rounds: int) -> dict[str, float]:
    rng = random.Random(42)
    cells = fleet(rng)
    names = [cell.name for cell in cells]
    app = BenchApp(cells)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        rack_map.focus()
        await pilot.pause()

        async def idle() -> None:
            await pilot.pause()

        async def update() -> None:
            rack_map.update_states(changes(rng, names, CHANGES_PER_BATCH))
            await pilot.pause()

        keys = iter(["right", "left"] * rounds * 4)

        async def key(p: Pilot[None] = pilot) -> None:
            await p.press(next(keys))
            await p.pause()

        result = {"idle": await median_ms(rounds, idle), "update": await median_ms(rounds, update)}
        result["key_idle"] = await median_ms(rounds, key)

        cursor_drawn = [0.0]
        moved_from: list[str | None] = [None]
        render_line = rack_map.render_line

        def spy(y: int) -> Strip:
            # A strip with the (reversed) cursor rendered after the cursor moved shows the new position.
            strip = render_line(y)
            if rack_map.highlighted != moved_from[0] and any(s.style and s.style.reverse for s in strip):
                cursor_drawn[0] = time.perf_counter()
            return strip

        rack_map.render_line = spy  # type: ignore[method-assign]

        async def key_to_screen() -> None:
            moved_from[0], cursor_drawn[0] = rack_map.highlighted, 0.0
            app.simulate_key(next(keys))
            while not cursor_drawn[0]:
                await asyncio.sleep(0.001)

        result["handled_idle"] = await median_ms(rounds, key_to_screen)
        stop = asyncio.Event()
        feeder = asyncio.create_task(feed(rack_map, rng, names, stop))
        start = time.perf_counter()
        result["key_loaded"] = await median_ms(rounds, key)
        result["handled_loaded"] = await median_ms(rounds, key_to_screen)
        stop.set()
        sent = await feeder
        result["feed_rate"] = sent / (time.perf_counter() - start)
        result["compact"] = float(rack_map.is_compact)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="samples per measurement (median is reported)")
    args = parser.parse_args()
    r = asyncio.run(run(args.rounds))
    print(f"rack map: {RACKS * PER_RACK} nodes at {SIZE[0]}x{SIZE[1]} ({'compact' if r['compact'] else 'normal'} cells)")
    print(f"idle frame (pause)           {r['idle']:8.2f} ms   1.00x")
    print(f"{CHANGES_PER_BATCH} state changes + render  {r['update']:8.2f} ms   {r['update'] / r['idle']:5.2f}x idle frame")
    print(f"key press, idle              {r['key_idle']:8.2f} ms   1.00x")
    print(
        f"key press, {r['feed_rate']:.0f} changes/s     {r['key_loaded']:8.2f} ms   "
        f"{r['key_loaded'] / r['key_idle']:5.2f}x idle key press"
    )
    print(f"key to screen, idle          {r['handled_idle']:8.2f} ms   1.00x")
    print(
        f"key to screen, {r['feed_rate']:.0f} changes/s {r['handled_loaded']:8.2f} ms   "
        f"{r['handled_loaded'] / r['handled_idle']:5.2f}x idle key to screen"
    )


if __name__ == "__main__":
    main()
