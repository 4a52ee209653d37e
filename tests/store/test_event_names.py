"""An Event's name is a DNS subdomain whatever the name of the object it is about (up to a Node's 253 characters)."""

from __future__ import annotations

import re

import pytest

from nvcre_tui.engine.store.events import event_identity

SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@pytest.mark.parametrize("name", ["gpu-node-07", "a" * 199 + "-" + "b" * 53, "a" * 198 + ".-" + "c" * 53, "n" * 253])
def test_event_names_are_dns_subdomains(name: str) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": "u-1"}}
    namespace, event = event_identity(node, "Warning", "HardwareFailureDetected", "xid 79")
    assert namespace == "default" and len(event) <= 253 and SUBDOMAIN.match(event), event
