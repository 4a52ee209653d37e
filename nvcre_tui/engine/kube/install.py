"""What `nvcre setup init` applies to a cluster, as data: CRDs, namespace, ServiceAccount and RBAC (the engine's,
users' roles aggregated into the built-in view, edit and admin, and who may read the engine Lease).

Objects come in apply order (CRDs and the Namespace before what lives in it). Each CRD carries the hash
of its spec as an annotation, so `nvcre setup status` can tell an installed schema from ours without
diffing what the API server defaulted into it; and the nvcre version and schema generation that installed it, so that
status and the engine say which of two schemas is the newer, and an older `setup init` does not downgrade a newer one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.crd import all_crds
from nvcre_tui.engine.api.stamps import PACKAGE_VERSION, SCHEMA_GENERATION, schema_hash, stamped
from nvcre_tui.engine.api.vocabulary import (ANNOTATION_INSTALLED_BY_VERSION, ANNOTATION_MADE_BY_INIT, ANNOTATION_SCHEMA_GENERATION,
                                             ANNOTATION_SCHEMA_HASH, ENGINE_NAME, INSTALL_NAMESPACE, LABEL_INSTALL, LABEL_PART_OF,
                                             LEASE_READER_NAME, SIMULATOR_NAME)
from nvcre_tui.engine.kube.rbac import CLUSTER_RULES, LEASE_RULES, NVCRE_PLURALS, READ
from nvcre_tui.engine.names import NVCRE_GROUP
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.protocol import (CLUSTER_ROLE, CLUSTER_ROLE_BINDING, LEASE, NAMESPACE, ROLE, ROLE_BINDING, SERVICE_ACCOUNT,
                                             VALIDATION_REQUEST, ResourceKind)

__all__ = [
    "INSTALL_NAMESPACE", "ENGINE_NAME", "FIELD_MANAGER", "ANNOTATION_SCHEMA_HASH", "PART_OF",
    "schema_hash", "SCHEMA_GENERATION", "NVCRE_VERSION", "THIS_NVCRE", "InstalledSchema", "installed_schema", "schema_refusal", "install_crds", "namespace_object", "made_by_init", "install_parts", "CORE_PART", "rbac_objects", "user_role_objects", "lease_reader_objects", "install_objects", "simulator_objects", "SIMULATOR_NAME",
]

FIELD_MANAGER = "nvcre"
PART_OF = {LABEL_PART_OF: "nvcre"}
Obj = dict[str, Any]


NVCRE_VERSION = PACKAGE_VERSION  # the package's version (names.NVCRE_VERSION is the API's)
THIS_NVCRE = f"nvcre {NVCRE_VERSION} (schema generation {SCHEMA_GENERATION})"


def install_crds() -> list[Obj]:
    """Our CRDs, each annotated with its schema hash, the schema generation and the nvcre version that installs them."""
    return [stamped(crd) for crd in all_crds()]


@dataclass(frozen=True)
class InstalledSchema:
    """What our CRDs on a cluster say of the `setup init` that installed them, against this nvcre's: `order` is
    "same" (every stamped CRD has this nvcre's schema), "newer" or "older" (by schema generation, of the CRDs whose schema
    differs), or "other" (a different schema of this very generation: a development build)."""

    versions: tuple[str, ...]  # the nvcre versions that installed them (those whose schema differs, when some do)
    generation: int  # the highest schema generation among them (0: none recorded)
    differ: tuple[str, ...]  # the CRDs whose schema is not this nvcre's
    unrecorded: bool = False  # some were installed by an nvcre that recorded no version

    @property
    def order(self) -> str:
        if not self.differ:
            return "same"
        return "newer" if self.generation > SCHEMA_GENERATION else "older" if self.generation < SCHEMA_GENERATION else "other"

    @property
    def installed_by(self) -> str:
        """`nvcre 0.1.0 (schema generation 1)`, or what is known of an nvcre that recorded no version."""
        named = " and ".join(f"nvcre {version}" for version in self.versions)
        if not named:  # its schema, when another, is older than any stamped one
            return "an nvcre that recorded no version" + (" (before schema generation 1)" if self.differ else "")
        return f"{named}{' and an nvcre that recorded none' if self.unrecorded else ''} (schema generation {self.generation})"

    @property
    def newest_version(self) -> str | None:
        return self.versions[-1] if self.versions else None


MAX_VERSION_CHARS = 64


def _generation(text: str | None) -> int:
    try:
        return max(0, int(text or 0))
    except ValueError:
        return 0


def installed_schema(stored: Iterable[Mapping[str, Any] | None]) -> InstalledSchema | None:
    """What the stored CRDs (None: absent) say of the nvcre that installed them; None when none carries our schema hash
    (absent, or applied otherwise than by `setup init`, such as `setup crds | kubectl apply`: taken as they are)."""
    ours = {crd["metadata"]["name"]: crd["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH] for crd in install_crds()}
    stamped = []
    for crd in stored:
        meta = (crd or {}).get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if meta.get("name") in ours and annotations.get(ANNOTATION_SCHEMA_HASH) is not None:
            version = annotations.get(ANNOTATION_INSTALLED_BY_VERSION)
            # anyone may annotate a CRD: what it says is shown in one line, and at a length a version has
            shown = printable(" ".join(str(version).split()), newlines=False)[:MAX_VERSION_CHARS] if version is not None else None
            stamped.append((meta["name"], annotations[ANNOTATION_SCHEMA_HASH] != ours[meta["name"]],
                            _generation(annotations.get(ANNOTATION_SCHEMA_GENERATION)), shown))
    if not stamped:
        return None
    differ = tuple(name for name, differs, _, _ in stamped if differs)
    told = [entry for entry in stamped if entry[1]] or stamped  # who installed what differs; else who installed them
    versions = tuple(sorted({version for _, _, _, version in told if version}, key=_version_key))
    return InstalledSchema(versions, max(generation for _, _, generation, _ in told), differ,
                           unrecorded=any(version is None for _, _, _, version in told))


def schema_refusal(installed: InstalledSchema) -> str:
    """Why this nvcre runs no engine on CRDs another version's `setup init` installed, with the installed version, this
    engine's, and which is the newer: an engine writes what its own schema describes, and another schema prunes (or
    refuses) fields it writes."""
    names = ", ".join(installed.differ)
    was = "was" if len(installed.differ) == 1 else "were"
    if installed.order == "newer":
        return (f"{names} {was} installed by {installed.installed_by}, newer than this engine's {THIS_NVCRE}: run the "
                f"engine of nvcre {installed.newest_version or 'that version'} or later (`nvcre setup init --force` of this "
                "version would downgrade the CRDs, and a newer engine then refuses them)")
    if installed.order == "older":
        return (f"{names} {was} installed by {installed.installed_by}, older than this engine's {THIS_NVCRE}: run "
                "`nvcre setup init` of this version to upgrade the CRDs before running an engine")
    return (f"{names} {was} installed by {installed.installed_by} with another schema than this engine's {THIS_NVCRE} "
            "(a build of the same generation): run `nvcre setup init` to update the CRDs before running an engine")


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A version's order ("0.10.0" after "0.9.1"): numeric parts as numbers, the rest as text."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in version.replace("-", ".").split("."))


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict(PART_OF)
    return meta


def _object(kind: ResourceKind, name: str, namespace: str | None = None, **body: Any) -> Obj:
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": _meta(name, namespace), **body}


def namespace_object(namespace: str = INSTALL_NAMESPACE, *, made: bool = True) -> Obj:
    """The install namespace as init applies it: labelled LABEL_INSTALL, and annotated ANNOTATION_MADE_BY_INIT when init
    creates it (`made`), so that `setup reset` deletes only a namespace init made. The shared part-of label only on one
    init creates: on a namespace that existed before, that label is its owner's, and a force-apply would replace theirs."""
    obj = _object(NAMESPACE, namespace)
    obj["metadata"]["labels"] = {**(PART_OF if made else {}), LABEL_INSTALL: "true"}
    obj["metadata"]["annotations"] = {ANNOTATION_MADE_BY_INIT: "true" if made else "false"}
    return obj


