"""Whether the CRDs an engine reconciles still carry its schema, at its start and while it runs.

An engine writes what this nvcre's CRDs describe; CRDs that `setup init` of another version applied prune (or refuse)
fields it writes. A process checks them before it runs an engine (`installed_crds`), and a running engine looks again
every SCHEMA_CHECK_SECONDS (`changed_under`): `setup init` of another nvcre re-stamps them under an engine that holds the
Lease, and that engine then stops reconciling instead of writing its objects with the old schema. A process that opened
as a viewer on another nvcre's schema looks as often for its own (`restored`: `setup init` of its version ran), and may
then take the Lease. Four GETs a look, as
the engine's RBAC grants (get on our four CRDs, no list or watch).
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.kube.install import InstalledSchema, install_crds, installed_schema, schema_refusal
from nvcre_tui.engine.store.errors import Forbidden, NotFound, StoreError, Unauthorized
from nvcre_tui.engine.store.protocol import CRD, ResourceStore

__all__ = ["SCHEMA_CHECK_SECONDS", "installed_crds", "changed_under", "restored", "stopped_for"]

# How often a running engine reads its CRDs again: the longest it writes with a schema `setup init` --force replaced.
# Not a look before each write: it doubles the engine's requests and still races an init between look and write; a CRD
# watch needs list/watch RBAC the engine is not granted, and lags too. No window: stop the engine before init (README).
SCHEMA_CHECK_SECONDS = 10.0


async def installed_crds(store: ResourceStore) -> InstalledSchema | None:
    """What our CRDs on the cluster say of the nvcre that installed them (`installed_schema`; absent ones passed over).
    Forbidden and other store errors are the caller's."""
    return installed_schema(await _stored_crds(store))


async def _stored_crds(store: ResourceStore) -> list[dict[str, Any]]:
    stored: list[dict[str, Any]] = []
    for wanted in install_crds():
        try:
            stored.append(await store.get(CRD, wanted["metadata"]["name"]))
        except NotFound:
            continue
    return stored


def stopped_for(installed: InstalledSchema) -> str:
    """One line: a running engine stopped because its CRDs now carry another schema (both versions named)."""
    return f"engine stopped: the nvcre CRDs changed while it ran: {schema_refusal(installed)}"


async def _look_until(store: ResourceStore, clock: Clock, *, ours: bool) -> tuple[bool, InstalledSchema | None]:
    """Look at the CRDs every SCHEMA_CHECK_SECONDS until they carry (`ours`) or no longer carry this engine's schema (none
    stamped counts as ours, as at an engine's start, but none there at all is not yet ours: `setup reset` deleted them,
    and no `setup init` of this version ran): (True, what they say). (False, None) at once when they may not be read; a
    look that fails otherwise (the API server away, a 401 while a token rotates) is tried again at the next."""
    while True:
        await clock.sleep(SCHEMA_CHECK_SECONDS)
        try:
            stored = await _stored_crds(store)
        except Unauthorized:  # a Forbidden to the store, but no RBAC word: a token rotated, a webhook's hiccup
            continue
        except Forbidden:
            return False, None
        except StoreError:
            continue
        if ours and not stored:
            continue
        installed = installed_schema(stored)
        if (installed is None or installed.order == "same") == ours:
            return True, installed


async def changed_under(store: ResourceStore, clock: Clock) -> str | None:
    """Once the CRDs carry another schema than this engine's, `stopped_for`; None at once when they may not be read (the
    engine said so at its start, and runs unchecked)."""
    seen, installed = await _look_until(store, clock, ours=False)
    return stopped_for(installed) if seen and installed is not None else None


async def restored(store: ResourceStore, clock: Clock) -> bool:
    """Once the CRDs, another nvcre's schema when a process opened (it opened as a viewer), carry this engine's (`setup
    init` of this version ran): True. False at once when they may not be read."""
    return (await _look_until(store, clock, ours=True))[0]
