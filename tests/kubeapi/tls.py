"""HTTPS for the emulator, as a real cluster serves: a throwaway CA (openssl), a serving certificate for
127.0.0.1, and client certificates whose CN is the user and O entries the groups (x509 authentication)."""

from __future__ import annotations

import functools
import ssl
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Authority", "authority", "renewed"]

CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]  # EC keys: fast to make
# OpenSSL's X509_V_FLAG_NO_CHECK_TIME (ssl.VerifyFlags does not name it): the handshake checks a client certificate's
# chain but not its dates. The real server's TLS does not verify client certificates at all (Go's RequestClientCert);
# its x509 authenticator checks them, dates too, at each request: an expired one is answered 401, never a handshake
# refused (answers.certificate_user).
NO_CHECK_TIME = 0x200000


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass(frozen=True)
class Authority:
    """A CA and its serving certificate, in `folder` (PEM files)."""

    folder: Path

    @property
    def ca_pem(self) -> bytes:
        return (self.folder / "ca.crt").read_bytes()

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.folder / "server.crt", self.folder / "server.key")
        context.load_verify_locations(self.folder / "ca.crt")
        context.verify_mode = ssl.CERT_OPTIONAL  # a client certificate authenticates; a token does too
        context.verify_flags |= NO_CHECK_TIME
        return context

    def client_certificate(self, user: str, groups: tuple[str, ...] = (), days: int = 2) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) for `user` in `groups`, signed by this CA, valid for `days` from now (-1: expired
        a day ago)."""
        subject = "/CN=" + user.replace("/", "\\/") + "".join(f"/O={g}" for g in groups)
        with tempfile.TemporaryDirectory() as temp:
            where = Path(temp)
            _run("req", *CURVE, "-keyout", "client.key", "-out", "client.csr", "-subj", subject, cwd=where)
            _run("x509", "-req", "-in", "client.csr", "-CA", str(self.folder / "ca.crt"), "-CAkey",
                 str(self.folder / "ca.key"), "-CAcreateserial", "-out", "client.crt", "-days", str(days), cwd=where)
            return (where / "client.crt").read_bytes(), (where / "client.key").read_bytes()


def _serving_certificate(folder: Path) -> None:
    """server.key/server.crt for 127.0.0.1 and localhost, signed by the CA in `folder`."""
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _run("req", *CURVE, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=kube-apiserver", cwd=folder)
    _run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
         "server.crt", "-days", "2", "-extfile", "san.cnf", cwd=folder)


def renewed(old: Authority) -> Authority:
    """The same CA with a new serving certificate (and key), as a server's certificate rotation makes."""
    folder = Path(tempfile.mkdtemp(prefix="kubeapi-tls-"))
    for name in ("ca.crt", "ca.key"):
        (folder / name).write_bytes((old.folder / name).read_bytes())
    _serving_certificate(folder)
    return Authority(folder)


@functools.cache
def authority() -> Authority:
    """One CA + serving certificate per test process (making keys is the slow part)."""
    folder = Path(tempfile.mkdtemp(prefix="kubeapi-tls-"))
    _run("req", "-x509", *CURVE, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=kubeapi-emulator-ca",
         cwd=folder)
    _serving_certificate(folder)
    return Authority(folder)
