"""NVSentinel as a scenario declares it: one node validated and failed, quarantined, and the request."""

from __future__ import annotations

from typing import Any

NODE_CHANGES: list[dict[str, Any]] = [
    {"node": "gpu-node-02",
     "labels": {"nvsentinel.nvidia.com/validation-state": "validation-failed"},
     "annotations": {"nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details": '["nccl-loopback/ThresholdViolation"]'},
     "taints": [{"key": "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed", "value": "true", "effect": "NoSchedule"}]},
    {"node": "gpu-node-03", "labels": {"nvsentinel.nvidia.com/validation-state": "validating"},
     "annotations": {"nvsentinel.nvidia.com/active-validation-request": "vr-weekly"}},
]
REQUEST: dict[str, Any] = {
    "metadata": {"name": "vr-weekly"},
    "spec": {"nodes": [{"name": "gpu-node-02"}, {"name": "gpu-node-03"}], "tests": []},
    "status": {"phase": "Failed", "testGroups": [{"name": "nccl-loopback", "provider": "nvcre-provider", "phase": "Failed",
               "attempts": [{"objectName": "vr-weekly-nccl-loopback", "phase": "Failed", "failureReason": "TestFailed",
                             "failedNodes": ["gpu-node-02"]}]}]},
}
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "validationrequests.nvsentinel.nvidia.com"},
    "spec": {"group": "nvsentinel.nvidia.com", "scope": "Cluster",
             "names": {"plural": "validationrequests", "singular": "validationrequest", "kind": "ValidationRequest", "listKind": "ValidationRequestList"},
             "versions": [{"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}
