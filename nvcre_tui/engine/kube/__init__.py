"""Talking to a real Kubernetes API server: which cluster (config.py); the store itself is store/kube/."""

from .config import KubeTarget, cluster_configured, load_target

__all__ = ["KubeTarget", "load_target", "cluster_configured"]
