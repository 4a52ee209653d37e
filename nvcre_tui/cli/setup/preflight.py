"""What RBAC would refuse this user, asked before init applies or reset deletes anything: nothing half-done."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nvcre_tui.cli.setup.shared import Obj, resource_ref

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


async def apply_refusal(store: KubeStore, objects: list[dict[str, Any]], namespace_exists: bool) -> str | None:
    """Why the server would refuse one of `objects` (RBAC, its escalation check, validation), found before any is
    applied: a server-side dry run of each (RBAC's question where its namespace does not exist yet). A user who may
    apply CRDs but not ClusterRoles left the CRDs, the namespace and the ServiceAccount behind."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.kube.install import FIELD_MANAGER
    from nvcre_tui.engine.store.errors import Forbidden, Invalid, NotFound
    from nvcre_tui.engine.store.protocol import ROLE, ROLE_BINDING, kind_of

    for obj in objects:
        kind, meta = kind_of(obj), obj["metadata"]
        if kind.namespaced and not namespace_exists:
            if await allowed(store, "patch", kind, meta.get("namespace"), meta["name"]) is False:
                return f"{resource_ref(obj)}: this user may not patch {kind.plural} in namespace {meta.get('namespace')}"
            # RBAC's own check on a role or binding, which a dry run would have made: asked of it right by right
            role = obj if kind == ROLE else _applied_role(obj, objects) if kind == ROLE_BINDING else None
            if role is not None and (why := await (_may_not_grant(store, role) if role is obj else
                                                   _may_not_bind(store, obj, role))) is not None:
                return f"{resource_ref(obj)}: {why}"
            continue
        try:
            await store.apply(kind, obj, field_manager=FIELD_MANAGER, force=True, dry_run=True)
        except (Forbidden, Invalid) as error:
            return " ".join(str(error).split())  # it names the object
        except NotFound:
            # A binding's dry run before its role exists (a dry run creates none): RBAC admits a binding by one who may
            # `bind` its role, else reads the role to see whether that user holds every right it grants, and so answers
            # NotFound. Where init applies that role, asked of RBAC instead, as the server will judge it once it exists.
            role = _applied_role(obj, objects)
            if role is None:
                raise
            if (why := await _may_not_bind(store, obj, role)) is not None:
                return f"{resource_ref(obj)}: {why}"
    return None


def _applied_role(binding: Obj, objects: list[Obj]) -> Obj | None:
    """The role among `objects` that `binding` refers to (None: not a binding, or its role is not init's)."""
    ref = binding.get("roleRef")
    if not isinstance(ref, dict):
        return None
    namespace = binding["metadata"].get("namespace") if ref.get("kind") == "Role" else None
    return next((obj for obj in objects if obj["kind"] == ref.get("kind") and obj["metadata"]["name"] == ref.get("name")
                 and obj["metadata"].get("namespace") == namespace), None)


async def _may_not_bind(store: KubeStore, binding: Obj, role: Obj) -> str | None:
    """Why RBAC would refuse this identity `binding` to `role` once the role exists, or None: it may `bind` the role, or
    it holds every right the role grants where the binding applies (RBAC's escalation check, asked right by right)."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, ROLE

    namespace = binding["metadata"].get("namespace")
    role_kind = ROLE if role["kind"] == ROLE.kind else CLUSTER_ROLE
    if await allowed(store, "bind", role_kind, namespace, role["metadata"]["name"]) is not False:
        return None  # allowed, or the server would not say: the apply itself answers
    if (unheld := await _first_unheld(store, role, namespace)) is not None:
        return (f"this user may not bind {role['kind']} {role['metadata']['name']} (RBAC: no bind on it, and it does not "
                f"hold every right the role grants, such as {unheld})")
    return None


async def _may_not_grant(store: KubeStore, role: Obj) -> str | None:
    """Why RBAC would refuse this identity `role` (its escalation check: `escalate` on it, or every right it grants held
    where it applies), or None. For a Role in a namespace that does not exist yet, where no dry run can ask the server."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, ROLE

    namespace = role["metadata"].get("namespace")
    role_kind = ROLE if role["kind"] == ROLE.kind else CLUSTER_ROLE
    if await allowed(store, "escalate", role_kind, namespace, role["metadata"]["name"]) is not False:
        return None
    if (unheld := await _first_unheld(store, role, namespace)) is not None:
        return (f"this user may not grant the rights of {role['kind']} {role['metadata']['name']} (RBAC: no escalate on "
                f"it, and it does not hold every right the role grants, such as {unheld})")
    return None


async def _first_unheld(store: KubeStore, role: Obj, namespace: str | None) -> str | None:
    """The first right `role` grants that RBAC does not give this identity in `namespace` (cluster-wide: None), as
    "get pods/log"; None when it holds them all, or the server would not say."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import ResourceKind

    for rule in role.get("rules") or []:
        for verb in rule.get("verbs") or []:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    plural, _, sub = resource.partition("/")
                    for name in rule.get("resourceNames") or [None]:
                        if await allowed(store, verb, ResourceKind(group, "", "", plural), namespace, name, sub or None) is False:
                            return f"{verb} {resource}{'.' + group if group else ''}{' ' + name if name else ''}"
    return None


async def may_not_delete(store: KubeStore, objects: list[dict[str, Any]]) -> str | None:
    """The first of `objects` RBAC would not let this identity delete ("ClusterRole nvcre-engine"), asked of the server
    before anything goes: a user who may delete the CRDs but not the RBAC took every certification and left the rest."""
    from nvcre_tui.engine.kube.access import allowed
    from nvcre_tui.engine.store.protocol import kind_of

    for obj in objects:
        meta = obj["metadata"]
        if await allowed(store, "delete", kind_of(obj), meta.get("namespace"), meta["name"]) is False:
            return f"{obj['kind']} {meta['name']}" + (f" in namespace {meta['namespace']}" if meta.get("namespace") else "")
    return None
