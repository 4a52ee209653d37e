"""Whether a server named with http:// speaks TLS: told only where it does, never guessed from a dropped connection."""

from __future__ import annotations

import asyncio
import contextlib
import ssl

from yarl import URL

__all__ = ["speaks_tls", "TLS_PROBE_SECONDS"]

TLS_PROBE_SECONDS = 3.0  # a handshake with a server that just dropped a plain request: it is there, and quick


async def speaks_tls(server: str) -> bool:
    """Whether `server` (an http:// URL) completes a TLS handshake at its host and port. Nothing is verified and nothing
    sent: the handshake alone tells an HTTPS server (which drops a plain request at its handshake) from a plain-HTTP one
    that reset the connection (restarting, overloaded), which fails it."""
    url = URL(server)
    if not url.host:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(url.host, url.port or 80, ssl=context), TLS_PROBE_SECONDS)
    except (OSError, ssl.SSLError, TimeoutError, ValueError):
        return False
    writer.close()
    with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
        await asyncio.wait_for(writer.wait_closed(), TLS_PROBE_SECONDS)
    return True
