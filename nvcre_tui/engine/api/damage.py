"""What is wrong with a stored nvcre object: a damaged store (an edited file, a bad write) holds objects the models
refuse, and a cluster objects whose status someone other than nvcre wrote (api/provenance.py: a Certification set to
PASSED by hand); readers name the first problem and leave the object out instead of failing on it, or trusting it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from nvcre_tui.engine.api.provenance import foreign_status
from nvcre_tui.engine.api.resources import RESOURCES_BY_KIND
from nvcre_tui.engine.api.validation import error_location, error_message, validation_messages
from nvcre_tui.engine.errors import field_path

T = TypeVar("T", bound=Mapping[str, Any])


def damaged_object(kind: str, item: Mapping[str, Any]) -> str | None:
    """What is wrong with one stored nvcre object (its first problem, as `field: what`), or None."""
    if (foreign := foreign_status(kind, item)) is not None:
        return foreign
    error = _refusal(kind, item)
    return None if error is None else validation_messages(error, "")[0].removeprefix(": ")


def unshowable_object(kind: str, item: Mapping[str, Any]) -> str | None:
    """What keeps a viewer from showing one stored nvcre object (its first problem), or None: as `damaged_object`, but
    a Certification's spec is the user's, which the engine judges (it fails the certification as InvalidSpec, and a
    viewer shows that): of its spec only a type a viewer cannot read (`_unreadable_spec`) counts."""
    if (foreign := foreign_status(kind, item)) is not None:
        return foreign
    error = _refusal(kind, item)
    if error is None:
        return None
    problems = error.errors(include_url=False)
    if kind == "Certification":
        problems = [p for p in problems if p["loc"][:1] != ("spec",) or (_unreadable_spec(p["loc"]) and p["type"].endswith("_type"))]
    return _said(problems[0]) if problems else None


def _unreadable_spec(loc: tuple[int | str, ...]) -> bool:
    """Whether `loc` is a place of the spec a viewer reads: the spec, its categories, each one's domain and variant."""
    return (len(loc) <= 3 and loc[1:2] in ((), ("categories",))) or (len(loc) == 4 and loc[1] == "categories" and loc[3] in ("domain", "variant"))


def _refusal(kind: str, item: Mapping[str, Any]) -> ValidationError | None:
    """Why the kind's model refuses the object (None: it does, or nvcre has no model of the kind)."""
    model = RESOURCES_BY_KIND.get(kind)
    if model is None:
        return None
    try:
        model.model_validate(item)
    except ValidationError as error:
        return error
    return None


def _said(problem: ErrorDetails) -> str:
    """One problem as `field: what` (as `validation_messages` says it)."""
    path = field_path(error_location(problem))
    return f"{path}: {error_message(problem)}" if path else error_message(problem)


@dataclass(frozen=True)
class DamagedObject:
    """A stored object a reader left out, and its first problem."""

    kind: str
    namespace: str
    name: str
    problem: str

    def said(self, left_out_of: str) -> str:
        """One line: `Job default/g1-job is damaged and left out of the console: status.failedNodes[0]: must be a
        mapping, got 5`."""
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name} is damaged and left out of {left_out_of}: {self.problem}"


class DamageChecks:
    """Each object's `unshowable_object` answer, worked out once while readers pass the same object again (a watch
    cache shares an unchanged object between its lists); kept per kind for the objects of its last `split`."""

    def __init__(self) -> None:
        self._checked: dict[str, dict[int, tuple[Mapping[str, Any], str | None]]] = {}

    def problem(self, kind: str, item: Mapping[str, Any]) -> str | None:
        """The object's first problem, or None (remembered until the next `split` of its kind)."""
        checked = self._checked.setdefault(kind, {})
        found = checked.get(id(item))
        if found is None or found[0] is not item:  # the entry keeps its object, so its id is not reused while kept
            found = checked[id(item)] = (item, unshowable_object(kind, item))
        return found[1]

    def split(self, kind: str, items: Iterable[T]) -> tuple[list[T], list[DamagedObject]]:
        """The undamaged items, and the damaged ones with their problems; forgets the kind's other objects."""
        previous = self._checked.get(kind, {})
        checked: dict[int, tuple[Mapping[str, Any], str | None]] = {}
        kept, damaged = [], []
        for item in items:
            found = previous.get(id(item))
            problem = found[1] if found is not None and found[0] is item else unshowable_object(kind, item)
            checked[id(item)] = (item, problem)
            if problem is None:
                kept.append(item)
            else:
                meta = item.get("metadata") or {}
                damaged.append(DamagedObject(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""), problem))
        self._checked[kind] = checked
        return kept, damaged
