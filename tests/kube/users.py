"""Least-privilege users on the emulator, as README's "Users' roles" has an admin make them: RoleBindings to nvcre-edit
and nvcre-view in one namespace, optionally get/list/watch on Nodes (no built-in namespaced role gives that)."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE, LEASE_READER_NAME
from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, RBAC_GROUP, ROLE_BINDING
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer

NODE_READER = "test-node-reader"


def _binding(kind: str, name: str, user: str, role: str, namespace: str | None = None) -> dict:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": kind, "metadata": metadata,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "User", "name": user, "apiGroup": RBAC_GROUP}]}


async def least_privileged(server: ApiServer, kubeconfig: Path, user: str, roles: tuple[str, ...] = ("nvcre-edit", "nvcre-view"),
                           *, nodes: bool = True, namespace: str = "default") -> Path:
    """Bind `roles` to `user` in `namespace` (and Node reading cluster-wide when `nodes`); the user's kubeconfig."""
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        for role in roles:
            await admin.create(ROLE_BINDING, _binding("RoleBinding", f"{user}-{role}", user, role, namespace))
        if nodes:
            rule = {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}
            try:
                await admin.get(CLUSTER_ROLE, NODE_READER)
            except Exception:  # noqa: BLE001 - not made yet
                await admin.create(CLUSTER_ROLE, {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
                                                  "metadata": {"name": NODE_READER}, "rules": [rule]})
            await admin.create(CLUSTER_ROLE_BINDING, _binding("ClusterRoleBinding", f"{user}-nodes", user, NODE_READER))
    finally:
        await admin.close()
    token = server.add_token(f"{user}-token", user)
    return server.write_kubeconfig(kubeconfig.with_name(f"kubeconfig-{user}"), namespace=namespace, token=token)


async def as_installed_before(kubeconfig: Path) -> None:
    """The install as `setup init` made it before it let every user read the engine Lease."""
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        await admin.delete(ROLE_BINDING, LEASE_READER_NAME, INSTALL_NAMESPACE)
    finally:
        await admin.close()

