"""Fixtures for every test over the API-server emulator (or a real kube-apiserver under KUBEBUILDER_ASSETS)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _short_namespace_controller_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """`setup reset` gives a namespace controller 5 s to show itself before it finalizes an emptied install namespace
    itself. Neither server here has one that is slow to start (the emulator's marks the namespace as the delete is
    answered; an API server alone has none), so the 5 s were only waited out, in some forty tests: 0.2 s (reset looks
    again every 0.5 s, so a bare server's namespace is finalized after one look, not three)."""
    monkeypatch.setattr("nvcre_tui.cli.setup.reset.NAMESPACE_WAIT_SECONDS", 0.2)
