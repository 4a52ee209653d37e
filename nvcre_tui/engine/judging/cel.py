"""CEL on cel-python, shared by thresholds (variable `value`) and node health (variable `node`).

cel-python has no static type checker, so a compile here also trial-evaluates the program on probe
values to refuse expressions that cannot give a bool or that use undeclared names, at load time.
"""

from __future__ import annotations

import math

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import celpy
import celpy.celtypes as ct
import lark
from celpy.evaluation import base_functions

MAX_EXPRESSION_LENGTH = 2048
MAX_MACRO_DEPTH = 1  # nested all/exists/map/filter: two levels of 480-element lists already take 30 s to run


class CelExpressionError(ValueError):
    """A CEL expression that cannot be used; the message is one line."""


def _numeric(x: Any) -> bool:
    # BoolType is an int subclass but not an IntType, so bools stay out of numeric comparison.
    return isinstance(x, (ct.IntType, ct.UintType, ct.DoubleType))


def _cross_numeric(op: Callable[[Any, Any], bool], name: str) -> Callable[[Any, Any], Any]:
    """Compare int, uint and double by value (cel-go's cross-type numeric comparison); else CEL's own rule."""
    fallback = base_functions[name]

    def compare(a: Any, b: Any) -> Any:
        if _numeric(a) and _numeric(b):
            return ct.BoolType(op(float(a) if isinstance(a, float) else int(a), float(b) if isinstance(b, float) else int(b)))
        return fallback(a, b)

    return compare


# celpy alone rejects `value == 900` and `900 <= value` (double vs int); these overrides make them work.
NUMERIC_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    name: _cross_numeric(op, name)
    for name, op in (
        ("_==_", operator.eq), ("_!=_", operator.ne), ("_<_", operator.lt),
        ("_<=_", operator.le), ("_>_", operator.gt), ("_>=_", operator.ge),
    )
}

# Type names (`double`, `int`, ...) resolve as identifiers in CEL, so they are not undeclared references.
_TYPE_NAMES = frozenset(name for name, fn in base_functions.items() if isinstance(fn, type))
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})

# First match wins: BoolType must come before the int-based types.
_CEL_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (ct.BoolType, "bool"), (ct.UintType, "uint"), (int, "int"), (float, "double"),
    (str, "string"), (bytes, "bytes"), (ct.ListType, "list"), (ct.MapType, "map"),
    (ct.DurationType, "google.protobuf.Duration"), (ct.TimestampType, "google.protobuf.Timestamp"),
    (ct.TypeType, "type"), (type(None), "null_type"),
)

_ENVIRONMENT = celpy.Environment()


def cel_type_name(result: Any) -> str:
    """The CEL name of a result's type (`double`, `int`, `string`, ...)."""
    return next((name for kind, name in _CEL_TYPE_NAMES if isinstance(result, kind)), type(result).__name__)


_LINE_BREAKS = re.compile(r"\s*[\r\n\t]\s*")


