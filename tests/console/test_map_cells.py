"""The map's z steps through its cell modes and back to automatic: it toggled only compact/full, so once pressed the
map never went compact by itself again when the terminal shrank. The mode is said under the legend."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.rack_map import RackMap

from .harness import INTRA_NODE, marks_lines, session_with


def _legend(app: NvcreApp) -> str:
    return " ".join(marks_lines(app))


async def test_z_cycles_auto_compact_full_auto_and_auto_follows_a_resize() -> None:
    app = NvcreApp(session=await session_with(INTRA_NODE), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        rack_map = app.screen.query_one(RackMap)
        seen = []
        for press in range(4):
            if press:
                await pilot.press("z")
            await pilot.pause()
            seen.append((rack_map.compact, rack_map.is_compact, " ".join(_legend(app).split())))
        assert seen == [(None, False, "cells: auto (full) · z: compact"), (True, True, "cells: compact · z: full"),
                        (False, False, "cells: full · z: auto"), (None, False, "cells: auto (full) · z: compact")]
        await pilot.resize_terminal(40, 16)  # full cells no longer fit: automatic mode goes compact by itself
        await pilot.pause()
        await pilot.pause()
        assert rack_map.compact is None and rack_map.is_compact
        assert " ".join(_legend(app).split()) == "cells: auto (compact) · z: full"
        await pilot.press("z")  # the first press shows what automatic mode does not
        await pilot.pause()
        assert not rack_map.is_compact and " ".join(_legend(app).split()) == "cells: full · z: compact"
