"""The engine Lease on the embedded store: EngineLease (the cluster's Lease object, in the same database
as everything else), plus one thing only a local store can know: whether the holder's process is alive.

Every nvcre process on one embedded store runs on this machine, so a holder `<role>@<this host>/<pid>/...`
whose pid is gone (SIGKILL, OOM, a closed terminal) is taken over at once rather than after the Lease's
duration. Expiry still applies to everything else (a holder on another host sharing the file, a process
that stopped renewing, a pid we cannot check).
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from datetime import datetime

from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE
from nvcre_tui.engine.lease import NO_HOLDER, EngineLease, LeaseHolder, engine_identity
from nvcre_tui.engine.printable import printable

__all__ = ["LocalLease", "LEASE_NAMESPACE", "LEASE_SECONDS", "local_identity", "describe_holder"]

LEASE_NAMESPACE = INSTALL_NAMESPACE  # where the Lease lives on a cluster too
LEASE_SECONDS = 15.0
_IDENTITY = re.compile(r"@(?P<host>[^/]+)/(?P<pid>\d+)(?:/|$)")


def local_identity(role: str) -> str:
    """`<role>@<host>/<pid>/<session>`: two sessions of one process (tests) are two contenders."""
    return f"{engine_identity(role)}/{uuid.uuid4().hex[:6]}"


def _process_gone(identity: str) -> bool:
    """True when `identity` names a process of this host that no longer exists."""
    match = _IDENTITY.search(identity)
    if match is None or match["host"] != socket.gethostname():
        return False
    pid = int(match["pid"])
    if pid == os.getpid():
        return False  # another session of this process: alive while it holds the Lease
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (another user's process): not ours to judge
    return False


def describe_holder(holder: LeaseHolder | None, now: datetime) -> str:
    """`engine held by run@host/123/ab12cd (renewed 4s ago)`, or that nobody holds it."""
    if holder is None or not holder.live or _process_gone(holder.identity):
        return NO_HOLDER
    renewal = holder.renewal(now)
    # the identity is any text a writer of the Lease chose: never a control sequence on a terminal
    return f"engine held by {printable(holder.identity, newlines=False)}" + (f" ({renewal})" if renewal is not None else "")


class LocalLease(EngineLease):
    """EngineLease that also takes over from a holder whose local process is gone."""

    async def try_acquire(self) -> bool:
        lease = await self._read()
        if lease is not None:
            holder = self._judge(lease)
            if holder is not None and holder.live and holder.identity != self.identity and _process_gone(holder.identity):
                return await self._write(lease, taking_over=True)
        return await super().try_acquire()

    async def holder(self) -> LeaseHolder | None:
        """The live holder; None when nobody holds it or its process is gone."""
        found = await super().holder()
        return None if found is None or _process_gone(found.identity) else found
