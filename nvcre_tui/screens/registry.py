"""Screens reachable by name (`:` commands, palette, wall rotation), imported on demand."""

from __future__ import annotations

import importlib

from textual.screen import Screen

# name -> (module under nvcre_tui.screens, class)
SCREENS: dict[str, tuple[str, str]] = {
    "dashboard": ("dashboard", "DashboardScreen"),
    "topology": ("topology", "TopologyScreen"),
    "wall": ("wall", "WallScreen"),
    "compose": ("compose", "ComposeScreen"),
    "catalog": ("catalog", "CatalogScreen"),
}


def build(name: str) -> Screen[None]:
    """A new screen of that name."""
    module, cls = SCREENS[name]
    return getattr(importlib.import_module(f"nvcre_tui.screens.{module}"), cls)()
