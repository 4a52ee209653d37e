"""fitted_table: columns fitted to a width, in the order what gives way (FIRST columns, then lines, then LAST
columns), words never broken; the widget refits on resize and keeps its cursor on the same key."""

from __future__ import annotations

from textual.app import App, ComposeResult

from nvcre_tui.widgets.fitted_table import Column, Drop, FittedTable, Layout, fit_columns

COLUMNS = (Column("Node"), Column("Category"), Column("Measured"), Column("Log", Drop.FIRST))
ROW = ("gpu-node-07", "communication/nccl-all-reduce", "busBandwidthGBps 264.81 (value >= 400)", "log")


def width_of(layout: Layout, padding: int = 1) -> int:
    return sum(layout.widths) + 2 * padding * len(layout.shown)


def test_a_wide_table_shows_every_column_whole_on_one_line() -> None:
    layout = fit_columns(COLUMNS, [ROW], 200)
    assert layout == Layout((0, 1, 2, 3), (11, 29, 38, 3), 1)


def test_a_first_column_goes_before_a_row_wraps() -> None:
    layout = fit_columns(COLUMNS, [ROW], 11 + 29 + 38 + 6)  # one line without Log
    assert layout == Layout((0, 1, 2), (11, 29, 38), 1)


def test_rows_wrap_at_words_and_after_a_slash_never_inside_a_word() -> None:
    layout = fit_columns(COLUMNS, [ROW], 60)
    assert layout.shown == (0, 1, 2) and layout.lines == 2 and width_of(layout) <= 60
    node, category, measured = layout.widths
    assert node >= len("gpu-node-07") and category >= len("nccl-all-reduce") and measured >= len("busBandwidthGBps")


def test_the_room_left_over_goes_where_a_cell_loses_a_line_soonest() -> None:
    rows = [ROW, ("gpu-node-12", "training/nemotron5-8b", "avgTFLOPsPerGPU 315.32 (value >= 800)", "-")]
    layout = fit_columns(COLUMNS, rows, 11 + 21 + 21 + 6)  # nemotron's category whole (21), every value on two lines
    assert layout.widths == (11, 21, 21) and layout.lines == 2


def test_a_last_column_goes_only_when_wrapped_rows_do_not_fit() -> None:
    columns = (Column("Category"), Column("Measured"), Column("Reason", Drop.LAST))
    row = ("communication/nccl-all-reduce", "busBandwidthGBps 264.81 (value >= 400)", "ThresholdViolation")
    wrapped = fit_columns(columns, [row], 15 + 16 + 18 + 6)
    assert wrapped.shown == (0, 1, 2) and wrapped.lines == 3
    dropped = fit_columns(columns, [row], 15 + 16 + 18 + 5)
    assert dropped.shown == (0, 1) and dropped.lines == 2 and width_of(dropped) <= 15 + 16 + 18 + 5


def test_too_narrow_for_the_longest_words_keeps_them_whole() -> None:
    layout = fit_columns(COLUMNS, [ROW], 30)  # narrower than "communication/" + "busBandwidthGBps" and padding
    assert layout.shown == (0, 1, 2) and layout.widths == (11, 15, 16) and layout.lines == 3


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FittedTable(COLUMNS)


async def test_the_table_refits_on_resize_and_keeps_its_cursor_on_the_same_key() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 12)) as pilot:
        table = app.query_one(FittedTable)
        table.set_rows({"a": ROW, "b": ("gpu-node-12", "communication/nccl-loopback", "busBandwidthGBps 160.59 (value >= 300)", "-")})
        await pilot.pause()
        table.move_cursor(row=1)
        assert [column.label.plain for column in table.ordered_columns] == ["Node", "Category", "Measured", "Log"]
        assert [row.height for row in table.ordered_rows] == [1, 1]
        await pilot.resize_terminal(60, 12)
        await pilot.pause()
        assert [column.label.plain for column in table.ordered_columns] == ["Node", "Category", "Measured"]
        assert [row.height for row in table.ordered_rows] == [2, 2] and table.max_scroll_x == 0
        assert table.cursor_row == 1


def test_an_empty_cell_needs_no_width() -> None:
    """A passed Job's Reason is empty: measuring it raised (textwrap refuses a width of 0)."""
    columns = (Column("Result"), Column("Reason"))
    assert fit_columns(columns, [("✓ passed", ""), ("✗ failed", "ThresholdViolation")], 200) == Layout((0, 1), (8, 18), 1)
    assert fit_columns(columns, [("✓ passed", "")], 200) == Layout((0, 1), (8, 6), 1)


