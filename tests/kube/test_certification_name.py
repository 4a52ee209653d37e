"""The Certification CRD refuses a name longer than a label value at create, on the API server itself (its name is
stamped into a label of every child): `kubectl apply` of a 64-character name fails there, instead of being accepted
and failed later by the engine as InvalidSpec."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.store import CERTIFICATION, Invalid
from tests.kube.cluster import installed, store_on
from tests.kube.test_setup import CERT
from tests.scenarios.harness import catalog


async def test_a_name_past_63_characters_is_refused_by_the_server(tmp_path: Path) -> None:
    async with installed(tmp_path) as (_, kubeconfig):
        store = await store_on(kubeconfig, SystemClock(), "test")
        try:
            body = certification_from_text("soak", CERT, catalog()).to_wire()
            body["metadata"] = {"name": "c" * 64, "namespace": "default"}
            with pytest.raises(Invalid, match=r"metadata\.name.*must be at most 63 characters \(it becomes a label value\)"):
                await store.create(CERTIFICATION, body)
            body["metadata"] = {"name": "c" * 63, "namespace": "default"}
            assert (await store.create(CERTIFICATION, body))["metadata"]["name"] == "c" * 63
        finally:
            await store.close()
