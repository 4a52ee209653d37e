"""Whether the CRDs an engine reconciles still carry its schema, at its start and while it runs.

An engine writes what this nvcre's CRDs describe; CRDs that `setup init` of another version applied prune (or refuse)
fields it writes. A process checks them before it runs an engine (`installed_crds`), and a running engine looks again
every SCHEMA_CHECK_SECONDS (`changed_under`): `setup init` of another nvcre re-stamps them under an engine that holds the
Lease, and that engine then stops reconciling instead of writing its objects with the old schema. Four GETs a look, as
the engine's RBAC grants (get on our four CRDs, no list or watch).
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.kube.install import InstalledSchema, install_crds, installed_schema, schema_refusal
from nvcre_tui.engine.store.errors import Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.protocol import CRD, ResourceStore

__all__ = ["SCHEMA_CHECK_SECONDS", "installed_crds", "changed_under", "stopped_for"]

# How often a running engine reads its CRDs again: the longest it writes with a schema `setup init` --force replaced.
SCHEMA_CHECK_SECONDS = 10.0


async def installed_crds(store: ResourceStore) -> InstalledSchema | None:
    """What our CRDs on the cluster say of the nvcre that installed them (`installed_schema`; absent ones passed over).
    Forbidden and other store errors are the caller's."""
    stored: list[dict[str, Any]] = []
    for wanted in install_crds():
        try:
            stored.append(await store.get(CRD, wanted["metadata"]["name"]))
        except NotFound:
            continue
    return installed_schema(stored)


def stopped_for(installed: InstalledSchema) -> str:
    """One line: a running engine stopped because its CRDs now carry another schema (both versions named)."""
    return f"engine stopped: the nvcre CRDs changed while it ran: {schema_refusal(installed)}"


async def changed_under(store: ResourceStore, clock: Clock) -> str | None:
    """Look at the CRDs every SCHEMA_CHECK_SECONDS until they carry another schema than this engine's; then `stopped_for`.
    None at once when they may not be read (the engine said so at its start, and runs unchecked); a look that fails
    otherwise (the API server away) is tried again at the next."""
    while True:
        await clock.sleep(SCHEMA_CHECK_SECONDS)
        try:
            installed = await installed_crds(store)
        except Forbidden:
            return None
        except StoreError:
            continue
        if installed is not None and installed.order != "same":
            return stopped_for(installed)
