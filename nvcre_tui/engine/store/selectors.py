"""Kubernetes label selectors (string and dict form) and simple field selectors: parse once, match many."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.errors import BadValue
from nvcre_tui.engine.names import is_label_key, is_label_name

__all__ = [
    "Requirement",
    "LabelSelector",
    "parse_label_selector",
    "FieldSelector",
    "parse_field_selector",
]

_TOKEN = r"[^\s,()!=]+"

# operator -> (matches(labels, key, values), how it renders)
_OPERATORS: dict[str, tuple[Callable[[Mapping[str, str], str, frozenset[str]], bool], Callable[..., str]]] = {
    "=": (lambda ls, k, vs: k in ls and ls[k] in vs, lambda k, vs: f"{k}={_one(vs)}"),
    "!=": (lambda ls, k, vs: ls.get(k) not in vs, lambda k, vs: f"{k}!={_one(vs)}"),
    "in": (lambda ls, k, vs: k in ls and ls[k] in vs, lambda k, vs: f"{k} in ({','.join(sorted(vs))})"),
    "notin": (lambda ls, k, vs: ls.get(k) not in vs, lambda k, vs: f"{k} notin ({','.join(sorted(vs))})"),
    "exists": (lambda ls, k, vs: k in ls, lambda k, vs: k),
    "!": (lambda ls, k, vs: k not in ls, lambda k, vs: f"!{k}"),
}
# matchExpressions operator -> string operator, and whether it takes values
_EXPRESSION_OPERATORS = {"In": ("in", True), "NotIn": ("notin", True), "Exists": ("exists", False),
                         "DoesNotExist": ("!", False)}


def _one(values: frozenset[str]) -> str:
    return next(iter(values))


def _check_key(key: str, where: str) -> str:
    if not is_label_key(key):
        raise BadValue(
            f"{where}: {key!r} is not a valid label key ([prefix/]name, name up to 63 of A-Z a-z 0-9 - _ .)"
        )
    return key


def _check_value(value: object, where: str) -> str:
    if not isinstance(value, str) or (value and not is_label_name(value)):
        raise BadValue(f"{where}: {value!r} is not a valid label value (up to 63 of A-Z a-z 0-9 - _ ., or empty)")
    return value


@dataclass(frozen=True)
class Requirement:
    """One term of a selector: `key <operator> values`, operator one of = != in notin exists !."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return _OPERATORS[self.operator][0](labels, self.key, self.values)

    def __str__(self) -> str:
        return _OPERATORS[self.operator][1](self.key, self.values)


