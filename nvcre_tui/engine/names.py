"""Kubernetes label-key syntax, in one place: selectors (store) and option checks (api) use the same rule."""

from __future__ import annotations

import re

_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_label_name(text: str) -> bool:
    """A label key's name part, or a non-empty label value: up to 63 of A-Z a-z 0-9 - _ ., a letter or digit at each end."""
    return len(text) <= 63 and bool(_LABEL_NAME.fullmatch(text))


def is_label_key(key: str) -> bool:
    """A label key as the API server takes it: [prefix/]name, the prefix a DNS subdomain of up to 253 characters."""
    prefix, slash, name = key.rpartition("/")
    return is_label_name(name) and (not slash or (0 < len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(prefix))))


__all__ = ["is_label_key", "is_label_name"]
