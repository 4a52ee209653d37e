"""Helpers of the emulator's own tests: raw HTTP requests, raw watch streams, our CRDs and a Certification."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from nvcre_tui.engine.api.crd import all_crds

from .server import ApiServer

__all__ = ["GUARD", "CERTS", "MERGE_PATCH", "manifest", "status_of", "raw", "watch_lines", "install_crds",
           "certification"]

GUARD = 5.0  # seconds a watch may take before the test fails instead of hanging
CERTS = ("nvcre.nvidia.com", "v1alpha1", "certifications")
# Keyword arguments of a custom-object patch sent as a merge patch. The client takes `_content_type`; its stubs omit it.
MERGE_PATCH: dict[str, Any] = {"_content_type": "application/merge-patch+json"}


def manifest(body: dict[str, Any]) -> Any:
    """A plain dict as the body of a typed client call. The client sends a dict as it is, which is what these tests
    want the emulator to see; its stubs name only the model class (V1ConfigMap ...)."""
    return body


def status_of(error: ApiException) -> dict[str, Any]:
    assert error.body is not None
    body = json.loads(error.body)
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == error.status
    return body


async def raw(server: ApiServer, method: str, path: str, body: Any = None, content_type: str = "application/json",
              token: str | None = None) -> tuple[int, Any, dict[str, str]]:
    headers = {"Authorization": f"Bearer {token or server.token}", "Content-Type": content_type}
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    async with aiohttp.ClientSession() as session:
        async with session.request(method, server.url + path, data=data, headers=headers) as answer:
            text = await answer.text()
            try:
                payload: Any = json.loads(text)
            except ValueError:
                payload = text
            return answer.status, payload, dict(answer.headers)


async def watch_lines(server: ApiServer, path: str, count: int | None = None) -> list[dict[str, Any]]:
    """Events of a raw watch request until `count` events or the stream ends."""
    events: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session:
        async with session.get(server.url + path, headers={"Authorization": f"Bearer {server.token}"}) as answer:
            assert answer.status == 200
            async for line in answer.content:
                if line.strip():
                    events.append(json.loads(line))
                    if count is not None and len(events) >= count:
                        break
    return events


async def install_crds(api_client: client.ApiClient) -> None:
    extensions = client.ApiextensionsV1Api(api_client)
    for crd in all_crds():
        await extensions.create_custom_resource_definition(manifest(crd))
    await asyncio.sleep(0)  # the emulated apiextensions controller runs on the next loop turn


def certification(name: str, **spec: Any) -> dict[str, Any]:
    body = {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
            "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}
    body.update(spec)
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name},
            "spec": body}
