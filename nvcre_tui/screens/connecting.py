"""What the console shows while its session is being opened: where it connects to, for how long so far, and that
q or ctrl+c quits. A server that accepts connections and never answers keeps the opening waiting for its transport's
timeouts (two tries of 10 s); the screen was blank meanwhile, and no key worked."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from nvcre_tui.engine.printable import printable


class ConnectingScreen(Screen[None]):
    """`connecting to <server> (<source>)…`, the seconds so far, and the keys that quit; replaced by the first console
    screen once the session is open."""

    BINDINGS = [Binding("ctrl+c", "app.quit", "Quit", show=False, priority=True, id="connecting.quit")]
    DEFAULT_CSS = """
    ConnectingScreen { align: center middle; }
    ConnectingScreen #connecting { width: auto; max-width: 100%; padding: 1 2; border: round $panel; }
    """

    def __init__(self, what: str) -> None:
        """what: `connecting to https://10.0.0.1:6443 (kubeconfig /home/me/.kube/config)`, said as it is, then `…`."""
        super().__init__()
        self.what = what
        self._started = time.monotonic()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._text(), id="connecting", markup=False)
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick, name="connecting")

    def _tick(self) -> None:
        self.query_one("#connecting", Static).update(self._text())

    def _text(self) -> Text:
        waited = int(time.monotonic() - self._started)
        text = Text(printable(f"{self.what}…", newlines=False), style="bold")
        text.append(f"\n{waited}s so far · q or ctrl+c quits" if waited else "\nq or ctrl+c quits")
        return text
