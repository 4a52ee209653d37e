"""Where nvcre is installed on a cluster, whatever namespace the command was told: the namespaces `setup init` labelled
(`nvcre.nvidia.com/install=true`; an older init's `app.kubernetes.io/part-of=nvcre`), and the engine Leases
(`nvcre-engine`) in any namespace with who holds them.

`setup init --install-namespace NS` (or -n NS) installs into any namespace, and every command then needs
`--install-namespace NS`: these readers let a command that was given another say where nvcre is, and let `setup reset`
see an engine wherever it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE, LABEL_INSTALL, LABEL_PART_OF
from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.lease import LEASE_NAME, LeaseHolder
from nvcre_tui.engine.store.errors import Forbidden, NamespaceTerminating, NotFound, StoreError
from nvcre_tui.engine.store.protocol import LEASE, NAMESPACE, ResourceStore

if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore

__all__ = ["INSTALL_FLAG", "InstallRefused", "LiveEngine", "finalize_command", "install_namespaces", "installs_with", "is_install", "lease_namespace_closing", "live_engines", "not_installed",
           "require_install", "terminating", "uninstalled"]

INSTALL_FLAG = "--install-namespace"  # the one name of the setting everywhere (setup's -n, controller's --lease-namespace: aliases)


# The label selectors that find an install: this version's key, and the part-of label an older init set.
INSTALL_SELECTORS = (f"{LABEL_INSTALL}=true", f"{LABEL_PART_OF}=nvcre")


def is_install(namespace: Mapping[str, Any]) -> bool:
    """Whether `setup init` installed nvcre into this Namespace: its label, or an older init's part-of=nvcre."""
    labels = (namespace.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_INSTALL) == "true" or labels.get(LABEL_PART_OF) == "nvcre"


async def install_namespaces(store: ResourceStore) -> list[str] | None:
    """The namespaces `setup init` installed nvcre into (`is_install`, not being deleted), sorted; None when
    Namespaces may not be listed (then nobody can tell)."""
    found: dict[str, dict[str, Any]] = {}
    for selector in INSTALL_SELECTORS:
        try:
            items = (await store.list(NAMESPACE, label_selector=selector)).items
        except (Forbidden, NotFound):
            return None
        found.update((ns["metadata"]["name"], ns) for ns in items)
    return sorted(name for name, ns in found.items()
                  if not ns["metadata"].get("deletionTimestamp") and (ns.get("status") or {}).get("phase") != "Terminating")


async def installs_with(store: ResourceStore, namespace: str) -> list[str] | None:
    """`install_namespaces`, and `namespace` among them when it is an install being deleted (Terminating): what `setup
    reset` of that namespace removes is its own (its ways out, `terminating`, name that reset)."""
    installs = await install_namespaces(store)
    if installs is None or namespace in installs:
        return installs
    try:
        found = await store.get(NAMESPACE, namespace)
    except StoreError:
        return installs
    return sorted([*installs, namespace]) if is_install(found) else installs


def not_installed(namespace: str, elsewhere: list[str] | None) -> str:
    """One line: nvcre is not installed in `namespace`, and which namespace to name instead."""
    others = [name for name in elsewhere or [] if name != namespace]
    if others:
        where = f"it is installed in {', '.join(others)}: pass {INSTALL_FLAG} {others[0]}"
    else:
        where = (f"pass {INSTALL_FLAG} NS for the namespace `nvcre setup init --install-namespace NS` installed it into, "
                 "or run `nvcre setup init`")
    return f"nvcre is not installed in namespace {namespace} (no such namespace); {where}"


def finalize_command(namespace: str) -> str:
    """The kubectl command that does a namespace controller's last step: remove the `kubernetes` finalizer of a
    Terminating namespace that holds nothing any more (what `setup reset` does itself on an API server alone)."""
    return (f"kubectl get namespace {namespace} -o json | jq '.spec.finalizers=[]' | "
            f"kubectl replace --raw /api/v1/namespaces/{namespace}/finalize -f -")


