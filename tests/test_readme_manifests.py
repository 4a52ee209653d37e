"""The README's Deployment of `nvcre controller` is what a kube-apiserver takes: every field it writes is a field of
the Kubernetes API types (kubernetes-asyncio's models, generated from the API's OpenAPI schema), of the right shape."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.workloads.schema import check_api_object

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_deployment_uses_only_fields_of_the_api() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL)
    [deployment] = [yaml.safe_load(block) for block in blocks if "kind: Deployment" in block]
    assert deployment["apiVersion"] == "apps/v1"
    assert check_api_object(deployment, "V1Deployment", "Deployment") == []
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_the_readme_deployment_is_what_setup_controller_applies() -> None:
    """It showed `nvcre-controller`, 2 replicas and 250m CPU while `setup controller` applies `nvcre-engine`, one replica,
    100m; and `setup reset` deletes only the Deployment of that name: one applied from the README outlived it."""
    from nvcre_tui.engine.kube.deployment import controller_deployment

    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL)
    [deployment] = [yaml.safe_load(block) for block in blocks if "kind: Deployment" in block]
    assert deployment == controller_deployment("registry.example.com/nvcre:0.1.0")


def test_the_checker_finds_a_misspelt_field() -> None:
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"selector": {}, "template": {"spec": {"containers": [
        {"name": "c", "livenessprobe": {}, "ports": [{"containerPort": "9090"}]}]}}}}
    assert check_api_object(bad, "V1Deployment", "Deployment") == [
        "Deployment.spec.template.spec.containers[0].livenessprobe: no such field in V1Container",
        "Deployment.spec.template.spec.containers[0].ports[0].containerPort: expected an integer, got '9090'",
    ]
