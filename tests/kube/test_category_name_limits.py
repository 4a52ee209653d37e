"""A Certification whose category domain or variant is absurdly long (a megabyte, pasted by a script) reached the engine:
its CategoryNotFound status and event repeated the whole name, the status write passed etcd's 1.5 MiB and the
certification failed ReconcileError "etcdserver: request is too large", naming no field. The CRD now says at most a DNS
label (63 characters) each, so the API server refuses it at create, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.errors import Invalid
from tests.kube.cluster import installed, store_on


def _certification(domain: str, variant: str) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "long", "namespace": "default"},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": domain, "variant": variant}]}}


@pytest.mark.parametrize(("domain", "variant", "field"), [
    ("x" * 1_000_000, "nccl-all-reduce", "spec.categories[0].domain"),
    ("communication", "y" * 64, "spec.categories[0].variant"),
])
async def test_the_api_server_refuses_a_category_name_longer_than_a_dns_label(tmp_path: Path, domain: str, variant: str, field: str) -> None:
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            with pytest.raises(Invalid) as refused:
                await admin.create(CERTIFICATION, _certification(domain, variant))
            assert f"{field}: Too long: may not be more than 63" in str(refused.value)
            assert not (await admin.list(CERTIFICATION, "default")).items
            await admin.create(CERTIFICATION, _certification("communication", "v" * 63))  # 63 is a name still
        finally:
            await admin.close()


@pytest.mark.parametrize(("spec", "field"), [
    ({"target": {"matchExpressions": [{"key": "k" * 1_000_000, "operator": "Exists"}]}}, "spec.target.matchExpressions[0].key"),
    ({"target": {"nodeSelector": {"a": "b"}, "taintSelectors": [{"key": "t" * 1_000_000}]}}, "spec.target.taintSelectors[0].key"),
    ({"options": {"nicResourceName": "n" * 1_000_000}}, "spec.options.nicResourceName"),
])
async def test_the_api_server_refuses_a_selector_key_or_resource_name_longer_than_a_qualified_name(
        tmp_path: Path, spec: dict, field: str) -> None:
    """A megabyte matchExpressions or taint key failed the certification ReconcileError "etcdserver: request is too
    large" (its InvalidSpec status and event repeated the key); a megabyte nicResourceName went into every pod's
    resource requests, and the simulated fleet passed it."""
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            cert = _certification("communication", "nccl-all-reduce")
            cert["spec"] = {**cert["spec"], **spec}
            with pytest.raises(Invalid) as refused:
                await admin.create(CERTIFICATION, cert)
            assert f"{field}: Too long: may not be more than 317" in str(refused.value)
        finally:
            await admin.close()


def test_a_key_or_name_past_its_length_is_said_in_one_short_line() -> None:
    """Where no schema bounds it (a nodeSelector's keys: a map's keys have none; a file the CLI reads), the message
    names the key by its start and length, not the megabyte."""
    from pydantic import ValidationError

    from nvcre_tui.engine.api.resources import Certification
    from nvcre_tui.engine.api.validation import validation_messages

    for spec in ({"target": {"nodeSelector": {"k" * 1_000_000: "v"}}}, {"options": {"nicResourceName": "n" * 300}}):
        cert = _certification("communication", "nccl-all-reduce")
        cert["spec"] = {**cert["spec"], **spec}
        with pytest.raises(ValidationError) as refused:
            Certification.model_validate(cert)
        [message] = validation_messages(refused.value, "cert.yaml")
        assert len(message) < 300, message[:400]
