"""A guard on the watch cache's objects: nothing may edit one in place. The cache's objects are shared by the
engine, the console and every reader; the engine hands a Workflow's reconciler a copy of its top level and metadata
alone (engine._own_copy: a Workflow of a group per node is megabytes, reconciled at each of its Jobs), which holds
only while no reconciler edits a nested value of it. An edit in place would change what every reader sees without a
write, a watch event or a resourceVersion."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.objects import copy_json
from nvcre_tui.engine.store.protocol import ResourceKind

Obj = dict[str, Any]


class Untouched:
    """Remembers each object as it enters the cache; `edited` names those that changed without being replaced."""

    def __init__(self, cache: WatchCache) -> None:
        self._seen: dict[int, tuple[ResourceKind, Obj, Obj]] = {}  # id -> (kind, the object itself, a copy of it then)
        self.edited: list[str] = []
        cache.subscribe(self._on_change)

    def _on_change(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        if old is not None:
            self._check(old)
        if new is not None:
            self._seen[id(new)] = (kind, new, copy_json(new))

    def _check(self, obj: Obj) -> None:
        entry = self._seen.pop(id(obj), None)
        if entry is not None and entry[1] is obj and obj != entry[2]:
            self.edited.append(f"{entry[0].kind} {obj['metadata'].get('name')} edited in the cache")

    def check_all(self) -> list[str]:
        """Every object still remembered checked too; the edits found, in order."""
        for kind, obj, _ in list(self._seen.values()):
            self._check(obj)
        return self.edited
