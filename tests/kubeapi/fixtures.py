"""Pytest fixtures (import them where needed: `from tests.kubeapi.fixtures import apiserver, api`):
`apiserver`, a started emulator per test, and `api`, a kubernetes_asyncio ApiClient logged in to it
through a kubeconfig (user agent "emulator-tests/1.0")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from kubernetes_asyncio import client, config

from .server import ApiServer

__all__ = ["apiserver", "api"]


@pytest_asyncio.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    server = ApiServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest_asyncio.fixture
async def api(apiserver: ApiServer, tmp_path: Path) -> AsyncIterator[client.ApiClient]:  # noqa: F811
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(apiserver.write_kubeconfig(tmp_path / "kubeconfig")),
                                  client_configuration=configuration)
    async with client.ApiClient(configuration) as api_client:
        api_client.user_agent = "emulator-tests/1.0"
        yield api_client
