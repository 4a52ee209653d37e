"""A kubeconfig user's exec entry as client-go reads it: its fields checked as client-go decodes them, and what a plugin
that asks for it (`provideClusterInfo: true`) is told of the cluster, KUBERNETES_EXEC_INFO's spec.cluster. The library
told it nothing, so a plugin that mints a token for the server it is given (one plugin for every cluster of a fleet)
failed or minted one for no cluster."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inputs.limits import MAX_CREDENTIAL_FILE_BYTES

__all__ = ["CLUSTER_INFO_KEY", "EXEC_EXTENSION", "checked_exec", "with_cluster_info"]

CLUSTER_INFO_KEY = "nvcre-cluster-info"  # in the exec entry handed to the client library, read by its plugin runner
EXEC_EXTENSION = "client.authentication.k8s.io/exec"  # the cluster extension passed as spec.cluster.config


def checked_exec(plugin: Any, where: str) -> dict[str, Any]:
    """A user's exec entry with the types client-go decodes it to (`command` a string, `args` strings, `env` entries
    with a string name and value), else InputError naming the field: the library said `'str' object has no attribute
    'value'` (args: a string) or `expected str, bytes or os.PathLike object, not int` (a number as an env value). An env
    entry without a value has the empty one, as kubectl gives it (the library refused it)."""
    if not isinstance(plugin, dict):
        raise InputError(f"{where}: must be a mapping (command, args, env, apiVersion), got {plugin!r:.60}")
    if not isinstance(plugin.get("command"), str) or not plugin["command"]:
        raise InputError(f"{where}.command: must be the plugin's program, got {plugin.get('command')!r:.60}")
    args = plugin.get("args")
    if args is not None and (not isinstance(args, list) or not all(isinstance(arg, str) for arg in args)):
        raise InputError(f"{where}.args: must be a list of strings, got {args!r:.60}")
    env = plugin.get("env")
    if env is None:
        return plugin
    if not isinstance(env, list):
        raise InputError(f"{where}.env: must be a list of name and value, got {env!r:.60}")
    entries = []
    for index, entry in enumerate(env):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise InputError(f"{where}.env[{index}]: needs a name, got {entry!r:.60}")
        value = entry.get("value", "")
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}.env[{index}] ({entry['name']}): value must be a string (quote it), got {value!r:.60}")
        entries.append({**entry, "value": value or ""})
    return {**plugin, "env": entries}


def with_cluster_info(library_config: dict[str, Any], user: str, cluster: dict[str, Any]) -> dict[str, Any]:
    """`library_config` with user `user`'s exec entry carrying the cluster's info when it asks for it (a copy; the
    rest shared)."""
    users = []
    for entry in library_config["users"]:
        plugin = entry["user"].get("exec") if entry["name"] == user else None
        if isinstance(plugin, dict) and plugin.get("provideClusterInfo") is True:
            entry = {**entry, "user": {**entry["user"], "exec": {**plugin, CLUSTER_INFO_KEY: _cluster_info(cluster)}}}
        users.append(entry)
    return {**library_config, "users": users}


def _cluster_info(cluster: dict[str, Any]) -> dict[str, Any]:
    """client.authentication.k8s.io's Cluster: the server and how to reach and trust it, and the exec extension's value."""
    info: dict[str, Any] = {"server": cluster.get("server")}
    for field in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url", "disable-compression"):
        if cluster.get(field) not in (None, ""):
            info[field] = cluster[field]
    authority = cluster.get("certificate-authority-data")
    if not authority and isinstance(cluster.get("certificate-authority"), str):  # checked readable by now
        with Path(cluster["certificate-authority"]).open("rb") as handle:
            authority = base64.standard_b64encode(handle.read(MAX_CREDENTIAL_FILE_BYTES)).decode()
    if authority:
        info["certificate-authority-data"] = authority
    for extension in cluster.get("extensions") or []:
        if isinstance(extension, dict) and extension.get("name") == EXEC_EXTENSION and "extension" in extension:
            info["config"] = extension["extension"]
    return info