def one_line(text: str, limit: int = 120) -> str:
    """Fold line breaks and shorten, so an expression fits in a one-line message."""
    flat = _LINE_BREAKS.sub(" ", text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _parse_reason(err: Exception) -> str:
    """A one-line reason from a CELParseError (celpy keeps lark's exception as the cause)."""
    cause = err.__cause__ or err.__context__
    where = f"line {getattr(err, 'line', '?')}, column {getattr(err, 'column', '?')}"
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        if cause.token.type == "$END":
            return "unexpected end of expression"
        return f'unexpected "{cause.token}" at {where}'
    if isinstance(cause, lark.exceptions.UnexpectedCharacters):
        return f'unexpected character "{cause.char}" at {where}'
    return f"syntax error at {where}"


def free_identifiers(tree: lark.Tree) -> set[str]:
    """Names the expression reads from its environment (not fields, functions, type names or macro variables)."""
    found: set[str] = set()
    stack: list[tuple[Any, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        kids = node.children
        if node.data in ("ident", "dot_ident"):
            name = str(kids[0])
            if name not in bound and name not in _TYPE_NAMES:
                found.add(name)
        elif node.data == "member_dot_arg" and str(kids[1]) in _MACROS and len(kids) > 2:
            # receiver.exists(x, pred): `x` is bound inside the macro's remaining arguments.
            stack.append((kids[0], bound))
            args = kids[2].children
            inner = bound | free_identifiers(args[0]) if args else bound
            stack.extend((arg, inner) for arg in args[1:])
        else:
            # Field names and function names are Tokens, not Trees, so only sub-expressions are visited.
            stack.extend((kid, bound) for kid in kids)
    return found


def float_literals(tree: lark.Tree) -> list[str]:
    """The expression's floating-point literals as written ("1e309"); a walk with a stack, as deep trees are."""
    found: list[str] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, lark.Tree):
            stack.extend(node.children)
        elif isinstance(node, lark.Token) and node.type == "FLOAT_LIT":
            found.append(str(node))
    return found


def macro_depth(tree: lark.Tree) -> int:
    """How deep comprehension macros (all, exists, map, ...) nest: each level multiplies the steps an evaluation
    takes by its list's length."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        if node.data == "member_dot_arg" and len(node.children) > 2 and str(node.children[1]) in _MACROS:
            # receiver.all(x, predicate): the predicate runs per element (nested), the receiver once (a chain)
            deepest = max(deepest, depth + 1)
            stack.append((node.children[0], depth))
            stack.extend((kid, depth + 1) for kid in node.children[2:])
            continue
        stack.extend((kid, depth) for kid in node.children)
    return deepest


def build_program(expression: str, variable: str) -> celpy.Runner:
    """Parse `expression` and check it reads only `variable`; raise CelExpressionError (one line) if not."""
    if not isinstance(expression, str):
        raise CelExpressionError(f"CEL expression must be a string, got {type(expression).__name__}")
    if not expression.strip():
        raise CelExpressionError("CEL expression is empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CelExpressionError(
            f"CEL expression is {len(expression)} characters; the limit is {MAX_EXPRESSION_LENGTH}"
        )
    quoted = one_line(expression)
    try:
        tree = _ENVIRONMENT.compile(expression)
    except celpy.CELParseError as err:
        raise CelExpressionError(f'invalid CEL expression "{quoted}": {_parse_reason(err)}') from None
    except RecursionError:
        raise CelExpressionError(f'invalid CEL expression "{quoted}": nested too deeply') from None
    depth = macro_depth(tree)
    if depth > MAX_MACRO_DEPTH:
        # Kubernetes bounds a rule's cost before running it; nesting is what makes a short rule run for hours.
        raise CelExpressionError(f'CEL expression "{quoted}" nests comprehension macros {depth} deep; the limit is {MAX_MACRO_DEPTH}')
    endless = next((literal for literal in float_literals(tree) if not math.isfinite(float(literal))), None)
    if endless is not None:  # 1e309 reads as infinity: a threshold no measurement can meet, or one every measurement meets
        raise CelExpressionError(f'CEL expression "{quoted}": {endless} is beyond any double (it reads as infinity)')
    undeclared = sorted(free_identifiers(tree) - {variable})
    if undeclared:
        names = ", ".join(f'"{n}"' for n in undeclared)
        raise CelExpressionError(
            f'CEL expression "{quoted}" refers to undeclared {names}; only "{variable}" is available'
        )
    return _ENVIRONMENT.program(tree, functions=NUMERIC_RELATIONS)


def run_program(program: celpy.Runner, activation: Mapping[str, Any]) -> tuple[Any, str | None]:
    """Evaluate; return (result, None) or (None, one-line error). Never raises."""
    result: Any
    try:
        result = program.evaluate(dict(activation))
    except Exception as err:  # noqa: BLE001 - celpy surfaces Python errors too; all become a reason
        result = err
    if isinstance(result, Exception):
        detail = str(result.args[0]) if result.args else type(result).__name__
        # celpy appends a dump of the whole activation to some messages; keep the first clause.
        return None, one_line(detail.split(" (in activation")[0])
    return result, None


def require_bool(
    program: celpy.Runner, expression: str, probes: Sequence[Mapping[str, Any]], *, must_evaluate: bool
) -> None:
    """Trial-run the program on probe inputs; refuse it when a probe gives something other than a bool.

    With `must_evaluate`, also refuse it when no probe evaluates at all (`size(value) > 1`): that is
    what cel-go's type checker reports as "no matching overload".
    """
    errors: list[str] = []
    for activation in probes:
        result, error = run_program(program, activation)
        if error is not None:
            errors.append(error)
        elif not isinstance(result, ct.BoolType):
            raise CelExpressionError(
                f'CEL expression "{one_line(expression)}" must give a bool, got {cel_type_name(result)}'
            )
    if must_evaluate and len(errors) == len(probes):
        raise CelExpressionError(f'invalid CEL expression "{one_line(expression)}": {errors[0]}')


# ----------------------------------------------------------------------------- thresholds
