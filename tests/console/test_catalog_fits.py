"""`:catalog` on 80 and 120 columns: no sideways scrolling and every cell shown whole (wrapped at words, or its
column left out while the description says it). A plain DataTable cut Test scales and Metrics at the right edge
("full-scale, intra-node, intra") on both sizes."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.screens.catalog import CatalogScreen

from .harness import session_with
from .test_narrow_tables import no_sideways_scroll, rendered_cells


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_catalog_fits_its_width_and_says_every_field(size: tuple[int, int]) -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=size) as pilot:
        app.run_command("catalog")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, CatalogScreen)
        table = app.screen.query_one("#categories", DataTable)
        no_sideways_scroll(table)
        entries = default_catalog().entries
        rows = rendered_cells(app, table)
        assert rows, "no row in sight"
        keys = [str(row.key.value) for row in table.ordered_rows]
        labels = {str(column.label) for column in table.ordered_columns}
        assert {"Variant", "Test scales", "Metrics"} <= labels
        for key, cells in zip(keys, rows):
            entry = entries[key]
            whole = {"Domain": entry.domain, "Variant": entry.variant, "Framework": entry.framework,
                     "Test scales": ", ".join(entry.test_scales), "Metrics": ", ".join(entry.metrics), "Budget": str(entry.time_budget)}
            assert cells == {label: whole[label] for label in cells}, key
        description = str(app.screen.query_one("#description", Static).render())
        first = entries[keys[0]]
        assert description.startswith(f"{first.key} · {first.title}\n")
        assert f"framework {first.framework}" in description and f"budget {first.time_budget}" in description
