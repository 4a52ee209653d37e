"""Where nvcre is installed on a cluster, whatever namespace the command was told: the namespaces `setup init` labelled
(`app.kubernetes.io/part-of=nvcre`).

`setup init --install-namespace NS` (or -n NS) installs into any namespace, and every command then needs
`--install-namespace NS`: these readers let a command that was given another say where nvcre is.
"""

from __future__ import annotations

from nvcre_tui.engine.api.vocabulary import LABEL_PART_OF
from nvcre_tui.engine.store.errors import Forbidden, NotFound
from nvcre_tui.engine.store.protocol import NAMESPACE, ResourceStore

__all__ = ["INSTALL_FLAG", "install_namespaces", "not_installed", "require_install"]

INSTALL_FLAG = "--install-namespace"  # the one name of the setting everywhere (setup's -n, controller's --lease-namespace: aliases)


async def install_namespaces(store: ResourceStore) -> list[str] | None:
    """The namespaces `setup init` installed nvcre into (labelled part-of nvcre, not being deleted), sorted; None when
    Namespaces may not be listed (then nobody can tell)."""
    try:
        found = (await store.list(NAMESPACE, label_selector=f"{LABEL_PART_OF}=nvcre")).items
    except (Forbidden, NotFound):
        return None
    return sorted(ns["metadata"]["name"] for ns in found
                  if not ns["metadata"].get("deletionTimestamp") and (ns.get("status") or {}).get("phase") != "Terminating")


def not_installed(namespace: str, elsewhere: list[str] | None) -> str:
    """One line: nvcre is not installed in `namespace`, and which namespace to name instead."""
    others = [name for name in elsewhere or [] if name != namespace]
    if others:
        where = f"it is installed in {', '.join(others)}: pass {INSTALL_FLAG} {others[0]}"
    else:
        where = (f"pass {INSTALL_FLAG} NS for the namespace `nvcre setup init --install-namespace NS` installed it into, "
                 "or run `nvcre setup init`")
    return f"nvcre is not installed in namespace {namespace} (no such namespace); {where}"


async def require_install(store: ResourceStore, namespace: str) -> str | None:
    """Why nvcre cannot run against `namespace` (`not_installed`), or None: the namespace exists, or may not be read
    (a user's RBAC; taken at their word)."""
    try:
        await store.get(NAMESPACE, namespace)
    except NotFound:
        return not_installed(namespace, await install_namespaces(store))
    except Forbidden:
        return None
    return None
