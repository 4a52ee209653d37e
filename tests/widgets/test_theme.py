"""Theme files: all shipped themes load with their verdict colours; broken files are named precisely."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from textual.app import ComposeResult

from nvcre_tui.engine.errors import InputError
from nvcre_tui.paths import data_dir
from nvcre_tui.theme import DEFAULT_THEME, REQUIRED_VARIABLES, ThemedApp, load_themes
from nvcre_tui.widgets.legend import Legend
from nvcre_tui.widgets.node_state import NodeState

SHIPPED = data_dir("themes")


def shipped(name: str) -> dict[str, object]:
    return yaml.safe_load((SHIPPED / f"{name}.yaml").read_text(encoding="utf-8"))


def test_every_shipped_theme_loads_with_every_verdict_variable() -> None:
    themes = load_themes()
    assert sorted(themes) == ["nvcre-dark", "nvcre-high-contrast", "nvcre-light"]
    assert REQUIRED_VARIABLES == tuple(f"verdict-{state.value}" for state in NodeState)
    for name, theme in themes.items():
        document = shipped(name)
        assert theme.name == name
        assert theme.dark is document["dark"]
        assert theme.primary == document["primary"]
        assert theme.variables == document["variables"]
        assert set(REQUIRED_VARIABLES) <= set(theme.variables)


def test_themes_dir_can_be_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(SHIPPED / "nvcre-dark.yaml", tmp_path)
    monkeypatch.setenv("NVCRE_THEMES_DIR", str(tmp_path))
    assert list(load_themes()) == ["nvcre-dark"]


def _with(broken: dict[str, object] | str, tmp_path: Path) -> Path:
    shutil.copy(SHIPPED / "nvcre-dark.yaml", tmp_path)
    text = broken if isinstance(broken, str) else yaml.safe_dump(broken)
    (tmp_path / "broken.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _light(**changes: object) -> dict[str, object]:
    document = shipped("nvcre-light")
    document.update(changes)
    return {key: value for key, value in document.items() if value is not None}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (_light(primary="greenish"), "themes/broken.yaml: primary: must be a colour such as #76B900, got 'greenish'"),
        (_light(primary=None), "themes/broken.yaml: primary: required field is missing"),
        (_light(dark="maybe"), "themes/broken.yaml: dark: must be true or false, got 'maybe'"),
        (_light(primay="#fff"), "themes/broken.yaml: primay: unknown field"),
        (
            _light(variables={**shipped("nvcre-light")["variables"], "verdict-passed": "nope"}),  # type: ignore[dict-item]
            "themes/broken.yaml: variables.verdict-passed: must be a colour such as #76B900, got 'nope'",
        ),
        (_light(variables={"verdict-passed": "#00ff00"}), "themes/broken.yaml: variables: missing verdict-failed, "),
        ("name: [unclosed", "themes/broken.yaml:1:16: invalid YAML"),
        ("- just\n- a list\n", "themes/broken.yaml: must be a mapping of theme fields"),
        (_light(name="nvcre-dark"), "themes/nvcre-dark.yaml: name: 'nvcre-dark' is already used by themes/broken.yaml"),
    ],
)
def test_a_broken_theme_file_names_file_and_field(broken: dict[str, object] | str, message: str, tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_themes(_with(broken, tmp_path))
    # a folder of one's own is named by its path (it was named themes/, as the shipped one)
    message = message.replace("themes/", f"{tmp_path}/")
    assert any(line.startswith(message) for line in caught.value.messages), caught.value.messages


def test_a_broken_shipped_theme_is_named_under_themes(monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui import theme

    def broken(path: str, name: str | None = None) -> object:
        raise InputError(f"{name}: broken")

    monkeypatch.setattr(theme, "load_yaml_document", broken)
    with pytest.raises(InputError, match=r"^themes/nvcre-dark\.yaml: broken$"):
        load_themes()


def test_missing_default_theme_or_empty_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no theme files"):
        load_themes(tmp_path)
    shutil.copy(SHIPPED / "nvcre-light.yaml", tmp_path)
    with pytest.raises(InputError, match=f"default theme '{DEFAULT_THEME}' is missing"):
        load_themes(tmp_path)


def test_unknown_start_theme_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown theme 'neon'; known: nvcre-dark, nvcre-high-contrast, nvcre-light"):
        ThemedApp(theme_name="neon")


class LegendApp(ThemedApp[None]):
    def compose(self) -> ComposeResult:
        yield Legend()


def passed_colour(app: LegendApp) -> str:
    style = app.query_one(Legend).get_component_rich_style("legend--passed")
    return style.color.triplet.hex.upper()  # type: ignore[union-attr]


async def test_switching_themes_at_run_time_restyles_verdicts() -> None:
    app = LegendApp()
    themes = app.nvcre_themes
    async with app.run_test(size=(100, 5)) as pilot:
        assert app.theme == DEFAULT_THEME
        assert passed_colour(app) == themes["nvcre-dark"].variables["verdict-passed"].upper()
        for name in ("nvcre-light", "nvcre-high-contrast"):
            app.theme = name
            await pilot.pause()
            assert app.theme_variables["verdict-failed"] == themes[name].variables["verdict-failed"]
            assert passed_colour(app) == themes[name].variables["verdict-passed"].upper()
        # A built-in Textual theme knows nothing of $verdict-*: the default theme's colours fill in.
        app.theme = "nord"
        await pilot.pause()
        assert passed_colour(app) == themes[DEFAULT_THEME].variables["verdict-passed"].upper()
