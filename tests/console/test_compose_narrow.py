"""The compose screen's category list on 80 and 120 columns: each category's title reads whole (its entry wraps
under the key), and a wrapped entry's box stays on its first line. The titles were cut with "…" (on 80 columns
to a word or two; on 120, "NCCL loopback over NV…")."""

from __future__ import annotations

import pytest
from textual.widgets import SelectionList

from nvcre_tui.engine.planning.catalog_load import default_catalog

from .test_compose import open_compose, push_compose, select_category
from .test_narrow_tables import joined

NVSWITCH = "communication/nccl-loopback-nvswitch"  # the longest key and title


def entries_in_sight(selection: SelectionList[str]) -> dict[str, str]:
    """Key -> the entry as drawn: its box, then its lines `joined` (spaces collapsed), for the entries whose first
    line is in sight. Each line must be an entry's first (its box) or one under it (blank where the box is)."""
    entries: list[tuple[str, list[str]]] = []
    for y in range(selection.size.height):
        line = selection.render_line(y).text
        if line.startswith(("▐X▌ ", "▐ ▌ ")):
            entries.append((line[:3], [line[4:].strip()]))
        else:
            assert line.startswith("    "), f"no box, yet not under an entry: {line!r}"
            if entries and line.strip():
                entries[-1][1].append(line.strip())
    for _, lines in entries:  # an entry not whole on one line puts its title under its key: never begun beside it
        assert len(lines) == 1 or len(lines[0].split()) == 1, lines
    texts = [(box, " ".join(joined(lines).split())) for box, lines in entries]
    return {text.split()[0]: f"{box} {text}" for box, text in texts}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_category_title_reads_whole(size: tuple[int, int]) -> None:
    app = await open_compose()
    catalog = default_catalog()
    async with app.run_test(size=size) as pilot:
        screen = await push_compose(app, pilot)
        selection = screen.query_one("#categories", SelectionList)
        seen = set()
        for index in range(selection.option_count):  # the list scrolls: each entry brought into sight in turn
            selection.highlighted = index
            await pilot.pause()
            key = selection.get_option_at_index(index).value
            entries = entries_in_sight(selection)
            assert entries.get(key, "").endswith(f"{key} {catalog.entries[key].title}"), entries
            seen.add(key)
        assert seen == set(catalog.entries)


async def test_a_wrapped_entry_keeps_its_box_on_its_first_line_and_its_state() -> None:
    """SelectionList takes line y for entry y: below a wrapped entry, boxes showed the wrong entries' states."""
    app = await open_compose()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await push_compose(app, pilot)
        await select_category(pilot, screen, NVSWITCH)
        selection = screen.query_one("#categories", SelectionList)
        entries = entries_in_sight(selection)
        assert len(entries) == selection.option_count  # all in sight on 40 lines, the NVSwitch entry on two of them
        assert entries[NVSWITCH] == f"▐X▌ {NVSWITCH} NCCL loopback over NVSwitch", entries
        assert [key for key, text in entries.items() if text.startswith("▐X▌")] == [NVSWITCH], entries
        await pilot.press("down", "space")  # the entry after the wrapped one
        await pilot.pause()
        after = selection.get_option_at_index(selection.highlighted or 0).value
        assert after != NVSWITCH and selection.selected == [NVSWITCH, after]
        assert sorted(key for key, text in entries_in_sight(selection).items() if text.startswith("▐X▌")) == sorted([NVSWITCH, after])


async def test_a_selected_categorys_options_title_reads_whole_at_80_columns() -> None:
    """The options panel under the list named the category cut at the form's edge: "communication/nccl-all-reduce · NCCL al"."""
    app = await open_compose()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await push_compose(app, pilot)
        await select_category(pilot, screen, NVSWITCH)
        title = screen.query_one(".panel-title")
        title.scroll_visible(animate=False)
        await pilot.pause()
        region = title.region.intersection(screen.query_one("#form").region)  # what the form shows of it
        strips = screen._compositor.render_strips()
        lines = [strips[y].crop(region.x, region.right).text.strip() for y in range(region.y, region.bottom)]
        assert lines and " ".join(" ".join(lines).split()) == f"{NVSWITCH} · NCCL loopback over NVSwitch", lines


async def test_a_threshold_row_leaves_its_expression_room_at_80_columns() -> None:
    """The metric's select took 24 cells: on 80 columns the CEL expression had 12, and `value >= 300.5` scrolled out of
    sight as it was typed. The longest metric still reads whole."""
    from textual.widgets import Input, Select

    from nvcre_tui.widgets.compose_fields import ThresholdRow

    app = await open_compose()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await push_compose(app, pilot)
        await screen.run_action("load_default")
        await pilot.pause()
        row = screen.query(ThresholdRow).first()
        assert row.query_one(Input).size.width >= 16, row.query_one(Input).size
        row.scroll_visible(animate=False)
        await pilot.pause()
        select = row.query_one(Select)
        drawn = screen._compositor.render_strips()[select.region.y].crop(select.region.x, select.region.right).text
        assert "busBandwidthGBps" in drawn, drawn
