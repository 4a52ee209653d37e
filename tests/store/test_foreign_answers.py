"""A server that is no Kubernetes API server (a wrong port, a proxy's page) answers HTML: over real HTTP, the error
is one line saying so, with the HTTP status, the content type and the start of the page's text, not the page."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.store import NODE, NotFound, StoreError
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.kube.answers import Subject, error_from_answer, object_from_answer

PAGE = b"""<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
        <style>body { color: red; }</style>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 404</p>
        <p>Message: File not found.</p>
    </body>
</html>
"""
SAID = "not a Kubernetes API answer (HTTP 404, text/html): Error response Error code: 404 Message: File not found."


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(404)
        self.send_header("Content-Type", "text/html;charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    """A kubeconfig naming a plain web server (as python -m http.server answers a wrong port)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    path = tmp_path / "kubeconfig"
    path.write_text(f"apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                    f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{server.server_port}'}}}}]\n"
                    "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n")
    try:
        yield path
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


async def test_an_html_answer_is_one_line_saying_it_is_no_kubernetes_answer(kubeconfig: Path) -> None:
    store = KubeStore(await load_target(str(kubeconfig)), SystemClock(), user_agent="test")
    try:
        with pytest.raises(StoreError) as error:
            await store.get(NODE, "gpu-01")
    finally:
        await store.close()
    assert str(error.value) == f"Node gpu-01: {SAID}"


def test_the_cli_says_it_in_one_line(kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["cluster", "info", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and SAID in err and "<" not in err


def test_answer_texts_without_a_status() -> None:
    node = Subject(NODE, "gpu-01")
    page = error_from_answer(502, b"<html><body><h1>Bad Gateway</h1>\n<hr><center>nginx</center></body></html>", node, None)
    assert str(page) == "Node gpu-01: not a Kubernetes API answer (HTTP 502, text/html): Bad Gateway nginx"
    # plain text: the API server's router answers so for a group it does not serve; one line, control characters shown
    plain = error_from_answer(404, b"404 page not found\n", node, None)
    assert isinstance(plain, NotFound) and str(plain) == "Node gpu-01: 404 page not found"
    lines = error_from_answer(502, b"Bad Gateway\n\n  upstream\tdown\x1b[2J" + b"x" * 500, node, None)
    assert str(lines) == "Node gpu-01: " + ("Bad Gateway upstream down\ufffd[2J" + "x" * 500)[:157] + "..."
    typed = error_from_answer(503, b"<p>down</p>", node, None, content_type="text/html; charset=utf-8")
    assert str(typed) == "Node gpu-01: not a Kubernetes API answer (HTTP 503, text/html): down"
    status = error_from_answer(404, b'{"kind": "Status", "code": 404, "reason": "NotFound"}', node, None)
    assert str(status) == "Node gpu-01: HTTP 404 NotFound"  # a Status without a message is still Kubernetes'
    assert str(error_from_answer(503, b"", node, None)) == "Node gpu-01: HTTP 503"
    assert object_from_answer(200, b'{"kind": "Node"}', node) == {"kind": "Node"}
    assert object_from_answer(200, b"", node) == {}
    with pytest.raises(StoreError, match=r"^Node gpu-01: not a Kubernetes API answer \(HTTP 200, text/html\): Please log in$"):
        object_from_answer(200, b"<html><head><title>Login</title></head><body><h1>Please\n log in</h1></body></html>", node)
    with pytest.raises(StoreError, match=r"^Node gpu-01: not a Kubernetes API answer \(HTTP 200, text/plain\): ok$"):
        object_from_answer(200, b"ok\n", node, "text/plain")
