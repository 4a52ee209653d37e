"""Kubernetes name and label syntax, in one place: selectors (store), option and manifest checks (api) use it."""

from __future__ import annotations

import re

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"


def is_label_name(text: str) -> bool:
    """A label key's name part, or a non-empty label value: up to 63 of A-Z a-z 0-9 - _ ., a letter or digit at each end."""
    return 0 < len(text) <= 63 and re.fullmatch(LABEL_VALUE, text) is not None


def is_label_key(key: str) -> bool:
    """A label key as the API server takes it: [prefix/]name, the prefix a DNS subdomain of up to 253 characters."""
    prefix, slash, name = key.rpartition("/")
    return is_label_name(name) and (not slash or (0 < len(prefix) <= 253 and re.fullmatch(DNS_SUBDOMAIN, prefix) is not None))


__all__ = ["DNS_SUBDOMAIN", "LABEL_VALUE", "is_label_key", "is_label_name"]
