"""Console tests: no animations, no cursor blink, a fixed terminal."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _quiet_console(monkeypatch: pytest.MonkeyPatch) -> None:
    import textual.constants

    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")  # read at import: patch the constant too
    monkeypatch.setattr("textual.widgets._input.Input._toggle_cursor", lambda self: None, raising=False)
