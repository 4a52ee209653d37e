"""What the console says about bad input typed into its screens: one line per problem, naming where and what, never
a dump (audit of the console's own messages)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button

from nvcre_tui.app import NvcreApp

from .harness import compose_path_said, session_with


def screen_text(app: NvcreApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_file_of_many_problems_is_said_in_a_few_lines_and_the_modal_keeps_its_buttons(tmp_path: Path) -> None:
    """A file that is no Certification at all (a passwd file, a values.yaml) has one problem per key: the load
    modal listed every one on a line of its own and pushed its Load and Cancel buttons off an 80x24 screen."""
    junk = tmp_path / "values.yaml"
    junk.write_text("".join(f"key{index}: {index}\n" for index in range(30)))
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        said = await compose_path_said(app, pilot, "ctrl+o", str(junk))
        lines = said.splitlines()
        assert len(lines) == 4 and lines[0].startswith(f"{junk}: ") and "more" in lines[-1], said
        assert f"nvcre certification render {junk}" in lines[-1]
        shown = screen_text(app)
        for button in app.screen.query(Button):
            assert str(button.label) in shown and button.region.bottom <= 24, f"{button.label} off screen"


async def test_a_path_with_a_control_character_is_said_with_it_neutralised(tmp_path: Path) -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        said = await compose_path_said(app, pilot, "ctrl+o", str(tmp_path / "a\x1b[2Jb.yaml"))
        assert "\x1b" not in said and said.endswith("b.yaml: no such file"), repr(said)