def made_by_init(namespace: Mapping[str, Any] | None) -> bool:
    """Whether `setup init` created this Namespace (None: it does not exist yet, so init will), as its annotation says.
    Unannotated (an older init wrote none), as its managedFields say: the server records every writer's field manager, so
    one that init created and nothing else wrote names only nvcre's. Another writer there (a GitOps tool that created it,
    even if an older init then labelled it; a label someone added), or no record at all: not init's, and reset keeps it."""
    if namespace is None:
        return True
    meta = namespace.get("metadata") or {}
    said = (meta.get("annotations") or {}).get(ANNOTATION_MADE_BY_INIT)
    if said is not None:
        return said == "true"
    managers = {entry.get("manager") for entry in meta.get("managedFields") or [] if isinstance(entry, Mapping)}
    return managers == {FIELD_MANAGER}


def rbac_objects(namespace: str = INSTALL_NAMESPACE) -> list[Obj]:
    """The engine's identity and rights: ServiceAccount, ClusterRole + binding, Role + binding (leases)."""
    subject = [{"kind": "ServiceAccount", "name": ENGINE_NAME, "namespace": namespace}]
    role_ref = {"apiGroup": CLUSTER_ROLE.group}
    return [
        _object(SERVICE_ACCOUNT, ENGINE_NAME, namespace),
        _object(CLUSTER_ROLE, ENGINE_NAME, rules=copy.deepcopy(CLUSTER_RULES)),
        _object(CLUSTER_ROLE_BINDING, ENGINE_NAME, subjects=subject,
                roleRef={**role_ref, "kind": "ClusterRole", "name": ENGINE_NAME}),
        _object(ROLE, ENGINE_NAME, namespace, rules=copy.deepcopy(LEASE_RULES)),
        _object(ROLE_BINDING, ENGINE_NAME, namespace, subjects=subject,
                roleRef={**role_ref, "kind": "Role", "name": ENGINE_NAME}),
    ]


