"""A diagnosis's tests of one node as the drill-down and the node screen list them: the tests that decided a
conviction, and for a node the diagnosis cleared, the passes that cleared it and what explained each failure; and a
round's tests in a line (the drill-down's round headings)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.text import Text

from nvcre_tui.engine.api.vocabulary import FAILED
from nvcre_tui.engine.diagnose.clearance import Clearance
from nvcre_tui.engine.diagnose.summary import flagged_others
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, shown_unit, with_unit
from nvcre_tui.engine.units import count
from nvcre_tui.widgets.detail import shown, shown_measurement

Judged = Sequence[Mapping[str, Any]]  # threshold evidence ({metric, expression}) a test's value is shown beside


def _value(test: Mapping[str, Any], judged: Judged | str | None) -> str:
    """A test's value on its side of the category's threshold (`judged`: its expression, or a Job's evidence)."""
    if isinstance(judged, str):
        return shown_measurement(BUS_BANDWIDTH, test["value"], threshold=judged)
    return shown_measurement(BUS_BANDWIDTH, test["value"], judged)


def tested_line(test: Mapping[str, Any], node: str, judged: Judged | str | None = None,
              crossed: Callable[[Mapping[str, Any]], bool] | None = None) -> str:
    """"✗ r0-screen-1 (screening) with gpu-node-03  240.27 GB/s": as the record says it, a failure's reason where its
    value is not why it failed, with the members a hardware check flagged where `node` is not one ("HardwareFailureDetected
    on gpu-node-05"); the value on its side of the threshold (never rounded across it); " (link fault)" where a named
    link fault explains the failure (`crossed`); "– ... CordonedBeforeStart: ran nothing, no evidence" for a test
    recorded untested."""
    failed = test.get("passed") is False
    if test.get("passed") is None:  # recorded untested (a member cordoned before its workload started): not a failure
        said = f"  {test.get('reason') or 'untested'}: ran nothing, no evidence"
        return f"– {test['group']} ({test['stage']}) with {', '.join(n for n in test.get('nodes') or () if n != node) or 'no partner'}{said}"
    said = (f"  {test['reason']}{flagged_others(test, node)}" if test.get("reason") and failed
            else f"  {with_unit(BUS_BANDWIDTH, _value(test, judged))}" if test.get("value") is not None else "")
    said += " (link fault)" if failed and crossed is not None and crossed(test) else ""
    partners = ", ".join(n for n in test.get("nodes") or () if n != node) or "no partner"
    return f"{'✓' if test.get('passed') else '✗'} {test['group']} ({test['stage']}) with {partners}{said}"


def passes_said(cleared: Clearance, judged: Judged | str | None = None) -> str:
    """The passes that cleared the node, in a line: "passed r1-confirm-1 at 404.74 GB/s", "passed 3 tests (a at 401,
    b at 402, c at 403 GB/s)", "passed no test"."""
    values = [f"{t['group']}" + (f" at {_value(t, judged)}" if t.get("value") is not None else "") for t in cleared.passes]
    if not values:
        return "passed no test"
    unit = f" {shown_unit(BUS_BANDWIDTH)}" if any(t.get("value") is not None for t in cleared.passes) else ""
    if len(values) == 1:
        return f"passed {values[0]}{unit}"
    return f"passed {len(values)} tests ({', '.join(values)}{unit})"


def clearance_text(text: Text, cleared: Clearance, judged: Judged | str | None = None) -> None:
    """Append the tests that cleared the node: its passes, then each failure with what explained it."""
    text.append("Tests that cleared it:\n", style="bold")
    # Indented as the tests that decided a verdict are (shown() strips the ends: the indent goes on after it).
    for test in cleared.passes:
        text.append("  " + shown(tested_line(test, cleared.node, judged)) + "\n")
    for failure in cleared.failures:
        text.append("  " + shown(f"{tested_line(failure.test, cleared.node, judged)}: {failure.said}") + "\n")


def round_said(groups: Sequence[Mapping[str, Any]], state: Mapping[str, Any] | None) -> str:
    """What a diagnose round tested, after its name: " · screening: 16 tests, 1 failed", " · link, confirmation: 12
    tests, 3 failed" (its stages as the diagnosis names its tests; `state`: the readable diagnose state). The headings
    read "round 0", "round 1" ... alone: the rounds narrowing the suspects down showed only once each was opened."""
    known = [*((state or {}).get("tests") or []), *((state or {}).get("plan") or [])]
    stages = {str(t.get("group")): str(t.get("stage")) for t in known if isinstance(t, Mapping) and t.get("stage")}
    kinds = list(dict.fromkeys(stages[name] for g in groups if (name := str(g.get("name"))) in stages))
    failed = sum(1 for g in groups if g.get("phase") == FAILED)
    said = count(len(groups), "test") + (f", {failed} failed" if failed else "")
    return f" · {', '.join(kinds)}: {said}" if kinds else f" · {said}"
