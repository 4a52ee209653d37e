"""A throwaway Kubernetes control plane (etcd + kube-apiserver on loopback), as controller-runtime's envtest starts it.

Needs `KUBEBUILDER_ASSETS` naming a folder with the `etcd` and `kube-apiserver` binaries (what
`setup-envtest use -p path` prints) and `openssl` (for the service-account signing key). Those binaries
come from the Kubernetes release buckets, not from PyPI or Debian, so they cannot be installed on this
project's machines: tests that need a control plane skip, naming this variable, when it is not set.

What is started (and why):
- etcd with a temporary --data-dir, clients on a free loopback port, peers on port 0, fsync off (speed);
- kube-apiserver on a free loopback port with --cert-dir (it writes a self-signed serving cert there, which
  the client trusts), a static token for a `system:masters` user (no client certificates to make), and an
  RSA key from openssl as the service-account issuer/signing key (required flags since 1.20).
Requests go through urllib: server-side apply is a PATCH with `application/apply-patch+yaml` (JSON is YAML).
Clients under test (KubeStore) get a kubeconfig from `write_kubeconfig`; `wipe` empties collections between
tests that share one control plane (starting one takes seconds).
The ServiceAccount admission plugin is off: no controller-manager creates the `default` service accounts
that it would require of every Pod.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any

ASSETS_ENV = "KUBEBUILDER_ASSETS"
BINARIES = ("etcd", "kube-apiserver")
TOKEN = "nvcre-envtest-token"
STARTUP_SECONDS = 60.0
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SKIP_REASON = (f"needs ${ASSETS_ENV}: a folder with etcd and kube-apiserver (setup-envtest); "
               "they are not on PyPI or Debian, so this machine cannot install them")


def assets_dir() -> Path | None:
    """The KUBEBUILDER_ASSETS folder when it holds both binaries, else None."""
    value = os.environ.get(ASSETS_ENV)
    if not value:
        return None
    folder = Path(value)
    if all(os.access(folder / name, os.X_OK) for name in BINARIES):
        return folder
    return None


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ApiError(RuntimeError):
    """A non-2xx answer from the API server, with its status and Status body."""

    def __init__(self, code: int, body: dict[str, Any]) -> None:
        self.code = code
        self.body = body
        super().__init__(f"HTTP {code}: {body.get('message', body)}")


class ControlPlane:
    """etcd + kube-apiserver in `workdir`; a context manager that always stops both."""

    def __init__(self, assets: Path, workdir: Path) -> None:
        self.assets = assets
        self.workdir = workdir
        self.port = free_port()
        self.processes: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []
        self._tls: ssl.SSLContext | None = None

    def __enter__(self) -> ControlPlane:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # ------------------------------------------------------------------ processes

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.workdir / f"{name}.log").open("wb")
        self._logs.append(log)
        self.processes.append(subprocess.Popen([str(self.assets / name), *args], stdout=log, stderr=subprocess.STDOUT))

    def _log_tail(self, name: str, lines: int = 20) -> str:
        path = self.workdir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def start(self) -> None:
        """Start etcd, then the API server; return once /readyz answers ok."""
        etcd_port = free_port()
        certs = self.workdir / "certs"
        certs.mkdir(parents=True, exist_ok=True)
        key = self.workdir / "sa.key"
        subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f'{TOKEN},admin,admin,"system:masters"\n')
        self._spawn("etcd", [
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls=http://127.0.0.1:0",
            "--unsafe-no-fsync=true",
        ])
        self._spawn("kube-apiserver", [
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            f"--cert-dir={certs}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            f"--token-auth-file={tokens}",
            "--authorization-mode=RBAC",
            "--disable-admission-plugins=ServiceAccount",
            f"--service-account-issuer=https://127.0.0.1:{self.port}/",
            f"--service-account-key-file={key}",
            f"--service-account-signing-key-file={key}",
        ])
        self._wait_ready(certs / "apiserver.crt")

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def serving_cert(self) -> Path:
        return self.workdir / "certs" / "apiserver.crt"

    def write_kubeconfig(self, path: Path, namespace: str = "default", context: str = "envtest") -> Path:
        """A kubeconfig for clients under test: this server, its serving cert as CA, the admin token."""
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "envtest", "cluster": {"server": self.url,
                                                         "certificate-authority": str(self.serving_cert)}}],
            "users": [{"name": "admin", "user": {"token": TOKEN}}],
            "contexts": [{"name": context, "context": {"cluster": "envtest", "user": "admin", "namespace": namespace}}],
        }
        path.write_text(json.dumps(config))  # JSON is YAML
        return path

    def wipe(self, collection: str, keep_namespaces: frozenset[str] = frozenset({"kube-system", "kube-public",
                                                                                    "kube-node-lease"})) -> None:
        """Delete every object of a collection URL (all namespaces), finalizers released, no grace period."""
        try:
            items = self.request("GET", collection).get("items", [])
        except ApiError as error:
            if error.code == 404:
                return
            raise
        for item in items:
            metadata = item["metadata"]
            if metadata.get("namespace") in keep_namespaces:
                continue
            base, plural = collection.rsplit("/", 1)
            scope = f"/namespaces/{metadata['namespace']}" if metadata.get("namespace") else ""
            url = f"{base}{scope}/{plural}/{metadata['name']}"
            try:
                if metadata.get("finalizers"):
                    self.request("PATCH", url, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
                self.request("DELETE", url + "?gracePeriodSeconds=0")
            except ApiError as error:
                if error.code != 404:
                    raise

    def _wait_ready(self, serving_cert: Path) -> None:
        # Polling is the only way to see an external process come up; bounded by STARTUP_SECONDS.
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            for process, name in zip(self.processes, BINARIES):
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode}:\n{self._log_tail(name)}")
            try:  # the serving cert appears in --cert-dir before the port opens
                self._tls = ssl.create_default_context(cafile=str(serving_cert))
                if self._raw("GET", "/readyz")[0] == 200:
                    return
            except (OSError, ApiError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"kube-apiserver not ready in {STARTUP_SECONDS:.0f}s:\n{self._log_tail('kube-apiserver')}")

    def stop(self) -> None:
        """Stop the API server, then etcd (reverse start order)."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()

    # ------------------------------------------------------------------ requests

    def _open(self, method: str, path: str, body: bytes | None, content_type: str | None, timeout: float) -> http.client.HTTPResponse:
        request = urllib.request.Request(f"https://127.0.0.1:{self.port}{path}", data=body, method=method)
        request.add_header("Authorization", f"Bearer {TOKEN}")
        request.add_header("Accept", "application/json")
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            answer: http.client.HTTPResponse = urllib.request.urlopen(request, context=self._tls, timeout=timeout)
            return answer
        except urllib.error.HTTPError as error:
            payload = error.read()
            raise ApiError(error.code, json.loads(payload) if payload.startswith(b"{") else {"message": payload.decode()}) from None

    def _raw(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> tuple[int, bytes]:
        with self._open(method, path, body, content_type, timeout=10) as answer:
            return answer.status, answer.read()

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> dict[str, Any]:
        """A JSON request; raises ApiError on a non-2xx answer."""
        data = None if body is None else json.dumps(body).encode()
        return json.loads(self._raw(method, path, data, content_type if data else None)[1])

    def apply(self, path: str, obj: dict[str, Any], field_manager: str = "nvcre") -> dict[str, Any]:
        """Server-side apply `obj` at `path` (the object's own URL)."""
        query = f"?fieldManager={field_manager}&force=true"
        return self.request("PATCH", path + query, obj, content_type="application/apply-patch+yaml")

    def apply_when_served(self, path: str, obj: dict[str, Any], seconds: float = 10.0) -> dict[str, Any]:
        """apply(), retried while the path answers 404: a kind is served a moment after its CRD is Established."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                return self.apply(path, obj)
            except ApiError as error:
                if error.code != 404 or time.monotonic() > deadline:
                    raise
            time.sleep(0.2)  # bounded by `seconds`; there is nothing to watch for "handler ready"

    def watch(self, path: str, field_selector: str, seconds: int = 30) -> Iterator[dict[str, Any]]:
        """The objects of a watch on `path` (a collection URL), as events arrive."""
        query = f"?watch=true&fieldSelector={field_selector}&timeoutSeconds={seconds}"
        with self._open("GET", path + query, None, None, timeout=seconds + 5) as stream:
            for line in stream:
                if line.strip():
                    yield json.loads(line)["object"]

    def wait_crd(self, name: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The CRD `name` once `done(crd)` holds (watched, not polled)."""
        for crd in self.watch(CRD_PATH, f"metadata.name%3D{name}"):
            if done(crd):
                return crd
        raise TimeoutError(f"CustomResourceDefinition {name} did not reach the expected state")


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The status condition of type `kind`, if any."""
    return next((c for c in obj.get("status", {}).get("conditions", []) if c.get("type") == kind), None)


def established(crd: dict[str, Any]) -> bool:
    """True once the API server serves the CRD's kind."""
    found = condition(crd, "Established")
    return found is not None and found.get("status") == "True"
