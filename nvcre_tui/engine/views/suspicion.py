"""The fleet's counts and a running diagnosis's narrowing set (under suspicion, under test, blamed nodes running
again), in the words the dashboard, the wall, the map and the drill-down share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any

from nvcre_tui.engine.api.nodes import is_cordoned
from nvcre_tui.engine.api.vocabulary import STATE_PRECEDENCE
from nvcre_tui.engine.api.vocabulary import TESTED_NOW as TESTED_NOW, UNDER_SUSPICION as UNDER_SUSPICION  # the screens read them here
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.diagnose.summary import progress_line, rounds_weighed
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.snapshot import Snapshot


def fleet_summary(snapshot: Snapshot, states: dict[str, tuple[str, str]], cert_name: str | None = None) -> dict[str, int]:
    """Node counts by map state, plus totals; `suspect` as the wall's SUSPECT counts it (blamed only with the whole
    group), `under suspicion` the running diagnoses' narrowing set drawn suspect, and `under test` those of it the
    current round tests (drawn running)."""
    counts = Counter(state for state, _ in states.values())
    blamed = {row.node for view in snapshot.views.values() if cert_name in (None, view.name) for row in failure_rows(snapshot, view.name)}
    suspicion = len(under_suspicion(states, blamed))
    by_state = {s.value: counts.get(s, 0) for s in STATE_PRECEDENCE}
    by_state["suspect"] -= suspicion
    return {"nodes": len(snapshot.nodes), "cordoned": sum(1 for n in snapshot.nodes if is_cordoned(n)), **by_state,
            UNDER_SUSPICION: suspicion, UNDER_TEST: len(suspects_under_test(snapshot, states, cert_name)),
            RUNNING_AGAIN: len(blamed_and_running(snapshot, states, cert_name))}


# UNDER_SUSPICION (api/vocabulary) is also fleet_summary's key of the narrowing set's count drawn suspect.
UNDER_TEST = "under test"  # fleet_summary's key of the count of suspects a diagnosis tests this round
RUNNING_AGAIN = "more with a failure on record"  # fleet_summary's count of nodes drawn ✗, ! or ? that a test runs on now


def diagnosis_progress(state: Mapping[str, Any], *, stage: bool = True) -> str:
    """Where a running diagnosis stands on the drill-down's category line (readable state), its narrowing set in the
    words the dashboard and the wall use: "2 under suspicion · round 1 (confirmation), 16 tests so far" (progress_line
    said "2 suspects", the word the report keeps for a node blamed with its whole group); without `stage`, the
    shortest: "2 under suspicion · round 1, 16 tests so far". The tests are every round's recorded so far: beside
    "round 1" they read as its own, while the round rows under the line count each round's ("round 1 · 3 tests")."""
    if state.get("stage") == "complete":
        return progress_line(state)
    narrowing = len(state.get("suspectNodes") or [])
    where = f"round {rounds_weighed(state)}" + (f" ({state.get('stage')})" if stage else "")
    rest = f"{where}, {count(len(state.get('tests') or []), 'test')} so far"
    return f"{narrowing} {UNDER_SUSPICION} · {rest}" if narrowing else rest


def suspect_legend(states: Mapping[str, tuple[str, str]], narrowing: Collection[str]) -> str:
    """What the map's ! stands for among `states`, for its legend: `suspect` (blamed only with its whole group),
    UNDER_SUSPICION where every node drawn so is in a running diagnosis's narrowing set (`narrowing`:
    under_suspicion), or both."""
    drawn = {node for node, (state, _) in states.items() if state == "suspect"}
    held = drawn & set(narrowing)
    if not held:
        return "suspect"
    return UNDER_SUSPICION if held == drawn else f"suspect / {UNDER_SUSPICION}"


def state_word(state: str, node: str, narrowing: Collection[str]) -> str:
    """A node's state as a line about it says it: a running diagnosis's narrowing set (`narrowing`: narrowing_set),
    drawn ! as suspects are, is UNDER_SUSPICION, never `suspect` (a node blamed with its whole group, among the failed
    nodes), as the map's legend and the wall say it."""
    return UNDER_SUSPICION if state == "suspect" and node in narrowing else state


def narrowing_set(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """under_suspicion of the certification's node states (every certification's when None), blamed meaning what any
    of them blamed."""
    names = [cert_name] if cert_name is not None else [str(c["metadata"]["name"]) for c in snapshot.certifications]
    return under_suspicion(states, {row.node for name in names for row in failure_rows(snapshot, name)})


def suspicion_said(nodes: int) -> str:
    """The narrowing set as the failures title names it: "2 nodes under suspicion"."""
    return f"{count(nodes, 'node')} {UNDER_SUSPICION}"


def blamed_and_running(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """Nodes a failure marks (failed, suspect, inconclusive: it outranks running on the map) that a group runs on now:
    an hour of a second iteration or of the next category on them read "0 running" on the wall and the fleet line,
    a frozen certification to the room."""
    busy = {str(node) for view in snapshot.views.values() if cert_name in (None, view.name) for category in view.categories
            if category.workflow is not None and not cond.is_terminal(category.workflow)
            for group in category.groups if group.get("phase") == "Running" for node in group.get("nodes") or []}
    return sorted(node for node in busy if states.get(node, ("",))[0] in ("failed", "suspect", "inconclusive"))


def suspects_under_test(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """The diagnosis's suspects its current round tests: the map draws them running, or waiting while their test's
    pods are not placed yet (what they do now), so the counters name them apart, or they would read "0 suspect"
    beside a drill-down's "4 suspects"."""
    return sorted(node for node in diagnosis_suspects(snapshot, cert_name) if states.get(node, ("",))[0] in UNDER_TEST_STATES)


def under_suspicion(states: Mapping[str, tuple[str, str]], blamed: Collection[str]) -> list[str]:
    """The nodes drawn suspect that no category blamed (`blamed`: failure_rows' nodes): a running diagnosis's narrowing
    set (the members of its failed tests not cleared, its suspects), which the report, `certification list` and the
    certification's summary do not count among its failed nodes. A suspect is otherwise a node blamed only with its
    whole group, which they do count; the wall counts the narrowing set apart ("2 ! under suspicion"), so its FAILED
    and SUSPECT counters add up to the list's FAILED NODES while the map still narrows round by round."""
    return sorted(node for node, (state, _) in states.items() if state == "suspect" and node not in blamed)


def diagnosis_suspects(snapshot: Snapshot, cert_name: str | None = None) -> set[str]:
    """The nodes the certification's running diagnoses (every certification's when None) hold suspect now."""
    return {str(node) for view in snapshot.views.values() if cert_name in (None, view.name) for category in view.categories
            for node in (category.orchestration.get("diagnose") or {}).get("suspectNodes") or []}


UNDER_TEST_STATES = ("running", "waiting")
