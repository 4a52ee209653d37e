"""A log the runner or the cluster refuses is said in one line (audit of the console's error lines)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.app import NvcreApp

from .harness import session_with


API_ERROR = "(403)\nReason: Forbidden\nHTTP response headers: HTTPHeaderDict({'Audit-Id': 'x'})\nHTTP response body: {\"kind\":\"Status\"}\n"


async def test_a_log_the_cluster_refuses_is_said_in_one_line(monkeypatch: Any) -> None:
    """A Kubernetes API error's text is its status line, then its headers and body: the logs screen's toast and its
    placeholder showed all of them, one line each."""
    from nvcre_tui.screens.logs import LogsScreen

    from .harness import INTRA_NODE

    session = await session_with(INTRA_NODE)

    async def refused(run: Any) -> list[str]:
        raise RuntimeError(API_ERROR)

    monkeypatch.setattr(session.logs, "lines", refused)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        workflow = app.snapshot.workflows_of("burn-in")[0]["metadata"]["name"]
        job = app.snapshot.jobs_of(workflow)[0]["metadata"]["name"]
        await app.push_screen(LogsScreen(job))
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = [str(n.message) for n in app._notifications][-1]
        assert said == f"cannot read the logs of {job}: (403)", said
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "No output: cannot read the log: (403)" in shown and "HTTP response" not in shown, shown
