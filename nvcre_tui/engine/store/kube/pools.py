"""The transport's connection pools, one per client certificate: an exec credential plugin's certificate renewed, new
requests go out on a new pool presenting the new one, as client-go's new connections do.

client-go also closes every connection of the old certificate at once. Closing a pool under a request reading its
answer, or a watch reading its stream, ended them with aiohttp's RuntimeError ("Connection closed."), which nothing
expects: the old pool is retired instead (no request goes out on it again) and closed once the last answer or watch
stream read from it is done (a watch ends within its timeoutSeconds and reopens on the new pool). The server checks a
certificate when a request comes in, never while a watch it let in streams, so nothing is refused meanwhile. Each pool
made and closed is told to the exec plugin's CertificateFiles, which removes a superseded certificate's files once no
pool presents it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .certfiles import CertificateFiles
from .client import ApiClient

__all__ = ["Pool", "Pools"]


@dataclass(eq=False)
class Pool:
    client: ApiClient
    certificate: str | None  # the client certificate file its connections present (None: none)
    in_use: int = 0          # requests and watch streams on it now


class Pools:
    """The current pool, made by `make` for the certificate `certificate` names now, and the retired ones still in use."""

    def __init__(self, make: Callable[[], ApiClient], certificate: Callable[[], str | None],
                 files: CertificateFiles | None = None) -> None:
        self._make = make
        self._certificate = certificate
        self._files = files
        self.current: Pool | None = None
        self._retired: list[Pool] = []

    async def take(self) -> Pool:
        """The pool a request goes out on, in use until `give_back`: a new one when the certificate changed since the
        current one was made (the current one retired)."""
        for pool in [pool for pool in self._retired if not pool.in_use]:
            # each taken off the list as it is closed (a request cancelled meanwhile leaves the others listed, closed by
            # the next), unless a request taking a pool meanwhile did: a close waits for its connections to end
            if pool in self._retired:
                self._retired.remove(pool)
                await self._close(pool)
        certificate = self._certificate()
        if self.current is not None and self.current.certificate != certificate:
            self._retired.append(self.current)
            self.current = None
        if self.current is None:
            self.current = Pool(self._make(), certificate)  # its TLS context loads the certificate now
            if self._files is not None:
                self._files.presenting(certificate)
        self.current.in_use += 1
        return self.current

    def give_back(self, pool: Pool) -> None:
        """The answer or stream read from `pool` is done (released or closed)."""
        pool.in_use -= 1

    async def close(self) -> None:
        pools = [*self._retired, *([self.current] if self.current is not None else [])]
        self.current, self._retired = None, []
        for pool in pools:
            await self._close(pool)

    async def _close(self, pool: Pool) -> None:
        await pool.client.close()
        if self._files is not None:
            self._files.released(pool.certificate)
