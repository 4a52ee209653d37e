"""Node states on screen: the map's cell and the component classes that colour each state.

The states, glyphs and orders themselves are wire vocabulary (engine/api/vocabulary.py); no Textual here either.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvcre_tui.engine.api.vocabulary import STALE_GLYPH, STATE_GLYPHS, NodeState

__all__ = ["STALE_GLYPH", "STATE_GLYPHS", "NodeCell", "NodeState", "state_component_classes", "state_component_css"]


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