def terminating(namespace: str, others: Sequence[str] | None) -> str:
    """One line: the install namespace is being deleted. The API server refuses every create in it (NamespaceLifecycle:
    403 "... because it is being terminated"), the engine Lease's included, and a Terminating namespace never becomes
    Active again: waiting would wait for a re-install, so the command stops and says what ends it. The one wording of
    every command that meets it (`setup init`, `setup status`, `run`, `controller`, the console, `delete --wait`): each
    way out with what it costs, the cheapest first; `setup reset` last. `others`: the other install namespaces (an older
    init allowed a second), None when they cannot be told (Namespaces unreadable: the engine's ServiceAccount): reset of
    the sole install deletes the CRDs and every certification with them, reset of one of two keeps them for the other."""
    flag = "" if namespace == INSTALL_NAMESPACE else f" {INSTALL_FLAG} {namespace}"
    everything = "the CRDs and with them every Certification, Workflow, Job and WorkloadRun in every namespace"
    if others is None:
        reset = (f"`nvcre setup reset{flag}` removes it too but, where it is nvcre's only install, also deletes {everything} "
                 "(beside another install it keeps them)")
    elif others:
        reset = (f"`nvcre setup reset{flag}` removes it too, with its engine's place in the cluster-wide bindings, and keeps "
                 f"the CRDs, every Certification and the ClusterRoles for the install in {', '.join(others)}")
    else:
        reset = f"`nvcre setup reset{flag}` removes it too but also deletes {everything}"
    return (f"nvcre's install namespace {namespace} is being deleted (Terminating), and the API server refuses new objects "
            "in it, the engine Lease's included, until it is gone. Wait for it to go (a cluster's namespace controller "
            f"empties it, then removes it; `kubectl describe namespace {namespace}` says what it still holds), then run "
            f"`nvcre setup init{flag}`: nothing else is lost; or install into another namespace now with `nvcre setup init "
            f"{INSTALL_FLAG} NS`, then pass {INSTALL_FLAG} NS to every command. An API server with no namespace controller "
            f"never removes it: once it holds nothing, `{finalize_command(namespace)}` removes the namespace alone, while "
            f"{reset}")


class InstallRefused(InputError):
    """A command that would run an engine against an install it cannot use (`not_installed`, `terminating`): the
    one line, and whether the namespace is being deleted (`delete --wait` then says what it did not do)."""

    def __init__(self, server: str, why: str, *, closing: bool) -> None:
        super().__init__(f"{server}: {why}")
        self.server, self.why, self.closing = server, why, closing


async def require_install(store: ResourceStore, namespace: str) -> tuple[str, bool] | None:
    """Why nvcre cannot run against `namespace` (`not_installed`, `terminating`) and whether it is being deleted, or None:
    the namespace exists, or may not be read (a user's RBAC, the engine's ServiceAccount; taken at their word)."""
    try:
        found = await store.get(NAMESPACE, namespace)
    except NotFound:
        return not_installed(namespace, await install_namespaces(store)), False
    except Forbidden:
        return None
    if found["metadata"].get("deletionTimestamp") or (found.get("status") or {}).get("phase") == "Terminating":
        return terminating(namespace, await install_namespaces(store)), True
    return None


async def lease_namespace_closing(store: KubeStore, namespace: str) -> str | None:
    """`terminating` when the namespace admits no new object, asked as the engine may ask it: a dry-run create of its
    Lease (RBAC grants the engine that create, and not a read of Namespaces). An API server alone leaves a Terminating
    namespace's Lease in place, and admits its update: an engine took it and ran in an install on its way out. None
    otherwise (AlreadyExists: the namespace admits creates; anything else the Lease queue says)."""
    lease = {"apiVersion": LEASE.api_version, "kind": LEASE.kind, "metadata": {"name": LEASE_NAME, "namespace": namespace},
             "spec": {}}
    try:
        await store.create(LEASE, lease, dry_run=True)
    except NamespaceTerminating:
        return terminating(namespace, await install_namespaces(store))
    except StoreError:
        return None
    return None


@dataclass(frozen=True)
class LiveEngine:
    """An engine holding its Lease now: where, and who."""

    namespace: str
    identity: str
    version: str | None = None  # its nvcre version, as the Lease says it (None: not said: an nvcre before it did)


async def live_engines(store: ResourceStore, clock: Clock, also: list[str]) -> list[LiveEngine] | None:
    """Every engine Lease held by a live engine, in any namespace (one list by name across namespaces); where that
    list is refused, the Leases of the namespaces in `also` one by one. None when no Lease could be read at all."""
    now = clock.now()
    try:
        leases = (await store.list(LEASE, None, field_selector=f"metadata.name={LEASE_NAME}")).items
    except StoreError:
        leases = []
        readable = False
        for namespace in dict.fromkeys(also):
            try:
                leases.append(await store.get(LEASE, LEASE_NAME, namespace))
            except NotFound:
                readable = True
            except StoreError:
                continue
            else:
                readable = True
        if not readable:
            return None
    engines = []
    for lease in leases:
        holder = LeaseHolder.from_lease(lease, now)
        if holder is not None and holder.live:
            engines.append(LiveEngine(lease["metadata"].get("namespace") or "", holder.identity, holder.version))
    return sorted(engines, key=lambda engine: engine.namespace)


