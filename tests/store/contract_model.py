"""Contract, part 3: a random sequence of writes leaves list() equal to a plain dict model."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.store import WORKFLOW, AlreadyExists, NotFound, ResourceStore

from .fixtures import names, obj

_namespaces = itertools.count()


class ModelContract:
    """Model-based check (hypothesis)."""

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.tuples(st.sampled_from(["create", "update", "status", "delete"]),
                              st.sampled_from(["a", "b", "c"]), st.integers(0, 3), st.sampled_from(["x", "y"])),
                    max_size=25))
    async def test_random_writes_match_a_dict_model(self, store: ResourceStore,
                                                    make_namespace: Callable[[str], Awaitable[None]],
                                                    operations: list[tuple[str, str, int, str]]) -> None:
        namespace = f"model-{next(_namespaces)}"  # the store is shared by examples; a namespace each isolates them
        await make_namespace(namespace)
        model: dict[str, dict[str, Any]] = {}
        for verb, name, number, label in operations:
            exists = name in model
            expected_error: type[AlreadyExists] | type[NotFound] | None = (
                AlreadyExists if verb == "create" and exists else None)
            expected_error = NotFound if verb != "create" and not exists else expected_error
            try:
                await _apply(store, namespace, verb, name, number, label)
            except (AlreadyExists, NotFound) as error:
                assert expected_error is not None and isinstance(error, expected_error), (verb, name, error)
                continue
            assert expected_error is None, (verb, name)
            _apply_to_model(model, verb, name, number, label)
        listed = (await store.list(WORKFLOW, namespace)).items
        assert {o["metadata"]["name"]: _visible(o) for o in listed} == model
        selected = (await store.list(WORKFLOW, namespace, label_selector="flavour=x")).items
        assert names(selected) == sorted(n for n, m in model.items() if m["labels"] == {"flavour": "x"})


async def _apply(store: ResourceStore, namespace: str, verb: str, name: str, number: int, label: str) -> None:
    if verb == "create":
        await store.create(WORKFLOW, obj(name, namespace, labels={"flavour": label}, spec={"size": number}))
    elif verb == "delete":
        await store.delete(WORKFLOW, name, namespace)
    else:
        current = await store.get(WORKFLOW, name, namespace)
        if verb == "update":
            current["spec"] = {"size": number}
            current["metadata"]["labels"] = {"flavour": label}
            await store.update(WORKFLOW, current)
        else:
            await store.update_status(WORKFLOW, dict(current, status={"seen": number}))


def _apply_to_model(model: dict[str, dict[str, Any]], verb: str, name: str, number: int, label: str) -> None:
    if verb == "create":
        model[name] = {"spec": {"size": number}, "labels": {"flavour": label}, "status": None, "generation": 1}
    elif verb == "delete":
        del model[name]
    elif verb == "update":
        entry = model[name]
        entry["generation"] += entry["spec"] != {"size": number}
        entry.update(spec={"size": number}, labels={"flavour": label})
    else:
        model[name]["status"] = {"seen": number}


def _visible(stored: dict[str, Any]) -> dict[str, Any]:
    return {"spec": stored["spec"], "labels": stored["metadata"].get("labels"), "status": stored.get("status"),
            "generation": stored["metadata"]["generation"]}
