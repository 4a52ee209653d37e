"""`?`: every key binding, grouped by screen, plus the `:` commands — built from the bindings
themselves, so it can never drift from what the keys do. Read-only mode leaves out what it refuses."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from nvcre_tui.commands import allowed_commands

if TYPE_CHECKING:
    from nvcre_tui.app import NvcreApp

# (title, module, class) of every screen whose keys the help lists.
SCREENS = (
    ("Dashboard", "dashboard", "DashboardScreen"), ("Drill-down", "drilldown", "DrilldownScreen"),
    ("Topology map", "topology", "TopologyScreen"), ("Node", "node", "NodeScreen"), ("Logs", "logs", "LogsScreen"),
    ("Bandwidth", "bandwidth", "BandwidthScreen"), ("Compose", "compose", "ComposeScreen"), ("Wall", "wall", "WallScreen"),
)


def _keys(binding: Binding) -> str:
    return ", ".join(key.replace("question_mark", "?").replace("colon", ":").replace("slash", "/") for key in binding.key.split(","))


class HelpScreen(ModalScreen[None]):
    """All key bindings."""

    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll { width: 90; height: 90%; border: round $primary; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        app = cast("NvcreApp", self.app)
        table = Table(box=None, show_header=False, pad_edge=False, expand=True)
        table.add_column("keys", style="bold", width=16)
        table.add_column("does")
        table.add_row("[u]Everywhere[/u]", "")
        for binding in app.BINDINGS:
            assert isinstance(binding, Binding)
            table.add_row(_keys(binding), binding.tooltip or binding.description)
        table.add_row("ctrl+p", "command palette (the : commands and nodes by name)")
        for title, module, cls in SCREENS:
            try:
                screen = getattr(importlib.import_module(f"nvcre_tui.screens.{module}"), cls)
            except (ImportError, AttributeError):
                continue
            table.add_row("", "")
            table.add_row(f"[u]{title}[/u]", "")
            bindings = [*screen.BINDINGS, *(b for widget in getattr(screen, "HELP_WIDGETS", ()) for b in widget.BINDINGS)]
            for binding in bindings:
                if isinstance(binding, Binding) and app.policy.allows(binding.action):
                    table.add_row(_keys(binding), binding.tooltip or binding.description)
        table.add_row("", "")
        table.add_row("[u]: commands[/u]", "")
        for command in allowed_commands(app):
            table.add_row(f":{command.name}" + (" ARG" if command.takes_argument else ""), command.help)
        with VerticalScroll():
            yield Static(table)
