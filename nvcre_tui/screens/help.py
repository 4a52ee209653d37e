"""`?`: every key binding, grouped by screen (every screen of the registry), plus the `:` commands —
built from the bindings themselves, so it can never drift from what the keys do. Read-only mode
leaves out what it refuses. The app hands in the command lines (attributes down: no import of the app
or of commands.py from here)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from nvcre_tui.policy import Policy
from nvcre_tui.screens.base import NO_COMMAND_BAR
from nvcre_tui.screens.registry import SCREENS, ScreenEntry


def _keys(binding: Binding) -> str:
    return ", ".join(key.replace("question_mark", "?").replace("colon", ":").replace("slash", "/") for key in binding.key.split(","))


class HelpScreen(ModalScreen[None]):
    """All key bindings."""

    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll { width: 90; max-width: 100%; height: 90%; border: round $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, policy: Policy, app_bindings: Sequence[BindingType], commands: Sequence[tuple[str, str]],
                 screens: Sequence[ScreenEntry] = SCREENS, palette: str = "command palette (: commands, nodes, certifications)",
                 here: str | None = None) -> None:
        """commands: (usage, what it does) of the `:` commands the policy allows; screens: those whose keys are listed
        (`nvcre wall`: the wall alone, no other screen is reached there); palette: what ctrl+p offers; here: the class
        name of the screen `?` was pressed on, whose keys come first after those that work everywhere (on the
        drill-down at 80x24 the first page was the dashboard's keys, the drill-down's two pages down)."""
        super().__init__()
        self.policy, self.app_bindings, self.commands = policy, app_bindings, commands
        self.screens = sorted(screens, key=lambda entry: entry.cls != here)  # stable: the others in the registry's order
        self.palette = palette

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, pad_edge=False, expand=True)
        table.add_column("keys", style="bold", width=16)
        table.add_column("does")
        table.add_row("[u]Everywhere[/u]", "")
        for binding in self.app_bindings:
            if isinstance(binding, Binding) and self.policy.allows(binding.action):
                table.add_row(_keys(binding), binding.tooltip or binding.description)
        table.add_row("ctrl+p", self.palette)
        for entry in self.screens:
            screen = entry.load()
            table.add_row("", "")
            table.add_row(f"[u]{entry.title}[/u]", "")
            # A widget's keys say where they apply: the dashboard's enter opens a certification from its table and
            # a node's evidence from the failures pane.
            bindings = [*((b, "") for b in screen.BINDINGS),
                        *((b, f"{getattr(widget, 'HELP_NAME', widget.__name__)}: ") for widget in getattr(screen, "HELP_WIDGETS", ())
                          for b in widget.BINDINGS)]
            for binding, where in bindings:
                if isinstance(binding, Binding) and binding is not NO_COMMAND_BAR and self.policy.allows(binding.action):
                    does = binding.tooltip or binding.description
                    table.add_row(_keys(binding), f"{where}{does[:1].lower()}{does[1:]}" if where else does)
        table.add_row("", "")
        table.add_row("[u]: commands[/u]", "")
        for usage, does in self.commands:
            table.add_row(usage, does)
        with VerticalScroll():
            yield Static(table)
