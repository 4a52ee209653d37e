"""What the console may do: one place decides which actions write, used by key bindings (check_action),
the command palette and the command bar. The store wrapper (ReadOnlyStore) is the last line."""

from __future__ import annotations

from dataclasses import dataclass

# Actions that lead to a write: compose (and its form-filling actions) exists only to submit;
# delete_certification deletes one (the dashboard's and the drill-down's x); save_log, save_file and
# screenshot (Textual's palette command, an SVG in the current directory) write files.
# Read-only mode hides all of them: it writes nothing at all.
MUTATING_ACTIONS = frozenset({"compose", "submit", "delete_certification", "load_file", "load_default", "save_file", "save_log", "screenshot"})


@dataclass(frozen=True)
class Policy:
    """read_only: every mutating action is refused."""

    read_only: bool = False

    def allows(self, action: str) -> bool:
        """Whether `action` (a Textual action name, without the `app.` prefix) may run."""
        return not (self.read_only and action in MUTATING_ACTIONS)