async def test_the_same_rows_in_another_order_are_shown_in_that_order() -> None:
    """The screens look a row up by the cursor's index in their own list: a reorder the table did not show made `enter`
    and `l` act on another row than the one highlighted."""
    app = TableApp()
    async with app.run_test(size=(120, 12)) as pilot:
        table = app.query_one(FittedTable)
        other = ("gpu-node-12", "communication/nccl-loopback", "busBandwidthGBps 160.59 (value >= 300)", "-")
        table.set_rows({"a": ROW, "b": other})
        await pilot.pause()
        table.set_rows({"b": other, "a": ROW})
        await pilot.pause()
        assert [row.key.value for row in table.ordered_rows] == ["b", "a"]


def test_a_memo_gives_the_layout_it_saves_the_work_of() -> None:
    """A table keeps what it measured between refits (a failures pane of 2,000 rows refitted in 0.47 s once the shared
    cache overflowed); the memo must not change the layout."""
    rows = [ROW, ("gpu-node-12", "communication/nccl-loopback", "busBandwidthGBps 160.59 (value >= 300); algBandwidthGBps 80.2", "-")]
    memo: dict[tuple[str, int], int] = {}
    for width in (200, 60, 45, 30, 60):
        assert fit_columns(COLUMNS, rows, width, memo=memo) == fit_columns(COLUMNS, rows, width), width
    assert memo


def test_a_column_that_does_not_wrap_keeps_each_cell_on_one_line() -> None:
    """The failures pane's node: "✗" over "gpu-node-0001" doubled every row; another column wraps or goes instead."""
    columns = (Column("Node", wrap=False), Column("Measured"))
    layout = fit_columns(columns, [("✗ gpu-node-0001", "busBandwidthGBps 160.59 (value >= 300)")], 40)
    assert layout.widths[0] == len("✗ gpu-node-0001") and layout.lines == 2, layout


async def test_home_and_end_go_to_the_first_and_last_row() -> None:
    """DataTable's home and end move to the first and last column, which a fitted table never scrolls to: they did
    nothing in the failures pane."""
    app = TableApp()
    async with app.run_test(size=(120, 8)) as pilot:
        table = app.query_one(FittedTable)
        table.set_rows({f"n{index}": (f"gpu-node-{index:02}", "communication/nccl-loopback", "-", "-") for index in range(20)})
        table.focus()
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 19 and table.scroll_y == table.max_scroll_y > 0
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0 and table.scroll_y == 0


def test_a_glyph_column_keeps_its_glyph_with_the_name_and_wraps_the_rest_at_words() -> None:
    """The failures pane's Node column: "✗" never alone over "gpu-node-03", but a link fault's long subject wraps (kept
    on one line, it cut the measured value's threshold on 80 columns)."""
    from nvcre_tui.widgets.fitted_list import NO_BREAK, longest_word, wrapped
    from nvcre_tui.widgets.fitted_table import FittedTable

    glued = FittedTable._glued("✗ fabric clique-0 ↔ clique-1 degraded", True)
    assert wrapped(glued, 20) == [f"✗{NO_BREAK}fabric clique-0 ↔", "clique-1 degraded"]
    assert longest_word(FittedTable._glued("✗ gpu-node-03", True)) == len("✗ gpu-node-03")  # one word: never narrower
    assert wrapped("✗ gpu-node-03", 12) == ["✗", "gpu-node-03"]  # what it was kept from
    assert FittedTable._glued("✗ gpu-node-03", False) == "✗ gpu-node-03"


def test_wide_characters_are_measured_in_cells_not_characters() -> None:
    """A reason in CJK takes two cells a character: measured with len(), its column was half as wide as the text and
    the cell ran past it (rich cut it at the column's edge)."""
    from rich.cells import cell_len

    from nvcre_tui.widgets.fitted_list import cut_at_word, wrapped

    columns = (Column("Node"), Column("Reason"))
    row = ("gpu-node-07", "帯域幅が閾値を下回りました 測定値 264.81")
    layout = fit_columns(columns, [row], 200)
    assert layout.widths == (11, cell_len(row[1])) and layout.lines == 1
    narrow = fit_columns(columns, [row], 11 + 28 + 4)
    assert narrow.lines == 2 and all(cell_len(line) <= narrow.widths[1] for line in wrapped(row[1], narrow.widths[1]))
    assert all(cell_len(line) <= 10 for line in wrapped("閾値を下回りました", 10))  # one word longer than a line: broken at cells
    assert all(cell_len(line) <= 12 for line in cut_at_word("帯域幅 が 閾値 を 下回りました 測定値", 12, 2))
