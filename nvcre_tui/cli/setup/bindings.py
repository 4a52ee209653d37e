"""The cluster-wide bindings installs share: which subjects are an install's engine, and taking one out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.cli.setup.shared import Obj

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


def is_engine_subject(subject: Obj, namespaces: list[str]) -> bool:
    """Whether a binding subject is the engine ServiceAccount of one of `namespaces`."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME

    return (subject.get("kind") == "ServiceAccount" and subject.get("name") == ENGINE_NAME
            and subject.get("namespace") in namespaces)


async def drop_subjects(store: KubeStore, name: str, namespace: str) -> str:
    """Take `namespace`'s engine ServiceAccount out of the cluster-wide binding `name`, which other installs' engines share:
    "deleted" (it named only this one), "updated", or "absent"."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE_BINDING

    try:
        live = await store.get(CLUSTER_ROLE_BINDING, name)
    except NotFound:
        return "absent"
    subjects = live.get("subjects") or []
    rest = [subject for subject in subjects if not is_engine_subject(subject, [namespace])]
    if not rest:
        await store.delete(CLUSTER_ROLE_BINDING, name, None)
        return "deleted"
    if rest != subjects:
        live["subjects"] = rest
        await store.update(CLUSTER_ROLE_BINDING, live)
        return "updated"
    return "absent"
