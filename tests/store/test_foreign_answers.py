"""A server that is no Kubernetes API server (a wrong port, a proxy's page, a web server answering 404 to every path):
over real HTTP, the error is one line naming the server and saying it is none, from what its /api answers; an answer
without a Status from a real API server (its router's `404 page not found`) keeps its own text."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.store import NODE, NotFound, NotKubernetes, StoreError
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
    """Every path: the HTML page of a 404, as `python -m http.server` answers; `api` answers /api instead when set."""

    api: tuple[int, str, bytes] | None = None  # (status, content type, body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        status, kind, body = self.api if self.api and self.path.split("?")[0] == "/api" else (404, "text/html;charset=utf-8", PAGE)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass


class _Plain404(_Page):
    """A web server (or a non-Kubernetes API) answering a bare `404 page not found` to every path."""

    def do_GET(self) -> None:  # noqa: N802
        body = b"404 page not found\n"
        self.send_response(404)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler], folder: Path) -> Iterator[tuple[Path, str]]:
    """(a kubeconfig naming a plain web server on a free port, its URL)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    path = folder / "kubeconfig"
    path.write_text(f"apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                    f"clusters: [{{name: c, cluster: {{server: '{url}'}}}}]\n"
                    "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n")
    try:
        yield path, url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A kubeconfig naming a plain web server (as python -m http.server answers a wrong port), and its URL."""
    with serving(_Page, tmp_path) as found:
        yield found


@pytest.fixture
def kubeconfig(web_server: tuple[Path, str]) -> Path:
    return web_server[0]


async def test_an_html_404_is_no_kubernetes_api_server_named_as_such(web_server: tuple[Path, str]) -> None:
    kubeconfig, url = web_server
    store = KubeStore(await load_target(str(kubeconfig)), SystemClock(), user_agent="test")
    try:
        with pytest.raises(NotKubernetes) as error:
            await store.get(NODE, "gpu-01")
        with pytest.raises(NotKubernetes):  # never "not served": nvcre's CRDs are not what is missing
            await store.served_resources("nvcre.nvidia.com/v1alpha1")
    finally:
        await store.close()
    assert str(error.value) == f"{url}: not a Kubernetes API server (/api answers 404)"


async def test_an_html_page_from_a_server_whose_api_is_kubernetes_keeps_its_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy's error page for one path, in front of a real API server (/api answers APIVersions): said as it was."""
    monkeypatch.setattr(_Page, "api", (200, "application/json", b'{"kind": "APIVersions", "versions": ["v1"]}'))
    with serving(_Page, tmp_path) as (kubeconfig, _):
        store = KubeStore(await load_target(str(kubeconfig)), SystemClock(), user_agent="test")
        try:
            with pytest.raises(StoreError) as error:
                await store.get(NODE, "gpu-01")
            # the router's bare 404 for a group the server does not serve: not served, as before
            assert await store.served_resources("nvcre.nvidia.com/v1alpha1") is None
        finally:
            await store.close()
    assert str(error.value) == f"Node gpu-01: {SAID}" and not isinstance(error.value, NotKubernetes)


@pytest.mark.parametrize(("argv", "said"), [
    (["certification", "list"], "{url} ({source}): not a Kubernetes API server (/api answers 404)"),
    (["certification", "run", "--category", "communication/nccl-all-reduce"],
     "{url} ({source}): not a Kubernetes API server (/api answers 404)"),
    (["setup", "init"], "nvcre setup init: {url}: not a Kubernetes API server (/api answers 404)"),
    (["setup", "status"], "nvcre setup status: {url}: not a Kubernetes API server (/api answers 404)"),
    (["setup", "reset", "--yes"], "nvcre setup reset: {url}: not a Kubernetes API server (/api answers 404)"),
    (["cluster", "info"], "{url}: not a Kubernetes API server (/api answers 404)"),
    (["--read-only"], "{url} ({source}): not a Kubernetes API server (/api answers 404)"),
    (["controller", "--metrics-port", "0"], "nvcre controller: {url} ({source}): not a Kubernetes API server (/api answers 404)"),
])
def test_a_web_server_answering_404_everywhere_is_said_so_by_every_command(argv: list[str], said: str, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """It was "the nvcre.nvidia.com CRDs are not installed; run `nvcre setup init` first" (list, run), "CustomResourceDefinition
    ...: HTTP 404" (init), "discovery: HTTP 404" (status): read as a cluster without nvcre."""
    monkeypatch.setenv("HOME", str(tmp_path))
    with serving(_Plain404, tmp_path) as (kubeconfig, url):
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        assert main(argv) == 2
    assert capsys.readouterr().err == said.format(url=url, source=f"kubeconfig {kubeconfig}") + "\n"


def test_an_api_that_answers_no_api_versions_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(_Page, "api", (200, "text/html", b"<html><head><title>x</title></head><body>Welcome to nginx!</body></html>"))
    with serving(_Page, tmp_path) as (kubeconfig, url):
        assert main(["setup", "status", "--kubeconfig", str(kubeconfig)]) == 2
        assert main(["certification", "list", "--kubeconfig", str(kubeconfig)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"nvcre setup status: {url}: not a Kubernetes API server (/api answers HTTP 200 text/html: Welcome to nginx!)",
        f"{url} (kubeconfig {kubeconfig}): not a Kubernetes API server (/api answers HTTP 200 text/html: Welcome to nginx!)"]


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
