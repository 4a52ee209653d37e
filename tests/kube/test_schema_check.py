"""No engine runs on CRDs that `setup init` of another nvcre version installed: their schema would prune or refuse
fields it writes (a diagnosing Workflow's groups without nodes, say), losing runs silently. `nvcre controller` says so
in one line; a console or `certification run` becomes a viewer that says why; an engine that may not read CRDs says
so in a notice and runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.api.stamps import SCHEMA_GENERATION
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
from nvcre_tui.engine.kube.session import KubeSession, _schema_check
from nvcre_tui.engine.planning.catalog_load import default_catalog
from tests.kube.cluster import installed, outdate_crds, store_on

pytestmark = pytest.mark.asyncio


async def _open(kubeconfig: Path, want_engine: bool = True, elect: bool = True) -> KubeSession:
    return await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), want_engine=want_engine, history=None, elect=elect)


async def test_an_engine_opens_on_the_crds_this_version_installs_and_reads_them_with_the_rights_init_grants(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, _):
        engine = server.write_kubeconfig(tmp_path / "engine", token=server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME))
        session = await _open(engine)
        try:
            assert session.engine is not None and session.notices == []
        finally:
            await session.close()
        checked = server.requests_where(verb="get", resource="customresourcedefinitions")
        assert len(checked) == 4 and all(r.status == 200 for r in checked)


async def test_crds_of_another_version_are_one_line_saying_how_to_update_them_and_a_viewer_still_opens(tmp_path: Path) -> None:
    async with installed(tmp_path) as (_, kubeconfig):
        await outdate_crds(kubeconfig)
        with pytest.raises(InputError) as refused:  # `nvcre controller`: an engine or nothing
            await _open(kubeconfig, elect=False)
        [message] = refused.value.messages
        assert f"workflows.nvcre.nvidia.com was installed by nvcre 0.1.0 (schema generation {SCHEMA_GENERATION}) with another schema" in message and "run `nvcre setup init`" in message
        console = await _open(kubeconfig)  # would have run an engine: a viewer that says why
        try:
            assert console.engine is None and console.lease is None
            assert console.viewer_reason == "viewer: " + message.split(": ", 1)[1]
        finally:
            await console.close()
        viewer = await _open(kubeconfig, want_engine=False)
        await viewer.close()


async def test_an_engine_that_may_not_read_crds_is_told_in_a_notice(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, _):
        nobody = server.write_kubeconfig(tmp_path / "nobody", token=server.service_account_token("default", "nobody"))
        target = await load_target(str(nobody))
        store = await store_on(nobody, SystemClock(), "nvcre-engine")
        try:
            outdated, notice = await _schema_check(store, target)
        finally:
            await store.close()
        assert outdated is None and notice is not None and notice.startswith("could not check the nvcre CRDs' schema (") and "setup init" in notice
