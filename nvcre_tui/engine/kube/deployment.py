"""What `nvcre setup controller` applies: the Deployment that runs `nvcre controller` in the install namespace, as data.

One replica: the `nvcre-engine` Lease elects the one engine that reconciles, so a second replica would only wait as a
standby (a rolling update's new pod does, until the old one releases the Lease on SIGTERM). The pod runs as setup init's
ServiceAccount, whose RBAC is all the engine needs; no GPU. It writes nothing but what a process may leave in /tmp (the
controller keeps no history archive: KubeSession gets history=None), so the root filesystem is read-only with an
emptyDir at /tmp, which is also $HOME and $XDG_STATE_HOME for whatever library looks there.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import ENGINE_NAME, INSTALL_NAMESPACE, LABEL_APP_NAME, LABEL_PART_OF
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.store.protocol import DEPLOYMENT

__all__ = ["METRICS_PORT", "NO_DEPLOYMENT_CONTROLLER", "check_image", "controller_deployment", "observed"]

METRICS_PORT = 9090  # `nvcre controller --metrics-port`'s default, serving /metrics and /healthz
MAX_IMAGE_CHARS = 4096
WRITABLE = "/tmp"
# Of the Deployment no Deployment controller has seen: `setup status`'s controller row, and `setup controller` once it
# has applied it and none sees it (it said its pod was made by the cluster's controller-manager, on a server with none)
NO_DEPLOYMENT_CONTROLLER = ("no Deployment controller has seen it (status.observedGeneration): an API server without "
                            "kube-controller-manager makes no pod of it; run `nvcre controller` from a workstation instead, "
                            "with a kubeconfig holding the engine's rights")


def check_image(image: str | None, flag: str = "--image") -> str:
    """The image reference, or InputError naming `flag`: the API server takes any non-empty text, and the kubelet then
    fails to pull it in a loop; empty, blank or spaced text is a typo caught here."""
    if image is None:  # it said "... got None"
        raise InputError(f"{flag}: required: an image with this package installed and ENTRYPOINT nvcre (the repository's "
                         "Dockerfile), such as registry.example.com/nvcre:0.1.0")
    if not image or not image.isprintable() or any(c.isspace() for c in image) or len(image) > MAX_IMAGE_CHARS:
        raise InputError(f"{flag}: must be an image reference such as registry.example.com/nvcre:0.1.0 (printable, no "
                         f"spaces, at most {MAX_IMAGE_CHARS} characters), got {image!r}")
    return image


def controller_deployment(image: str, namespace: str = INSTALL_NAMESPACE) -> dict[str, Any]:
    """The Deployment of `nvcre controller --install-namespace NAMESPACE` from `image` (its ENTRYPOINT is `nvcre`)."""
    selector = {LABEL_APP_NAME: ENGINE_NAME}
    container = {
        "name": "controller",
        "image": image,
        "args": ["controller", "--install-namespace", namespace, "--metrics-port", str(METRICS_PORT)],
        # the Lease holder's identity (`nvcre controller` reads $POD_NAME): other consoles show who reconciles
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "HOME", "value": WRITABLE}, {"name": "XDG_STATE_HOME", "value": WRITABLE}],
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
        # /healthz fails once the event loop stops beating (a standby waiting for the Lease is alive)
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"},
                          "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tmp", "mountPath": WRITABLE}],
    }
    return {
        "apiVersion": DEPLOYMENT.api_version, "kind": DEPLOYMENT.kind,
        "metadata": {"name": ENGINE_NAME, "namespace": namespace, "labels": {LABEL_PART_OF: "nvcre", **selector}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(selector)},
            "template": {
                "metadata": {"labels": {LABEL_PART_OF: "nvcre", **selector}},
                "spec": {
                    "serviceAccountName": ENGINE_NAME,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def observed(deployment: dict[str, Any]) -> bool:
    """Whether a Deployment controller has seen `deployment` (any status.observedGeneration: one below its generation is
    a controller yet to see a new spec, not no controller). Never on an API server alone, which makes no pod of it."""
    status = deployment.get("status")
    return isinstance(status, dict) and isinstance(status.get("observedGeneration"), int)
