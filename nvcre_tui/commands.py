"""`:` commands and their command-palette mirror, built from the screen registry plus the few commands
that open no screen (theme, quit): one table, so the bar, the palette and `?` always offer the same things.

Mutating commands (compose) are filtered by the read-only policy in all three places.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme

from nvcre_tui.screens import registry
from nvcre_tui.screens.base import Console
from nvcre_tui.screens.registry import ScreenEntry


class CommandHost(Console, Protocol):
    """What a command may use of the app: the console's state plus a few Textual App methods."""

    nvcre_themes: dict[str, Theme]
    theme: str

    @property
    def screen(self) -> Screen[Any]: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    def push_screen(self, screen: Screen[Any]) -> Any: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None,
               markup: bool = True) -> None: ...

    def request_quit(self) -> None:
        """Quit, after asking when quitting stops this console's engine with certifications running."""
        ...


@dataclass(frozen=True)
class ColonCommand:
    """`:name [argument]`: what it does, the action it needs permission for, how it runs."""

    name: str
    help: str
    action: str
    run: Callable[[CommandHost, str], Any]
    argument: str | None = None  # e.g. "NAME": the command takes one

    @property
    def takes_argument(self) -> bool:
        return self.argument is not None

    @property
    def usage(self) -> str:
        return f":{self.name}" + (f" {self.argument}" if self.argument else "")


def _open(entry: ScreenEntry) -> Callable[[CommandHost, str], Any]:
    def go(app: CommandHost, argument: str) -> None:
        if entry.argument is not None:
            if not argument:
                app.notify(f"usage: :{entry.command} {entry.argument}", severity="warning")
                return
            app.push_screen(registry.build(entry.name, argument))
        elif type(app.screen).__name__ == entry.cls:  # already there: do not stack another
            return
        elif entry.single and any(type(screen).__name__ == entry.cls for screen in app.screen_stack):
            app.notify(f"the {entry.title.lower()} is open already: escape back to it", markup=False)
        else:
            app.push_screen(registry.build(entry.name))

    return go


def _theme(app: CommandHost, argument: str) -> None:
    known = ", ".join(sorted(app.nvcre_themes))
    if not argument:  # said "unknown theme ''", as if the empty name were one typed
        app.notify(f"usage: :theme NAME; known: {known}", severity="warning", markup=False)
        return
    if argument not in app.nvcre_themes:
        app.notify(f"unknown theme {argument!r}; known: {known}", severity="warning", markup=False)
        return
    app.theme = argument


COLON_COMMANDS: tuple[ColonCommand, ...] = (
    *(ColonCommand(entry.command, entry.help, entry.command, _open(entry), entry.argument) for entry in registry.SCREENS if entry.command),
    ColonCommand("theme", "Switch theme (nvcre-dark, nvcre-light, nvcre-high-contrast)", "theme", _theme, "NAME"),
    ColonCommand("q", "Quit", "quit", lambda app, _a: app.request_quit()),
)


# What the wall offers besides its own keys: it is a display that opens nothing (`nvcre wall` has no screen under it
# to go back to, and a wall opened from the console goes back with escape).
WALL_COMMANDS = frozenset({"theme", "q"})


def on_wall(app: Console, screen: Screen[Any] | None = None) -> bool:
    """Whether commands are asked for on the wall: `nvcre wall`, or the wall screen (`screen`, else the app's)."""
    shown = screen if screen is not None else getattr(app, "screen", None)
    return app.wall or type(shown).__name__ == registry.BY_NAME["wall"].cls


def allowed_commands(app: Console, screen: Screen[Any] | None = None) -> list[ColonCommand]:
    """The commands the policy allows, and on the wall (`on_wall`) only those it offers."""
    wall = on_wall(app, screen)
    return [command for command in COLON_COMMANDS if app.policy.allows(command.action) and (not wall or command.name in WALL_COMMANDS)]


def help_lines(app: Console) -> list[tuple[str, str]]:
    """(usage, what it does) of every allowed command, for `?`."""
    return [(command.usage, command.help) for command in allowed_commands(app)]


def hint(app: Console) -> str:
    """The command bar's placeholder: every allowed command."""
    return "  ".join(command.usage for command in allowed_commands(app))


def run_colon_command(app: CommandHost, text: str) -> None:
    """Parse `:name argument` and run it, or say why not."""
    name, _, argument = text.strip().lstrip(":").partition(" ")
    for command in COLON_COMMANDS:
        if command.name == name:
            if not app.policy.allows(command.action):
                app.notify(f":{name} is not available in read-only mode", severity="warning", markup=False)
                return
            if command not in allowed_commands(app):
                app.notify(f":{name} is not available on the wall", severity="warning", markup=False)
                return
            command.run(app, argument.strip())
            return
    app.notify(f"unknown command :{name}; try " + " ".join(f":{c.name}" for c in allowed_commands(app)), severity="warning", markup=False)


def _named_hits(app: CommandHost) -> Iterable[tuple[str, str, str]]:
    """(title, command text, help) for argument commands over what the snapshot names: nodes, certifications."""
    snapshot = app.snapshot
    for node in snapshot.nodes if snapshot else []:
        yield f"node: {node['metadata']['name']}", f"node {node['metadata']['name']}", "open the node"
    for cert in snapshot.certifications if snapshot else []:
        yield f"cert: {cert['metadata']['name']}", f"cert {cert['metadata']['name']}", "drill into the certification"


class NvcreCommands(Provider):
    """The `:` commands in the command palette (ctrl+p), plus one hit per node (`node NAME`) and per certification."""

    @property
    def _app(self) -> CommandHost:
        # cast: only NvcreApp lists this provider (app.py's COMMANDS) and it is a CommandHost; Textual types
        # Provider.app as any App
        return cast(CommandHost, self.app)

    async def discover(self) -> Hits:
        for command in allowed_commands(self._app, self.screen):  # the screen the palette was opened on
            if not command.takes_argument:
                yield DiscoveryHit(f"nvcre: {command.help}", partial(run_colon_command, self._app, command.name), help=command.usage)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        wall = on_wall(self._app, self.screen)  # the screen the palette was opened on
        for command in allowed_commands(self._app, self.screen):
            if command.takes_argument:
                continue
            title = f"nvcre: {command.help}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(run_colon_command, self._app, command.name), help=command.usage)
        for title, text, help_text in [] if wall else _named_hits(self._app):  # the wall opens no node or certification
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(run_colon_command, self._app, text), help=help_text)
