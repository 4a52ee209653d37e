"""Talking to a real Kubernetes API server: which cluster (config.py), the session that assembles an engine or a
viewer on it (session.py), pod logs, setup (CRDs, RBAC) and its status probe; the store itself is store/kube/.

May import everything the engine offers below the console (api, planning, runners, history, store, session,
engine, lease); the console reaches it only through cli/session.py.
"""

from .config import KubeTarget, cluster_configured, load_target

__all__ = ["KubeTarget", "load_target", "cluster_configured"]
