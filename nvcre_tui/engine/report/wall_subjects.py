"""Which certifications the wall rotates through, from the read model: the one rule, in one place.

An operations-room wall keeps a failure in sight until something newer replaces it or someone deletes it; a clock
never takes it down (a burn-in that failed at 02:00 left the wall at 02:30, before anyone came in). So the wall
shows, by name:

- every certification that has not finished (running, or waiting for nodes);
- the latest finished one, whatever its result (the fleet's last word);
- every finished FAILED one until a certification that finished after it held every node it held (a newer verdict
  on those nodes: passed or failed again); one that held no node is replaced by the next one to finish.

A pass leaves once a newer certification finishes; a failure stays through any number of passes elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status, creation_order
from nvcre_tui.engine.api.vocabulary import FAILED, RESULT_FAILED
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.report.shown_order import in_shown_order

Obj = dict[str, Any]
_NEVER = datetime.min.replace(tzinfo=timezone.utc)
# name -> (the certification's body, its Workflows' bodies, the nodes it held): the watch cache replaces a body when it
# changes and shares it otherwise, so identity says nothing changed (a diagnosing Workflow's nodes are decoded from its
# plan, 40 ms at 2,048 nodes, and the wall asks at every refresh).
_HELD: dict[str, tuple[Obj, tuple[Obj, ...], frozenset[str]]] = {}
HELD_KEPT = 256


def wall_subjects(views: Mapping[str, CertificationView]) -> list[str]:
    """The certifications the wall shows in turn (of a snapshot's views), in the order the dashboard and `list` show
    them (report.shown_order: it rotated by name); [] when there is none."""
    certs = [view.cert for view in views.values()]
    shown = {_name(cert) for cert in certs if not cond.is_terminal(cert)}
    finished = sorted((view for view in views.values() if cond.is_terminal(view.cert)), key=lambda view: _finished_order(view.cert))
    if finished:
        shown.add(_name(finished[-1].cert))
    for index, view in enumerate(finished[:-1]):
        if failed(view.cert) and not any(held(view) <= held(later) for later in finished[index + 1:]):
            shown.add(_name(view.cert))
    return [_name(cert) for cert in in_shown_order(certs) if _name(cert) in shown]  # as the dashboard and `list` order them


def failed(cert: Obj) -> bool:
    """Whether a finished certification failed: its result, or its phase where the engine ended it before its summary
    was final (the report says FAILED then too)."""
    return (certification_status(cert).get("summary") or {}).get("result") == RESULT_FAILED or cond.phase(cert) == FAILED


def held(view: CertificationView) -> frozenset[str]:
    """The nodes the certification's categories held (CertificationView.held_nodes; none before its first category)."""
    name = view.name
    workflows = tuple(category.workflow for category in view.categories if category.workflow is not None)
    found = _HELD.get(name)
    if found is None or found[0] is not view.cert or len(found[1]) != len(workflows) or any(a is not b for a, b in zip(found[1], workflows)):
        if len(_HELD) >= HELD_KEPT:
            _HELD.clear()  # bodies replaced since are never asked again: start over
        found = _HELD[name] = (view.cert, workflows, frozenset(view.held_nodes()))
    return found[2]


def _finished_order(cert: Obj) -> tuple[datetime, tuple[str, int, str, str]]:
    """When it finished (unreadable: before any other), then the store's order of creation."""
    try:
        when = parse_time(certification_status(cert).get("completionTime"))
    except ValueError:
        when = _NEVER
    return when, creation_order(cert)


def _name(cert: Obj) -> str:
    return str(cert["metadata"]["name"])

