"""How long `dcgmi diag --run <level>` runs, from one table of its plugins' phases: planning's least timeoutPerJob
(planning/render.py) and the simulator's run length (sim/physics.py) both read it, so nvcre never suggests a timeout
its own simulator (or a real dcgmi) runs past.

What NVIDIA documents (DCGM user guide, `dcgmi diag` reference): level 1 lasts seconds, level 2 about two minutes,
level 3 about 15 minutes, level 4 is "extended" with no stated length. A plugin with a `test_duration` parameter runs
that long (defaults documented: diagnostic 180 s, targeted_power 120 s; targeted_stress's 120 s and memtest's 600 s
are assumed), and every plugin has phases the parameter does not count (CUDA context and kernel set-up, warm-up to
the target power, result collection; software, pcie, memory, nvbandwidth, memory_bandwidth and pulse_test have no
duration parameter at all). Those fixed seconds are assumptions, generous for an 8-GPU node; the margin covers a
slower node."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Phase:
    """One plugin of a suite: its `test_duration` default (0: it takes none) and the seconds it runs besides."""

    plugin: str
    test_duration: float
    fixed: float


_SOFTWARE = Phase("software", 0, 30)
_LEVEL2 = (_SOFTWARE, Phase("pcie", 0, 60), Phase("memory", 0, 30))
_LEVEL3 = (_SOFTWARE, Phase("pcie", 0, 120), Phase("memory", 0, 60), Phase("diagnostic", 180, 30),
           Phase("targeted_stress", 120, 30), Phase("targeted_power", 120, 60), Phase("memory_bandwidth", 0, 60))
# Level 4 (xlong, DCGM 4.x): level 3's plugins, nvbandwidth, memtest and the pulse test (EUD, where installed, is not
# run by the GPU Operator's host engine image and is left out).
PHASES: dict[str, tuple[Phase, ...]] = {
    "1": (_SOFTWARE,),
    "2": _LEVEL2,
    "3": _LEVEL3,
    "4": (*_LEVEL3, Phase("nvbandwidth", 0, 120), Phase("memtest", 600, 30), Phase("pulse_test", 0, 180)),
}
_ALIASES = {"quick": "1", "short": "1", "medium": "2", "long": "3", "xlong": "4"}
# The share of a run's modelled length the least timeoutPerJob adds on top: a node slower than the table.
MARGIN = 0.10
_TEST_DURATION = re.compile(r"^([\w]+)\.test_duration=(\d+(?:\.\d+)?)s?$", re.ASCII)


def suite(run: str) -> tuple[Phase, ...]:
    """The phases `--run <run>` runs: a level (1-4 or its alias), else the named plugins it lists ("memtest,pcie");
    a name the table does not know counts as level 4's longest guess (every level-4 phase), never as nothing."""
    level = _ALIASES.get(run.strip().lower(), run.strip())
    if level in PHASES:
        return PHASES[level]
    known = {phase.plugin: phase for phase in PHASES["4"]}
    names = [name.strip() for name in run.split(",") if name.strip()]
    return tuple(known[name] for name in names) if names and all(name in known for name in names) else PHASES["4"]


def run_level(args: Sequence[str]) -> str:
    """The `--run`/`-r` value of dcgmi diag's arguments ("4" when absent: the catalog's level)."""
    for flag in ("--run", "-r"):
        if flag in args and args.index(flag) + 1 < len(args):
            return args[args.index(flag) + 1]
    return "4"


def test_durations(args: Sequence[str]) -> dict[str, float]:
    """The `-p <plugin>.test_duration=<seconds>[s]` parameters of dcgmi diag's arguments, by plugin (";"-joined too)."""
    found: dict[str, float] = {}
    for arg in args:
        for part in arg.split(";"):
            if match := _TEST_DURATION.match(part.strip()):
                found[match.group(1)] = float(match.group(2))
    return found


def run_seconds(args: Sequence[str]) -> float:
    """Seconds `dcgmi diag <args>` runs on a healthy node: each phase's test_duration (a `-p` parameter over its
    default) plus its fixed seconds."""
    durations = test_durations(args)
    return sum(durations.get(phase.plugin, phase.test_duration) + phase.fixed for phase in suite(run_level(args)))


def with_margin(seconds: float) -> float:
    """A run's length and MARGIN on top, rounded up to whole minutes (a timeout a user copies)."""
    return math.ceil(seconds * (1 + MARGIN) / 60.0) * 60.0
