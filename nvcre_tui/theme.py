"""Console themes: every `themes/*.yaml` becomes a Textual `Theme`; `ThemedApp` registers them.

A theme file names the Textual base colours and, under `variables`, one `verdict-<state>` colour per
node state. Widgets only ever reference `$verdict-*`, so a theme restyles every map, legend and badge.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBool, ValidationError, model_validator
from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import load_yaml_document
from nvcre_tui.paths import data_dir, shown_file
from nvcre_tui.widgets.node_state import NodeState

DEFAULT_THEME = "nvcre-dark"
REQUIRED_VARIABLES: tuple[str, ...] = tuple(state.variable for state in NodeState)


def _colour(value: str) -> str:
    """Accept anything Textual CSS accepts as a colour (#rrggbb, rgb(...), names)."""
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"must be a colour such as #76B900, got {value!r}") from None
    return value


Colour = Annotated[str, AfterValidator(_colour)]


class ThemeFile(BaseModel):
    """The schema of one `themes/<name>.yaml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    dark: StrictBool  # strict: "maybe" is an error with a clear message, not a coercion attempt
    primary: Colour
    secondary: Colour | None = None
    accent: Colour | None = None
    foreground: Colour | None = None
    background: Colour | None = None
    surface: Colour | None = None
    panel: Colour | None = None
    success: Colour | None = None
    warning: Colour | None = None
    error: Colour | None = None
    variables: dict[str, Colour]

    @model_validator(mode="after")
    def _has_every_verdict(self) -> ThemeFile:
        missing = [name for name in REQUIRED_VARIABLES if name not in self.variables]
        if missing:
            raise ValueError(f"variables: missing {', '.join(missing)}")
        return self

    def to_theme(self) -> Theme:
        """The Textual theme this file describes."""
        return Theme(**self.model_dump())


def load_theme_file(path: Path) -> Theme:
    """Read and validate one theme file; InputError names the file and the field (themes/NAME in the shipped folder,
    else its own path: a site's folder in $NVCRE_THEMES_DIR was named as themes/ too, a file the user could not find)."""
    where = shown_file("themes", path.parent, path.name)
    document: Any = load_yaml_document(str(path), where)
    if not isinstance(document, dict):
        raise InputError(f"{where}: must be a mapping of theme fields")
    try:
        return ThemeFile.model_validate(document).to_theme()
    except ValidationError as error:
        raise InputError(validation_messages(error, where)) from None


def load_themes(folder: Path | None = None) -> dict[str, Theme]:
    """Every theme in `folder` (default: the shipped themes/), by name; the default theme must be among them."""
    folder = folder or data_dir("themes")
    paths = sorted(folder.glob("*.yaml"))
    if not paths:
        raise InputError(f"{folder}: no theme files (*.yaml)")
    themes: dict[str, Theme] = {}
    sources: dict[str, Path] = {}
    for path in paths:
        theme = load_theme_file(path)
        if theme.name in themes:
            raise InputError(f"{shown_file('themes', folder, path.name)}: name: {theme.name!r} is already used by "
                             f"{shown_file('themes', folder, sources[theme.name].name)}")
        themes[theme.name], sources[theme.name] = theme, path
    if DEFAULT_THEME not in themes:
        raise InputError(f"{folder}: the default theme {DEFAULT_THEME!r} is missing")
    return themes


def register_themes(app: App[Any], themes: Mapping[str, Theme]) -> None:
    """Register every theme with `app` (it can then switch with `app.theme = name`)."""
    for theme in themes.values():
        app.register_theme(theme)


ReturnType = TypeVar("ReturnType")


class ThemedApp(App[ReturnType]):
    """An App with the nvcre themes registered, `nvcre-dark` active, and `$verdict-*` always defined.

    The verdict defaults come from the default theme, so widgets still render under Textual's built-in
    themes (picked from the command palette), which know nothing of `$verdict-*`.
    """

    def __init__(
        self, *args: Any, themes: Mapping[str, Theme] | None = None, theme_name: str = DEFAULT_THEME, **kwargs: Any
    ) -> None:
        # App.__init__ already asks get_theme_variable_defaults(), so the themes must be known first.
        self.nvcre_themes: dict[str, Theme] = dict(themes) if themes is not None else load_themes()
        for name in dict.fromkeys((DEFAULT_THEME, theme_name)):
            if name not in self.nvcre_themes:
                raise InputError(f"theme: unknown theme {name!r}; known: {', '.join(sorted(self.nvcre_themes))}")
        super().__init__(*args, **kwargs)
        register_themes(self, self.nvcre_themes)
        self.theme = theme_name

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Textual's defaults plus the default theme's verdict colours."""
        defaults = self.nvcre_themes[DEFAULT_THEME].variables
        return {**super().get_theme_variable_defaults(), **{name: defaults[name] for name in REQUIRED_VARIABLES}}
