"""Diagnose cost: our adaptive group testing against NVCRE's plain halving (Bisect), on simulated fleets.

Run `python bench/diagnose.py` (add `--trials N` for more random fault placements per row). Both strategies see the
same fleet and the same OR-model oracle (a group fails if it holds a faulty node). A row averages over seeded random
placements of the faulty nodes; "x" columns are ours / halving, so below 1.00 means we spend less; "worst +" is the
largest number of extra rounds we needed over halving in any single trial (0 or less: never more rounds).

The halving baseline follows the reference: screening (one group per domain, or sqrt-N chunks), one inter-domain round
of representatives, then halving every failed group (including a failed inter group) until a failed group has at
most minGroupSize nodes, then one confirmation round pairing each suspect with a healthy node (no padding). With no
healthy node it marks the suspects failed without a test. Its cross-boundary probing never triggers under this oracle.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvcre_tui.engine.diagnose import plan_round, record_round, start

Domains = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Cost:
    """What a strategy spent on one fleet: rounds (Workflow iterations) and node-minutes (sum of group sizes)."""

    rounds: int
    node_minutes: int
    faulty: frozenset[str]


def ours(domains: Domains, min_group_size: int, faulty: Iterable[str]) -> Cost:
    """Run the engine's diagnose against the OR-model oracle."""
    bad = set(faulty)
    state = start(domains, min_group_size)
    while not state.complete:
        state = record_round(state, {g.name: not bad & set(g.nodes) for g in plan_round(state)})
    found = frozenset(n for n, v in state.verdicts().items() if v == "faulty")
    return Cost(state.round, state.node_minutes, found)


def halving(domains: Domains, min_group_size: int, faulty: Iterable[str]) -> Cost:
    """NVCRE's Bisect as the reference describes it (no padding, pairs for confirmation)."""
    bad = set(faulty)
    screening = [tuple(p.nodes) for p in start(domains, min_group_size).plan]  # the same screening groups as ours
    rounds, minutes = 1, sum(len(g) for g in screening)
    healthy: set[str] = {n for g in screening if not bad & set(g) for n in g}
    work = [sorted(g) for g in screening if bad & set(g)]
    representatives = [g[0] for g in screening if not bad & set(g)]
    if len(representatives) >= 2:
        rounds, minutes = rounds + 1, minutes + len(representatives)
        if bad & set(representatives):
            work.append(sorted(representatives))
    suspects: list[str] = []
    while True:
        halves = []
        for group in work:
            if len(group) <= min_group_size:
                suspects += group
            else:
                halves += [group[: len(group) // 2], group[len(group) // 2 :]]
        if not halves:
            break
        rounds, minutes = rounds + 1, minutes + sum(len(h) for h in halves)
        healthy |= {n for h in halves if not bad & set(h) for n in h}
        work = [h for h in halves if bad & set(h)]
    suspects = sorted(set(suspects) - healthy)
    if not suspects:
        return Cost(rounds, minutes, frozenset())
    if not healthy:  # "No healthy reference node; N suspects marked failed"
        return Cost(rounds + 1, minutes, frozenset(suspects))
    return Cost(rounds + 1, minutes + 2 * len(suspects), frozenset(s for s in suspects if s in bad))


def cliques(count: int, size: int) -> dict[str, list[str]]:
    """`count` topology domains of `size` nodes."""
    return {f"clique-{c:02d}": [f"c{c:02d}-n{i:02d}" for i in range(size)] for c in range(count)}


def unlabelled(count: int) -> dict[str, list[str]]:
    """A fleet without topology labels."""
    return {"": [f"node-{i:03d}" for i in range(count)]}


@dataclass(frozen=True)
class Row:
    """Mean costs of both strategies over the trials of one fleet, minGroupSize and fault count."""

    ours_rounds: float
    base_rounds: float
    ours_minutes: float
    base_minutes: float
    worst_round_excess: int  # max over trials of (our rounds - halving rounds); <= 0 means never more rounds


def compare(domains: Domains, min_group_size: int, faults: int, trials: int, seed: int = 7) -> Row:
    """Both strategies on `trials` seeded random placements of `faults` faulty nodes (all of them checked found)."""
    rng = random.Random(seed)
    nodes = sorted(n for names in domains.values() for n in names)
    runs = []
    for _ in range(trials):
        faulty = frozenset(rng.sample(nodes, faults))
        mine, base = ours(domains, min_group_size, faulty), halving(domains, min_group_size, faulty)
        if mine.faulty != faulty:
            raise AssertionError(f"diagnose missed or invented faults: {sorted(mine.faulty ^ faulty)}")
        runs.append((mine, base))
    return Row(
        statistics.fmean(m.rounds for m, _ in runs),
        statistics.fmean(b.rounds for _, b in runs),
        statistics.fmean(m.node_minutes for m, _ in runs),
        statistics.fmean(b.node_minutes for _, b in runs),
        max(m.rounds - b.rounds for m, b in runs),
    )


FLEETS: dict[str, dict[str, list[str]]] = {
    "64 = 8 cliques x 8": cliques(8, 8),
    "72 = 4 NVL72 racks x 18": cliques(4, 18),
    "256 = 16 cliques x 16": cliques(16, 16),
    "232 unlabelled": unlabelled(232),
}


def table(trials: int) -> list[str]:
    """The report lines."""
    columns = [("fleet", "<26"), ("m", ">3"), ("faults", ">7"), ("rounds ours/halving", ">22"), ("x", ">6")]
    columns += [("worst +", ">8"), ("node-min ours/halving", ">24"), ("x", ">6")]
    header = "".join(f"{title:{align}}" for title, align in columns)
    lines = [header, "-" * len(header)]
    for name, domains in FLEETS.items():
        for m in (1, 2, 4):
            for faults in (0, 1, 2, 3):
                row = compare(domains, m, faults, trials)
                rounds = f"{row.ours_rounds:.2f}/{row.base_rounds:.2f}"
                minutes = f"{row.ours_minutes:.1f}/{row.base_minutes:.1f}"
                ratios = (row.ours_rounds / row.base_rounds, row.ours_minutes / row.base_minutes)
                lines.append(
                    f"{name:<26}{m:>3}{faults:>7}{rounds:>22}{ratios[0]:>6.2f}{row.worst_round_excess:>+8d}"
                    f"{minutes:>24}{ratios[1]:>6.2f}"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50, help="random fault placements per row (default 50)")
    print("\n".join(table(parser.parse_args().trials)))


if __name__ == "__main__":
    main()
