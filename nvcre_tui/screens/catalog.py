"""The catalog: every category the engine can certify, with its scales, metrics and budget — the
session's catalog (with its overrides), the one the engine runs with."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.widgets.command_bar import CommandBar


class CatalogScreen(Screen[None]):
    """A table of catalog entries and the description of the highlighted one."""

    DEFAULT_CSS = """
    CatalogScreen DataTable { height: 1fr; }
    CatalogScreen #description { height: auto; padding: 1 2; border-top: solid $primary; }
    """

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="catalog.back")]

    def __init__(self, catalog: Catalog | None = None) -> None:
        """catalog: what to show (default: the session's, else the shipped one)."""
        super().__init__()
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        session = getattr(self.app, "session", None)
        return self._catalog or getattr(session, "catalog", None) or default_catalog()

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(cursor_type="row", zebra_stripes=True, id="categories")
        yield Static(id="description")
        yield CommandBar()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Domain", "Variant", "Framework", "Test scales", "Metrics", "Budget")
        for key in sorted(self.catalog.entries):
            entry = self.catalog.entries[key]
            table.add_row(entry.domain, entry.variant, entry.framework, ", ".join(entry.test_scales), ", ".join(entry.metrics) or "exit status", entry.time_budget, key=key)
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        entry = self.catalog.entries[str(event.row_key.value)]
        # Content, not markup: a catalog directory ($NVCRE_CATALOG_DIR) is the user's text, brackets included.
        self.query_one("#description", Static).update(Content.assemble((entry.title, "bold"), "\n", entry.description))