@dataclass(frozen=True)
class LabelSelector:
    """All requirements must hold; no requirements selects everything. `str()` is the canonical string form."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        found = labels or {}
        return all(r.matches(found) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth not in (0, 1):
            raise BadValue(f"label selector {text!r}: unbalanced parentheses")
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise BadValue(f"label selector {text!r}: unbalanced parentheses")
    return [*terms, current]


_TERM_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"!\s*({_TOKEN})"), "!"),
    (re.compile(rf"({_TOKEN})\s+(in|notin)\s*\(([^()]*)\)"), ""),
    (re.compile(rf"({_TOKEN})\s*(==|!=|=)\s*([^\s,()!=]*)"), ""),
    (re.compile(rf"({_TOKEN})"), "exists"),
)


def _parse_term(term: str, text: str) -> Requirement:
    where = f"label selector {text!r}"
    for pattern, fixed_operator in _TERM_PATTERNS:
        match = pattern.fullmatch(term.strip())
        if match is None:
            continue
        key = _check_key(match.group(1), where)
        if fixed_operator:
            return Requirement(key, fixed_operator)
        operator = "=" if match.group(2) == "==" else match.group(2)
        raw = match.group(3).split(",") if operator in ("in", "notin") else [match.group(3)]
        values = frozenset(_check_value(v.strip(), where) for v in raw)
        if operator in ("in", "notin") and values == {""} and not match.group(3).strip():
            raise BadValue(f"{where}: {key} {operator} () needs at least one value")
        return Requirement(key, operator, values)
    raise BadValue(
        f"{where}: cannot parse {term.strip()!r}; expected key, !key, key=value, key!=value, "
        "key in (a,b) or key notin (a,b)"
    )


def _parse_string(text: str) -> LabelSelector:
    if not text.strip():
        return LabelSelector()
    return LabelSelector(tuple(_parse_term(term, text) for term in _split_terms(text)))


def _parse_mapping(data: Mapping[str, Any]) -> LabelSelector:
    unknown = set(data) - {"matchLabels", "matchExpressions"}
    if unknown:
        raise BadValue(f"label selector: unknown field(s) {sorted(unknown)}; expected matchLabels, matchExpressions")
    match_labels = data.get("matchLabels") or {}
    expressions = data.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise BadValue(f"label selector: matchLabels must be a mapping of key: value, got {match_labels!r}")
    if not isinstance(expressions, list):
        raise BadValue(f"label selector: matchExpressions must be a list, got {expressions!r}")
    requirements = [
        Requirement(_check_key(k, "label selector matchLabels"), "=",
                    frozenset({_check_value(v, f"label selector matchLabels.{k}")}))
        for k, v in match_labels.items()
    ]
    for index, expression in enumerate(expressions):
        requirements.append(_parse_expression(expression, f"label selector matchExpressions[{index}]"))
    return LabelSelector(tuple(requirements))


def _parse_expression(expression: object, where: str) -> Requirement:
    if not isinstance(expression, Mapping):
        raise BadValue(f"{where}: expected a mapping with key, operator, values; got {expression!r}")
    key = expression.get("key")
    op_name = expression.get("operator")
    if not isinstance(key, str):
        raise BadValue(f"{where}: key must be a string, got {key!r}")
    if op_name not in _EXPRESSION_OPERATORS:
        raise BadValue(f"{where}: operator {op_name!r} is not one of {', '.join(_EXPRESSION_OPERATORS)}")
    operator, takes_values = _EXPRESSION_OPERATORS[op_name]
    values = expression.get("values") or []
    if not isinstance(values, list):
        raise BadValue(f"{where}: values must be a list, got {values!r}")
    if takes_values and not values:
        raise BadValue(f"{where}: operator {op_name} needs at least one value")
    if not takes_values and values:
        raise BadValue(f"{where}: operator {op_name} takes no values, got {values!r}")
    return Requirement(_check_key(key, where), operator, frozenset(_check_value(v, where) for v in values))


def parse_label_selector(selector: str | Mapping[str, Any] | LabelSelector | None) -> LabelSelector:
    """Parse the string form (`a=b,c!=d,e in (x,y),f notin (z),g,!h`) or the dict form
    {matchLabels, matchExpressions}. None or empty selects everything. Bad input -> ValueError."""
    if selector is None:
        return LabelSelector()
    if isinstance(selector, LabelSelector):
        return selector
    if isinstance(selector, str):
        return _parse_string(selector)
    if isinstance(selector, Mapping):
        return _parse_mapping(selector)
    raise BadValue(f"label selector: expected a string or a mapping, got {type(selector).__name__}")


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    """The value at a dotted path rendered as the API server does; a missing field is the empty string."""
    current: Any = obj
    for part in path.split("."):
        current = current.get(part) if isinstance(current, Mapping) else None
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


@dataclass(frozen=True)
class FieldSelector:
    """Terms `path=value` / `path!=value` over dotted paths (`metadata.name`, `spec.nodeName`), all must hold."""

    terms: tuple[tuple[str, bool, str], ...] = ()  # (path, equal?, value)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all((_field_value(obj, path) == value) == equal for path, equal, value in self.terms)

    def __str__(self) -> str:
        return ",".join(f"{path}{'=' if equal else '!='}{value}" for path, equal, value in self.terms)


_FIELD_TERM = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*)\s*(==|!=|=)\s*([^,]*?)\s*")


def parse_field_selector(selector: str | None) -> FieldSelector:
    """Parse `metadata.name=a,status.phase!=Running`; None or empty selects everything."""
    if selector is not None and not isinstance(selector, str):
        raise BadValue(f"field selector: expected a string, got {type(selector).__name__}")
    if selector is None or not selector.strip():
        return FieldSelector()
    terms = []
    for term in selector.split(","):
        match = _FIELD_TERM.fullmatch(term)
        if match is None:
            raise BadValue(
                f"field selector {selector!r}: cannot parse {term.strip()!r}; expected path=value or path!=value"
            )
        terms.append((match.group(1), match.group(2) != "!=", match.group(3)))
    return FieldSelector(tuple(terms))