async def uninstalled(store: KubeStore, namespace: str, namespace_lost: str | None, *, refused: bool = False,
                      unauthorized: bool = False) -> str | None:
    """One line once nvcre is no longer installed where an engine ran (`setup reset`, a deleted install namespace): its
    namespace gone or being deleted (`namespace_lost`, as the engine Lease's renewal found it: EngineLease.namespace_lost;
    the engine may not read Namespaces), or none of the nvcre CRDs left (which it may get; where RBAC refuses that, as
    discovery says, which every authenticated user may read), or its RBAC gone: `refused` (the Lease's renewal refused
    by RBAC: EngineLease.refused) and the CRDs refused too, both of which `setup init` grants the engine, or its
    credentials refused after (401: the reset deletes its ServiceAccount, whose tokens a real server then refuses); the
    engine's ServiceAccount finds those after `setup reset`. Its credentials refused outright, its Lease's renewal
    (`unauthorized`: EngineLease.unauthorized) and the CRDs' reads both answered 401, as `setup reset` leaves it when
    it deletes the engine's RBAC and ServiceAccount between two renewals: nothing more can be read, and that is said
    (its ServiceAccount deleted, or its token expired), not a lost Lease to queue for again. None when it still is, or
    this store may not tell (the API server away). What a lost engine Lease is checked against: "lost the engine lease (... namespace not found)",
    or "(... forbidden)", read as another engine's doing, or the API server's."""
    from nvcre_tui.engine.kube.install import install_crds
    from nvcre_tui.engine.kube.rbac import NVCRE_PLURALS
    from nvcre_tui.engine.names import NVCRE_GROUP, NVCRE_VERSION
    from nvcre_tui.engine.store.errors import ReadOnlyRefusal, Unauthorized
    from nvcre_tui.engine.store.protocol import CRD

    gone = [f"its namespace {namespace} is {namespace_lost}"] if namespace_lost else []
    crds = install_crds()
    missing, denied, crd_unauthorized = 0, False, False
    for crd in crds:
        try:
            await store.get(CRD, crd["metadata"]["name"])
        except NotFound:
            missing += 1
        except Unauthorized:  # its credentials refused (an expired token; its ServiceAccount deleted)
            crd_unauthorized = True
            break
        except Forbidden as error:
            denied = not isinstance(error, (NamespaceTerminating, ReadOnlyRefusal))  # RBAC's 403 only
            break
        except StoreError:
            break
    if missing == len(crds) or (denied and await _none_served(store, f"{NVCRE_GROUP}/{NVCRE_VERSION}", NVCRE_PLURALS)):
        gone.append("the nvcre CRDs are gone")
    if refused and denied:
        gone.append("its RBAC is gone (refused its Lease and the nvcre CRDs)")
    elif refused and crd_unauthorized:  # RBAC refused its Lease, then the server its credentials: its ServiceAccount deleted after
        gone.append("its RBAC is gone (refused its Lease), then its credentials (401 Unauthorized: its ServiceAccount deleted?)")
    if not gone and unauthorized and crd_unauthorized:
        return ("the API server refuses the engine's credentials (401 Unauthorized, to its Lease's renewal and its reads of "
                "the nvcre CRDs): its ServiceAccount was deleted (`nvcre setup reset`?) or its token expired: stopping the "
                "engine; `nvcre setup init` installs it again, or run it with credentials the server accepts")
    if not gone:
        return None
    return (f"nvcre was uninstalled under the engine ({'; '.join(gone)}: `nvcre setup reset`?): stopping the engine; "
            f"`nvcre setup init` installs it again")


async def _none_served(store: KubeStore, group_version: str, plurals: Sequence[str]) -> bool:
    """Whether discovery says the server serves none of `plurals` in `group_version` (their CRDs gone); False when it
    would not say."""
    try:
        served = await store.served_resources(group_version)
    except StoreError:
        return False
    return not {resource.get("name") for resource in served or []} & set(plurals)
