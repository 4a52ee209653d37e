"""`:` commands and their command-palette mirror: one table, so both always offer the same things.

Mutating commands (compose) are filtered by the read-only policy in both places.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from nvcre_tui.app import NvcreApp


@dataclass(frozen=True)
class ColonCommand:
    """`:name [argument]`: what it does, the action it needs permission for, how it runs."""

    name: str
    help: str
    action: str
    run: Callable[[NvcreApp, str], Any]
    takes_argument: bool = False


def _screen(name: str) -> Callable[[NvcreApp, str], Any]:
    def go(app: NvcreApp, _argument: str) -> None:
        from nvcre_tui.screens import registry

        if type(app.screen).__name__ != registry.SCREENS[name][1]:  # already there: do not stack another
            app.push_screen(registry.build(name))

    return go


def _node(app: NvcreApp, argument: str) -> None:
    from nvcre_tui.screens.node import NodeScreen

    if not argument:
        app.notify("usage: :node NAME", severity="warning")
        return
    app.push_screen(NodeScreen(argument))


def _theme(app: NvcreApp, argument: str) -> None:
    if argument not in app.nvcre_themes:
        app.notify(f"unknown theme {argument!r}; known: {', '.join(sorted(app.nvcre_themes))}", severity="warning")
        return
    app.theme = argument


COLON_COMMANDS: tuple[ColonCommand, ...] = (
    ColonCommand("certs", "Certifications (dashboard)", "certs", _screen("dashboard")),
    ColonCommand("racks", "Topology map of the fleet", "racks", _screen("topology")),
    ColonCommand("node", "One node's results across certifications", "node", _node, takes_argument=True),
    ColonCommand("wall", "Wall display (read-only rotation)", "wall", _screen("wall")),
    ColonCommand("compose", "Compose and submit a certification", "compose", _screen("compose")),
    ColonCommand("catalog", "The workload catalog", "catalog", _screen("catalog")),
    ColonCommand("theme", "Switch theme (nvcre-dark, nvcre-light, nvcre-high-contrast)", "theme", _theme, takes_argument=True),
    ColonCommand("q", "Quit", "quit", lambda app, _a: app.exit()),
)


def allowed_commands(app: NvcreApp) -> list[ColonCommand]:
    """The commands the policy allows."""
    return [command for command in COLON_COMMANDS if app.policy.allows(command.action)]


def run_colon_command(app: NvcreApp, text: str) -> None:
    """Parse `:name argument` and run it, or say why not."""
    name, _, argument = text.strip().lstrip(":").partition(" ")
    for command in COLON_COMMANDS:
        if command.name == name:
            if not app.policy.allows(command.action):
                app.notify(f":{name} is not available in read-only mode", severity="warning")
                return
            command.run(app, argument.strip())
            return
    app.notify(f"unknown command :{name}; try " + " ".join(f":{c.name}" for c in allowed_commands(app)), severity="warning")


class NvcreCommands(Provider):
    """The `:` commands in the command palette (ctrl+p), plus one hit per node for `node NAME`."""

    @property
    def _app(self) -> NvcreApp:
        return self.app  # type: ignore[return-value]

    async def discover(self) -> Hits:
        for command in allowed_commands(self._app):
            if not command.takes_argument:
                yield DiscoveryHit(f"nvcre: {command.help}", partial(run_colon_command, self._app, command.name), help=f":{command.name}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in allowed_commands(self._app):
            if command.takes_argument:
                continue
            title = f"nvcre: {command.help}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(run_colon_command, self._app, command.name), help=f":{command.name}")
        snapshot = self._app.snapshot
        for node in snapshot.nodes if snapshot else []:
            name = node["metadata"]["name"]
            title = f"node: {name}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(run_colon_command, self._app, f"node {name}"), help="open the node")
