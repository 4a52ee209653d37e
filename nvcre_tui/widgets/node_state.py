"""Node states as data: one glyph and one theme variable per state, so colour is never the only signal.

Plain data, no Textual: widgets and screens read this table; themes colour it through `$verdict-<state>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class NodeState(StrEnum):
    """What the console knows about one node, most urgent first: the display order of legends and counts
    (a header cut short by a narrow block still shows the failures)."""

    FAILED = "failed"
    SUSPECT = "suspect"
    INCONCLUSIVE = "inconclusive"
    RUNNING = "running"
    UNTESTED = "untested"
    PASSED = "passed"
    EXCLUDED = "excluded"

    @property
    def glyph(self) -> str:
        """One-cell symbol for the state (distinct shapes, readable without colour)."""
        return STATE_GLYPHS[self]

    @property
    def variable(self) -> str:
        """Theme variable holding the state's colour, without the `$`."""
        return f"verdict-{self.value}"


# Every glyph is one terminal cell and East-Asian-width "neutral" or "narrow", so it never turns double-width.
STATE_GLYPHS: Mapping[NodeState, str] = MappingProxyType(
    {
        NodeState.FAILED: "✗",
        NodeState.SUSPECT: "!",
        NodeState.INCONCLUSIVE: "?",
        NodeState.RUNNING: "⋯",
        NodeState.UNTESTED: "◦",
        NodeState.PASSED: "✓",
        NodeState.EXCLUDED: "⊘",
    }
)


# A map overlay mark (not a state: it sits beside the state's glyph): the node's software baseline changed
# since its last archived pass, so it needs re-certification.
STALE_GLYPH = "↻"


@dataclass(frozen=True)
class NodeCell:
    """One node as a map shows it: name, the domain it is grouped under (clique, rack), state, free-form detail."""

    name: str
    domain: str
    state: NodeState
    detail: str = ""


def state_component_classes(prefix: str) -> set[str]:
    """Component class names `<prefix>--<state>` for every state."""
    return {f"{prefix}--{state.value}" for state in NodeState}


def state_component_css(widget: str, prefix: str) -> str:
    """CSS colouring each `<prefix>--<state>` component class with its `$verdict-<state>` theme variable."""
    return "\n".join(
        f"{widget} > .{prefix}--{state.value} {{ color: ${state.variable}; }}" for state in NodeState
    )
