"""The files an exec credential plugin's client certificates and keys are written to: the client loads a certificate
from a file only. The library wrote each answer to a temporary file kept until the process exited, so a controller
whose plugin renews its certificate hourly left a certificate and its private key on disk for each hour it ran. A pair
is now removed once superseded (a new certificate taken) and no connection pool presents it any more (Pools tells
`presenting` and `released`, for every transport of the target); the pair in use, at exit."""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from collections import Counter

__all__ = ["CertificateFiles", "Pair"]

Pair = tuple[str, str]  # (certificate file, key file)


class CertificateFiles:
    """One exec plugin's certificate files (its loader's): the current pair, the superseded ones still presented."""

    def __init__(self, directory: str | None = None) -> None:
        self._directory = directory
        self.current: Pair | None = None
        self._content: Pair | None = None  # what the current pair's files hold (a plugin answering it again keeps them)
        self._superseded: list[Pair] = []
        self._presenting: Counter[str] = Counter()  # connection pools presenting each certificate file
        self._at_exit = False

    def write(self, certificate: str, key: str) -> Pair:
        """Files holding `certificate` and `key`: the current pair's where it holds them (the refused one handed out
        again is then no other credential), else new ones, private to this user, not yet current (`take`)."""
        if self.current is not None and self._content == (certificate, key):
            return self.current
        return self._file(certificate), self._file(key)

    def take(self, pair: Pair, certificate: str, key: str) -> None:
        """`pair` (holding `certificate` and `key`) is the one new connections present now; the one before is
        superseded, removed as soon as no pool presents it."""
        if pair == self.current:
            return
        if self.current is not None:
            self._superseded.append(self.current)
        self.current, self._content = pair, (certificate, key)
        self._sweep()

    def drop(self, pair: Pair) -> None:
        """`pair` written, never taken (its certificate did not load)."""
        if pair != self.current:
            _remove(pair)

    def presenting(self, certificate: str | None) -> None:
        """A connection pool was made presenting `certificate` (any file: only the pairs written here are removed)."""
        if certificate is not None:
            self._presenting[certificate] += 1

    def released(self, certificate: str | None) -> None:
        """A pool presenting `certificate` was closed."""
        if certificate is not None and self._presenting[certificate] > 0:
            self._presenting[certificate] -= 1
            self._sweep()

    def remove_all(self) -> None:
        for pair in [*self._superseded, *([self.current] if self.current is not None else [])]:
            _remove(pair)
        self._superseded, self.current, self._content = [], None, None

    def _sweep(self) -> None:
        for pair in [pair for pair in self._superseded if not self._presenting[pair[0]]]:
            self._superseded.remove(pair)
            del self._presenting[pair[0]]
            _remove(pair)

    def _file(self, content: str) -> str:
        if not self._at_exit:
            atexit.register(self.remove_all)
            self._at_exit = True
        descriptor, name = tempfile.mkstemp(prefix="nvcre-exec-", dir=self._directory)  # mode 0600: a private key
        with os.fdopen(descriptor, "w") as file:
            file.write(content)
        return name


def _remove(pair: Pair) -> None:
    for path in pair:
        with contextlib.suppress(OSError):  # gone already (a tmp cleaner): nothing left to remove
            os.remove(path)
