"""Every test: $XDG_STATE_HOME in a temporary folder, so nothing (the simulator state, the certification
history) is ever written under the real ~/.local/state."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("state-home")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    monkeypatch.delenv("NVCRE_HISTORY", raising=False)
    return home
