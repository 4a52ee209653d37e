"""The wall's refresh on a large simulated fleet: the map updated in place against the map laid out anew, per refresh.

    python bench/tui_wall.py [--nodes N,N] [--rounds N]

A simulated fleet of N nodes (default 3,000 and 10,000) in pools of at most 2,500, one certification per pool (every
node alone on all-reduce, 64 at a time; one Workflow of a group per node holds at most about 3,700), run 600 simulated
seconds into its Jobs; then `nvcre wall` at 200x60 (headless, no live engine). Each round runs the engine to its next
change (Jobs start or finish: node states change), takes the snapshot and shows it, and waits until the app is idle; a second refresh shows the same snapshot again, as the app does every second while a certification runs.
Timed: the process time of the refresh up to the idle app (the engine is not running then), its median over --rounds.
The two ways: the wall as it is, and the wall as it was (`OLD`, or the ways of it --old names: the map given every node
again, sorted and laid out anew with every line redrawn, the title and tally lines updated, laying the screen out again,
and the certification's held nodes worked out anew, at every refresh; the node states' every source worked out again
when Jobs came or went; the counters redrawn at every refresh, and the screen laid out again when a count changed
width), on the same app and the same change, so the ratio compares like with like. Not run by pytest (tests/test_benches.py runs its smallest size).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import time
import types
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.engine.report.nodestates import NodeStateModel
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.views.nodes import node_domain, node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.wall import CountDigits, WallScreen
from nvcre_tui.widgets.node_state import NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.console.harness import certification_body  # noqa: E402

SIZE = (200, 60)
POOL = 2_500
WARM_SECONDS, STEP_SECONDS = 600.0, 600.0
CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: burn-in-{pool}}}
spec:
  target: {{nodeSelector: {{pool: "{pool}"}}}}
  categories:
    - {{domain: communication, variant: nccl-all-reduce, options: {{testScale: intra-node, maxConcurrent: 64}}}}
"""


