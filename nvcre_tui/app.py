"""The Textual app: wires a session (catalog, fleet) to the screens; routes nothing domain-specific."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from nvcre_tui.engine.catalog import Catalog, default_catalog
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario
from nvcre_tui.screens.catalog import CatalogScreen


class NvcreApp(App[None]):
    """nvcre console."""

    TITLE = "nvcre console"
    BINDINGS = [Binding("q", "quit", "Quit", id="quit")]

    def __init__(self, *, scenario: Scenario | None = None, catalog: Catalog | None = None, read_only: bool = False) -> None:
        super().__init__()
        self.scenario = scenario or default_scenario()
        self.catalog = catalog or default_catalog()
        self.read_only = read_only
        self.sub_title = f"SIMULATED · {self.scenario.name}" + (" · READ-ONLY" if read_only else "")

    def on_mount(self) -> None:
        self.push_screen(CatalogScreen(self.catalog))
