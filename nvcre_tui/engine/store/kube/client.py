"""kubernetes-asyncio, imported through here and nowhere else.

Importing any of it imports kubernetes_asyncio.config.kube_config, which computes `Path.home() / ".kube/config"`
at import time (even with $KUBECONFIG set). With $HOME unset and the process's UID not in the password database
(a container run as an arbitrary UID, as OpenShift does) that raises RuntimeError "Could not determine home
directory.", and every nvcre command, a simulated run included, ended with an internal error before reading its
arguments. nvcre never reads that default (kube.config finds the kubeconfig itself, and says in one line what to
set when it needs a home), so the import is given a placeholder $HOME for its duration, and the environment is
left as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ApiClient", "Configuration", "ConfigException", "InClusterConfigLoader", "KubeConfigLoader"]

PLACEHOLDER_HOME = "/nonexistent"  # the conventional home of a user without one; never read


def _has_home() -> bool:
    try:
        Path.home()
    except RuntimeError:
        return False
    return True


if _has_home():
    from kubernetes_asyncio.client import ApiClient, Configuration
    from kubernetes_asyncio.config import ConfigException
    from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader
else:
    _saved = os.environ.get("HOME")
    os.environ["HOME"] = PLACEHOLDER_HOME
    try:
        from kubernetes_asyncio.client import ApiClient, Configuration
        from kubernetes_asyncio.config import ConfigException
        from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader
        from kubernetes_asyncio.config.kube_config import KubeConfigLoader
    finally:
        if _saved is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = _saved