def scenario(nodes: int) -> Scenario:
    pools = -(-nodes // POOL)
    sizes = [nodes // pools + (1 if p < nodes % pools else 0) for p in range(pools)]
    return Scenario.model_validate({
        "name": f"bench wall {nodes}", "seed": 1, "physics": {"noise": 0.0},
        "nodes": [{"count": size, "namePrefix": f"p{p}-node-", "nameDigits": 5, "cliques": max(1, size // 18), "cliquePrefix": f"p{p}-clique-",
                   "labels": {"pool": f"p{p}"}} for p, size in enumerate(sizes)],
        "faults": [{"type": "slow-gpu", "node": "p0-node-00007", "gpu": 2, "factor": 0.5}]})


def old_show_map(screen: WallScreen, snapshot: Snapshot, every: Mapping[str, tuple[str, str]]) -> RackMap:
    """The wall's map before it was updated in place: every node given again at each refresh (sorted, laid out, every
    line drawn anew)."""
    rack_map = screen.query_one(RackMap)
    rack_map.set_nodes([NodeCell(node_name(n), node_domain(n, LABEL_GPU_CLIQUE), NodeState(every[node_name(n)][0])) for n in snapshot.nodes])
    return rack_map


def old_say(screen: WallScreen, line: str, text: str | Text) -> None:
    """The title and tally lines before they were updated only on a change: updated (the screen laid out again and drawn
    anew) at every refresh."""
    screen.query_one(line, Static).update(text)


def old_held_nodes(view: CertificationView) -> set[str]:
    """A certification's held nodes before the view kept them: worked out (every group of every Workflow decoded) at
    each call, the wall's every refresh."""
    held: Any = CertificationView.__dict__["_held"]  # the cached_property: its function works them out
    return set(held.func(view))


def old_kept(model: NodeStateModel) -> dict[tuple[object, ...], Any]:
    """The node-state model before a rebuild kept the marks of unchanged objects: none kept."""
    return {}


def old_marks(categories: Any, index: int, role: str, obj: Any, diagnosing: str, workflows: Any = None) -> Any:
    """The node-state model before a Workflow's marks were worked out once for both its roles."""
    return NEW_MARKS(categories, index, role, obj, diagnosing, None)


NEW_MARKS = NodeStateModel._marks
Way = list[tuple[type | None, str, Any]]  # (class, or None for the wall's instance; attribute; the old one)
# The wall as it was, way by way (--old names them): the map given every node again at each refresh; the title and tally
# lines updated (the screen laid out again) at each refresh; the certification's held nodes worked out at each call; the
# node states' every source worked out again when a category's Jobs came or went; the counters' Digits redrawn at each
# update and the screen laid out again when a count changed width.
OLD: dict[str, Way] = {
    "map": [(None, "_show_map", old_show_map)],
    "lines": [(None, "_say", old_say)],
    "held": [(CertificationView, "held_nodes", old_held_nodes)],
    "states": [(NodeStateModel, "_kept", old_kept), (NodeStateModel, "_marks", staticmethod(old_marks))],
    "counters": [(CountDigits, "update", Digits.update)],
}


async def process_ms(step: Callable[[], Awaitable[object]]) -> float:
    """Process time (ms) one awaited step takes: the app's work, not the pause's idle wait."""
    start = time.process_time()
    await step()
    return (time.process_time() - start) * 1000


async def measure(nodes: int, rounds: int, old_ways: list[tuple[type | None, str, Any]]) -> dict[str, float]:
    session = await SimSession.open(scenario(nodes), None, history=None)
    for pool in range(-(-nodes // POOL)):
        await session.store.create(CERTIFICATION, certification_body(CERT.format(pool=f"p{pool}")))
    engine = session.engine
    assert engine is not None
    await engine.run_until_settled(max_seconds=WARM_SECONDS)
    app = NvcreApp(session=session, live=False, wall=True)
    timings: dict[str, list[float]] = {"new": [], "old": [], "new same": [], "old same": [], "idle": []}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WallScreen)

        kept = {(owner, name): vars(owner)[name] for owner, name, _ in old_ways if owner is not None}  # as defined (a staticmethod too)

        def use(way: str) -> None:
            for owner, name, old in old_ways:  # the wall as it was; as it is again after
                if owner is None:  # on this instance only
                    if way == "old":
                        setattr(screen, name, types.MethodType(old, screen))
                    else:
                        screen.__dict__.pop(name, None)
                else:
                    setattr(owner, name, old if way == "old" else kept[(owner, name)])

        async def show(snapshot: Snapshot, p: Pilot[None] = pilot) -> None:
            app.snapshot = snapshot  # the screen shows it (as refresh_snapshot makes it do)
            await p.pause()

        async def again(p: Pilot[None] = pilot) -> None:
            screen.refresh_now()
            await p.pause()

        async def idle(p: Pilot[None] = pilot) -> None:
            await p.pause()

        assert app.informer is not None
        after = app.informer.snapshot()
        for round_ in range(rounds):
            before, seen = after, session.cache.version

            async def moved(since: int = seen) -> bool:
                return session.cache.version != since

            await engine.run_until_settled(until=moved, max_seconds=STEP_SECONDS)
            after = app.informer.snapshot()
            # The same change shown each way, from the snapshot before it to the one after; the first way also works out
            # what the views keep once asked (their cached properties): each way goes first every other round.
            for way in ("new", "old") if round_ % 2 == 0 else ("old", "new"):
                use(way)
                await show(before)
                timings[way].append(await process_ms(functools.partial(show, after)))
                timings[f"{way} same"].append(await process_ms(again))
            timings["idle"].append(await process_ms(idle))
        use("new")
        await show(before)
        await show(after)
        rack_map, expected = screen.query_one(RackMap), node_states(after, screen.current)
        assert len(rack_map.visible_names) == nodes, f"the map shows {len(rack_map.visible_names)} of {nodes} nodes"
        wrong = [name for name in rack_map.visible_names if (cell := rack_map.cell(name)) is None or cell.state.value != expected[name][0]]
        assert not wrong, f"the map shows {len(wrong)} nodes in another state than the read model's, first {wrong[0]}"
    await session.close()
    return {way: statistics.median(values) for way, values in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="3000,10000", help="fleet sizes, comma-separated (default 3000,10000)")
    parser.add_argument("--rounds", type=int, default=10, help="refreshes each way (the median is printed)")
    parser.add_argument("--old", default=",".join(OLD), help=f"which of the old ways the old wall has, comma-separated (default all: {','.join(OLD)})")
    args = parser.parse_args()
    unknown = set(args.old.split(",")) - set(OLD)
    if unknown:
        parser.error(f"--old: unknown {', '.join(sorted(unknown))}; known: {', '.join(OLD)}")
    sizes = [int(n) for n in args.nodes.split(",")]
    print(f"{'nodes':>6}  {'refresh after changes: old':>27} {'new':>8} {'ratio':>7}   {'same snapshot: old':>19} {'new':>8} {'ratio':>7}   {'idle pause':>10}")
    for nodes in sizes:
        r = asyncio.run(measure(nodes, args.rounds, [change for name in args.old.split(",") for change in OLD[name]]))
        print(f"{nodes:>6}  {r['old']:>24.1f} ms {r['new']:>5.1f} ms {r['old'] / r['new']:>6.1f}x   {r['old same']:>16.1f} ms {r['new same']:>5.1f} ms "
              f"{r['old same'] / r['new same']:>6.1f}x   {r['idle']:>7.1f} ms")
    print("process time per refresh up to the idle app (median); ratio: the wall as it was over the wall as it is")
    return 0


if __name__ == "__main__":
    sys.exit(main())
