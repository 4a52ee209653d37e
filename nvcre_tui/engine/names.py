"""Kubernetes name and label syntax, in one place: selectors (store), option and manifest checks (api) use it; our
API group and version, and the CRDs' group, which both the store's kinds and the API models spell; and the names of
the Jobs a Workflow makes (its controller, and render predicting them); and the owner link (controller_uid) by which
the engine (store.cache) and every reader (report.readmodel) join a child to its owner."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

NVCRE_GROUP = "nvcre.nvidia.com"
NVCRE_VERSION = "v1alpha1"
APIEXTENSIONS_GROUP = "apiextensions.k8s.io"  # CustomResourceDefinitions: the store's CRD kind, the CRDs api.crd makes

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
CONFIG_KEY = r"^[-._a-zA-Z0-9]+$"


def is_label_name(text: str) -> bool:
    """A label key's name part, or a non-empty label value: up to 63 of A-Z a-z 0-9 - _ ., a letter or digit at each end."""
    return 0 < len(text) <= 63 and re.fullmatch(LABEL_VALUE, text) is not None


def is_label_key(key: str) -> bool:
    """A label key as the API server takes it: [prefix/]name, the prefix a DNS subdomain of up to 253 characters."""
    prefix, slash, name = key.rpartition("/")
    return is_label_name(name) and (not slash or (0 < len(prefix) <= 253 and re.fullmatch(DNS_SUBDOMAIN, prefix) is not None))


def config_key_problem(key: str) -> str | None:
    """Why `key` cannot be a ConfigMap (or Secret) data key, as the API server's IsConfigMapKey judges it; None when
    it can. A key is a file name in the mounted volume: no '/', not '.' or '..' nor starting with '..'."""
    if len(key.encode()) > 253:
        return "is longer than 253 characters"
    if re.fullmatch(CONFIG_KEY, key) is None:
        return "may hold only letters, digits, '-', '_' and '.' (no '/': the files are mounted in one directory)"
    if key in (".", "..") or key.startswith(".."):
        return "must not be '.' or '..' nor start with '..'"
    return None


__all__ = ["CONFIG_KEY", "DNS_SUBDOMAIN", "LABEL_VALUE", "config_key_problem", "is_label_key", "is_label_name"]


def job_name(workflow: str, group: str, *, single: bool, diagnose: bool, iteration: int = 1) -> str:
    """The nvcre Job a Workflow makes for one group and iteration (the controller, and render predicting it):
    `<workflow>-<test>` for a diagnose test (its name is unique over the run and says its round), `<workflow>-job` for
    the one group of a single iteration, else `<workflow>-<group>-iter-<n>`."""
    if diagnose:
        return f"{workflow}-{group}"
    return f"{workflow}-job" if single else f"{workflow}-{group}-iter-{iteration}"


# What job_name puts after `<workflow>-`: `job`, `<group>-iter-<n>`, or a diagnose test's name, which starts with its
# round (`r<n>-`, diagnose/wave.py)
_JOB_SUFFIX = re.compile(r"job|[a-z0-9]([-a-z0-9]*[a-z0-9])?-iter-[1-9][0-9]*|r[1-9][0-9]*-[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def names_a_job_of(workflow: str, name: str) -> bool:
    """`name` is one job_name could give a Job of `workflow` (a Job not made yet may be waited for by its name)."""
    prefix = f"{workflow}-"
    return name.startswith(prefix) and _JOB_SUFFIX.fullmatch(name[len(prefix):]) is not None


@functools.lru_cache(maxsize=65536)  # the same node names sorted at every redraw (1024 failed nodes: 25 ms a sort uncached)
def natural_key(text: str) -> tuple[str | int, ...]:
    """Sort key where digit runs compare as numbers: node-2 < node-10 (a fleet of 1024 nodes names gpu-node-100 after
    gpu-node-99, not after gpu-node-10)."""
    # re.split with a group alternates text and digits, so positions always hold the same type.
    return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", text)))


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid its controller ownerReference names (the link the engine follows from owner to child: a label anyone
    may remove or edit is not it), or None."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, dict) and ref.get("controller") and isinstance(ref.get("uid"), str):
            return str(ref["uid"])
    return None
