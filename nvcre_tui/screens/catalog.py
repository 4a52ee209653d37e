"""The catalog: every category the engine can certify, with its scales, metrics and budget — the
session's catalog (with its overrides), the one the engine runs with.

The table is fitted to the width (FittedTable): on 80 and 120 columns a DataTable cut Test scales and Metrics at the
right edge ("full-scale, intra-node, intra"). Cells wrap at words; Budget, Framework and Domain go (in that order)
when even wrapped rows do not fit, and the description under the table says every field of the highlighted entry
whole, its key (domain/variant) first."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.fitted_table import Column, Drop, FittedTable

COLUMNS = (Column("Domain", Drop.LAST, wrap=False), Column("Variant", wrap=False), Column("Framework", Drop.LAST), Column("Test scales"),
           Column("Metrics"), Column("Budget", Drop.LAST))


class CatalogScreen(Screen[None]):
    """A table of catalog entries and the description of the highlighted one."""

    DEFAULT_CSS = """
    CatalogScreen FittedTable { height: 1fr; }
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
        yield FittedTable(COLUMNS, id="categories")
        yield Static(id="description")
        yield CommandBar()
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        table = self.query_one(FittedTable)
        entries = self.catalog.entries
        table.set_rows({key: (entries[key].domain, entries[key].variant, entries[key].framework, ", ".join(entries[key].test_scales),
                              ", ".join(entries[key].metrics) or "exit status", str(entries[key].time_budget)) for key in sorted(entries)})
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        entry = self.catalog.entries[str(event.row_key.value)]
        # Content, not markup: a catalog directory ($NVCRE_CATALOG_DIR) is the user's text, brackets included.
        # Every column's field too: a narrow table leaves Budget, Framework and Domain out.
        fields = (f"framework {entry.framework} · scales {', '.join(entry.test_scales)} · metrics {', '.join(entry.metrics) or 'exit status'}"
                  f" · budget {entry.time_budget}")
        self.query_one("#description", Static).update(Content.assemble((entry.key, "bold"), " · ", (entry.title, "bold"), "\n", entry.description, "\n", (fields, "dim")))
