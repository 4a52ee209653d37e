"""The `apiserver` pytest fixture: a started emulator per test (import it where needed:
`from tests.kubeapi.fixtures import apiserver`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from .server import ApiServer

__all__ = ["apiserver"]


@pytest_asyncio.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    server = ApiServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