# Users' rights, folded into the built-in ClusterRoles by kube-controller-manager's aggregation controller (a
# RoleBinding to `view` in a namespace then reads nvcre's kinds there). Creating Certifications goes to `admin` only, not
# `edit`: it runs hours-long workloads on every GPU node the target matches, and an `edit` binding (a CI robot's)
# should not gain that at install. Certifications only: a Workflow, Job or WorkloadRun spec reaches pod fields
# directly, so creating those is root on the nodes.
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
USER_ROLES: dict[str, tuple[tuple[str, ...], list[Obj]]] = {
    "nvcre-view": (("view", "edit", "admin"), [
        {"apiGroups": [NVCRE_GROUP], "resources": list(NVCRE_PLURALS), "verbs": list(READ)}]),
    # Edit reads what view reads (what a certification made becomes: its Workflows, Jobs and runs, which every listing,
    # report and console of it reads) and writes Certifications only.
    "nvcre-edit": (("admin",), [
        {"apiGroups": [NVCRE_GROUP], "resources": list(NVCRE_PLURALS), "verbs": list(READ)},
        {"apiGroups": [NVCRE_GROUP], "resources": ["certifications"], "verbs": ["create", "delete", "patch", "update"]}]),
}


def user_role_objects() -> list[Obj]:
    """The ClusterRoles aggregated into view, edit and admin (reading nvcre's kinds) and admin (creating Certifications)."""
    roles = []
    for name, (into, rules) in USER_ROLES.items():
        role = _object(CLUSTER_ROLE, name, rules=copy.deepcopy(rules))
        role["metadata"]["labels"].update({f"{AGGREGATE}{built_in}": "true" for built_in in into})
        roles.append(role)
    return roles


