"""The one table of console screens. It feeds the `:` commands and the command palette (commands.py),
the `?` help (help.py) and the read-only test that drives every binding, so none of them can miss a screen.

Screens are imported on demand (by name), which keeps this module free of screen imports: a screen may
open another through `build` without an import circle."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from textual.screen import Screen


@dataclass(frozen=True)
class ScreenEntry:
    """A screen: where its class lives, its heading in `?`, and its `:` command when it has one.

    command: the `:` name (None: reached only from another screen, e.g. a job's logs);
    argument: what the command takes (`:node NAME`), passed to the screen's constructor;
    single: never two of it in the stack (the wall)."""

    name: str
    title: str
    module: str
    cls: str
    command: str | None = None
    help: str = ""
    argument: str | None = None
    single: bool = False  # at most one in the screen stack (its command notifies instead of stacking a second)

    def load(self) -> type[Screen[None]]:
        """The screen class."""
        screen: type[Screen[None]] = getattr(importlib.import_module(f"nvcre_tui.screens.{self.module}"), self.cls)
        return screen


SCREENS: tuple[ScreenEntry, ...] = (
    ScreenEntry("dashboard", "Dashboard", "dashboard", "DashboardScreen", "certs", "Certifications (dashboard)"),
    ScreenEntry("drilldown", "Drill-down", "drilldown", "DrilldownScreen", "cert", "One certification, level by level", "NAME"),
    ScreenEntry("topology", "Topology map", "topology", "TopologyScreen", "racks", "Topology map of the fleet"),
    ScreenEntry("node", "Node", "node", "NodeScreen", "node", "One node's results across certifications", "NAME"),
    ScreenEntry("logs", "Logs", "logs", "LogsScreen"),
    ScreenEntry("bandwidth", "Bandwidth", "bandwidth", "BandwidthScreen"),
    ScreenEntry("compose", "Compose", "compose", "ComposeScreen", "compose", "Compose and submit a certification"),
    ScreenEntry("catalog", "Catalog", "catalog", "CatalogScreen", "catalog", "The workload catalog"),
    ScreenEntry("wall", "Wall", "wall", "WallScreen", "wall", "Wall display (read-only rotation)", single=True),
)
BY_NAME = {entry.name: entry for entry in SCREENS}


def build(name: str, *arguments: str) -> Screen[None]:
    """A new screen of that name."""
    return BY_NAME[name].load()(*arguments)