# Who holds the engine Lease, readable by every authenticated user: a viewer (the console, `certification run` of a
# user bound to nvcre-edit or nvcre-view in their own namespace) then says whether an engine runs, instead of that it
# cannot tell. Only get and watch, only this one Lease: its holder's identity, renewal time and runner kind, no secret.
# (A Role cannot name "whoever holds nvcre-edit somewhere"; a RoleBinding grants only in its own namespace, so the
# rule cannot ride on those ClusterRoles.)
AUTHENTICATED = "system:authenticated"


def lease_reader_objects(namespace: str = INSTALL_NAMESPACE) -> list[Obj]:
    """A Role reading the one engine Lease of `namespace`, bound to every authenticated user."""
    rule = {"apiGroups": [LEASE.group], "resources": [LEASE.plural], "resourceNames": [ENGINE_NAME], "verbs": ["get", "watch"]}
    return [
        _object(ROLE, LEASE_READER_NAME, namespace, rules=[rule]),
        _object(ROLE_BINDING, LEASE_READER_NAME, namespace,
                subjects=[{"kind": "Group", "name": AUTHENTICATED, "apiGroup": ROLE.group}],
                roleRef={"apiGroup": ROLE.group, "kind": "Role", "name": LEASE_READER_NAME}),
    ]


# Only with `setup init --sim-runner`, for clusters that stand in for GPUs: the simulated fleet plays the
# cluster (it registers its Nodes and cordons them as its scenario says). The engine's own rules never change.
SIMULATOR_RULES: list[Obj] = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["create", "update", "patch"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["update", "patch"]},
    # The scenario's NVSentinel ValidationRequests, created as NVSentinel would (where its CRD is installed).
    {"apiGroups": [VALIDATION_REQUEST.group], "resources": ["validationrequests"], "verbs": ["create"]},
    {"apiGroups": [VALIDATION_REQUEST.group], "resources": ["validationrequests/status"], "verbs": ["update"]},
]


def simulator_objects(namespace: str = INSTALL_NAMESPACE) -> list[Obj]:
    """The simulated fleet's extra rights (Node writes), bound to the engine's ServiceAccount."""
    subject = [{"kind": "ServiceAccount", "name": ENGINE_NAME, "namespace": namespace}]
    return [
        _object(CLUSTER_ROLE, SIMULATOR_NAME, rules=copy.deepcopy(SIMULATOR_RULES)),
        _object(CLUSTER_ROLE_BINDING, SIMULATOR_NAME, subjects=subject,
                roleRef={"apiGroup": CLUSTER_ROLE.group, "kind": "ClusterRole", "name": SIMULATOR_NAME}),
    ]


def install_parts(namespace: str = INSTALL_NAMESPACE, *, simulator: bool = False) -> list[tuple[str, list[Obj]]]:
    """Everything init applies, in order, by the part of nvcre it came with: CORE_PART (the CRDs, the Namespace and the
    engine's RBAC, which every version's init made), then the users' aggregated roles and the Lease reader (added in
    later versions: an older install lacks them whole), and, for a cluster the simulated fleet plays, its Node rights."""
    return [(CORE_PART, [*install_crds(), namespace_object(namespace), *rbac_objects(namespace)]),
            ("users' roles", user_role_objects()), ("lease reader", lease_reader_objects(namespace)),
            *([("simulator", simulator_objects(namespace))] if simulator else [])]


CORE_PART = "core"


def install_objects(namespace: str = INSTALL_NAMESPACE, *, simulator: bool = False) -> list[Obj]:
    """Everything init applies, in order: CRDs, the Namespace, the engine's RBAC objects, the users' aggregated
    roles (and, for a cluster the simulated fleet plays, its Node rights)."""
    return [obj for _, objects in install_parts(namespace, simulator=simulator) for obj in objects]
