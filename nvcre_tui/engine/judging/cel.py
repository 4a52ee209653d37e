"""CEL on cel-python, shared by thresholds (variable `value`) and node health (variable `node`).

cel-python has no static type checker, so a compile here also trial-evaluates the program on probe
values to refuse expressions that cannot give a bool or that use undeclared names, at load time.
"""

from __future__ import annotations

import functools
import math

import operator
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import celpy
import celpy.celtypes as ct
import lark
import re2
from celpy.evaluation import CELEvalError, base_functions

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


# celpy alone rejects `value == 900` and `900 <= value` (double vs int): these overrides make them work (and `matches`, below).
FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    name: _cross_numeric(op, name)
    for name, op in (
        ("_==_", operator.eq), ("_!=_", operator.ne), ("_<_", operator.lt),
        ("_<=_", operator.le), ("_>_", operator.gt), ("_>=_", operator.ge),
    )
}

_QUIET_RE2 = re2.Options()
_QUIET_RE2.log_errors = False  # re2 writes each bad pattern to stderr itself: one line of ours says it instead


@functools.lru_cache(maxsize=256)
def _pattern(pattern: str) -> Any:
    return re2.compile(pattern, _QUIET_RE2)


def _matches(text: Any, pattern: Any) -> Any:
    """CEL's `matches()` as celpy's, without re2's own log lines on stderr for a bad pattern."""
    try:
        return ct.BoolType(_pattern(str(pattern)).search(str(text)) is not None)
    except re2.error as error:
        return CELEvalError("match error", error.__class__, error.args)


FUNCTIONS["matches"] = _matches

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


# celpy.Environment() sets the interpreter's recursion limit to 2500 (CEL's nesting minimum). Made at import, it did so
# for every process, and the readers that catch RecursionError (JSON 1000 to 2500 deep parses, then is refused by its
# depth check in other words) ran at that limit: kept so at import, now that the environment waits for an expression.
CEL_RECURSION_LIMIT = 2500
sys.setrecursionlimit(CEL_RECURSION_LIMIT)


@functools.cache
def _environment() -> celpy.Environment:
    """The one CEL environment, made at the first expression: building its parser (the Lark grammar) costs about
    0.1 s of CPU, which every command paid at start, `--help` and a simulated `list` that judge nothing included."""
    return celpy.Environment()


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
    return {str(node.children[0]) for node in _free_references(tree)}


def _free_references(tree: lark.Tree) -> list[lark.Tree]:
    """The identifier nodes that read a name from the environment (see free_identifiers)."""
    found: list[lark.Tree] = []
    stack: list[tuple[Any, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        kids = node.children
        if node.data in ("ident", "dot_ident"):
            name = str(kids[0])
            if name not in bound and name not in _TYPE_NAMES:
                found.append(node)
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


def _is_variable(node: Any, name: str) -> bool:
    """Whether a `member` subtree is just the identifier `name` (`value`, not `value.x` or `(value)`)."""
    while isinstance(node, lark.Tree) and node.data in ("member", "primary") and len(node.children) == 1:
        node = node.children[0]
    return isinstance(node, lark.Tree) and node.data == "ident" and str(node.children[0]) == name


def number_misuses(tree: lark.Tree, variable: str) -> list[str]:
    """What the expression does to `variable` that a number does not allow, in words ("it has no field foo"):
    a field (`value.foo`, also inside `has()`), a method (`value.size()`) or an index (`value[0]`). Inside a macro
    that binds the same name (`[...].all(value, ...)`) the name is the macro's, and is left alone."""
    found: list[str] = []
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, shadowed = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        kids = node.children
        if node.data in ("member_dot", "member_dot_arg", "member_index") and not shadowed and _is_variable(kids[0], variable):
            if node.data == "member_dot":
                found.append(f"it has no field {kids[1]}")
            elif node.data == "member_dot_arg":
                found.append(f"it has no method {kids[1]}()")
            else:
                found.append("it cannot be indexed")
        if node.data == "member_dot_arg" and str(kids[1]) in _MACROS and len(kids) > 2:
            stack.append((kids[0], shadowed))
            args = kids[2].children
            binds = bool(args) and variable in free_identifiers(args[0])
            stack.extend((arg, shadowed or binds) for arg in args[1:])
            continue
        stack.extend((kid, shadowed) for kid in kids)
    return found


def _selects_a_field(node: Any) -> bool:
    """Whether an expression is, under its one-child wrappers, a field selection (`value.x`)."""
    while isinstance(node, lark.Tree) and len(node.children) == 1:
        node = node.children[0]
    return isinstance(node, lark.Tree) and node.data == "member_dot"


def has_misuses(tree: lark.Tree) -> int:
    """How many `has(...)` calls take something other than a field selection: CEL's `has` tests a field's presence
    (`has(value.x)`); `has(value)` is no CEL (cel-python reads it as always true: a threshold that always passed)."""
    count = 0
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        if node.data == "ident_arg" and str(node.children[0]) == "has":
            args = node.children[1].children if len(node.children) > 1 and isinstance(node.children[1], lark.Tree) else []
            count += len(args) != 1 or not _selects_a_field(args[0])
        stack.extend(node.children)
    return count


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


def constant_operands(tree: lark.Tree, variable: str) -> list[lark.Tree]:
    """The largest arithmetic operands that do not read `variable` (`0.0/0.0`, `double("NaN")`, `1e308 * 10.0`):
    values fixed when the expression is written, whatever is measured."""
    # Which subtrees read `variable`, marked once from each reading identifier up to the root: asking
    # free_identifiers of every operand on the way down was quadratic in the nesting (a 2 KB threshold of 1,000
    # parentheses took 20 s to refuse, on the engine's event loop).
    parent: dict[int, lark.Tree] = {}
    walk: list[lark.Tree] = [tree]
    while walk:
        above = walk.pop()
        for kid in above.children:
            if isinstance(kid, lark.Tree):
                parent[id(kid)] = above
                walk.append(kid)
    reading: set[int] = set()
    for ident in _free_references(tree):
        if str(ident.children[0]) != variable:
            continue
        up: lark.Tree | None = ident
        while up is not None and id(up) not in reading:
            reading.add(id(up))
            up = parent.get(id(up))
    found: list[lark.Tree] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        if node.data in ("addition", "multiplication") and id(node) not in reading:
            found.append(node)
            continue
        stack.extend(node.children)
    return found


def _not_finite(tree: lark.Tree, variable: str) -> tuple[lark.Tree, float] | None:
    """The first constant operand that comes out as infinity or NaN, with its value: a bound no measurement can be
    compared with (every comparison with NaN is false: a threshold that fails every node, healthy or not)."""
    for operand in constant_operands(tree, variable):
        result, error = evaluate(_environment().program(operand, functions=FUNCTIONS), {})
        if error is None and isinstance(result, float) and not isinstance(result, bool) and not math.isfinite(result):
            return operand, float(result)
    return None


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


def build_program(expression: str, variable: str, *, number: bool = False) -> celpy.Runner:
    """Parse `expression` and check it reads only `variable`; raise CelExpressionError (one line) if not.

    With `number`, `variable` holds a double: a field, method or index on it (`value.foo`, `has(value.x)`,
    `value.size()`, `value[0]`) is refused here, where short-circuiting cannot hide it from a trial run.
    """
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
        tree = _environment().compile(expression)
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
    if has_misuses(tree):
        raise CelExpressionError(f'CEL expression "{quoted}": has() takes a field selection, such as has({variable}.x)')
    undeclared = sorted(free_identifiers(tree) - {variable})
    if undeclared:
        names = ", ".join(f'"{n}"' for n in undeclared)
        raise CelExpressionError(
            f'CEL expression "{quoted}" refers to undeclared {names}; only "{variable}" is available'
        )
    if (endless_operand := _not_finite(tree, variable)) is not None:
        operand, result = endless_operand
        written = one_line(expression[operand.meta.start_pos:operand.meta.end_pos]) if not operand.meta.empty else "a constant"
        raise CelExpressionError(f'CEL expression "{quoted}": {written} is not a finite number (it evaluates to {result}); '
                                 "no measurement can be compared with it")
    if number:
        misuse = next(iter(number_misuses(tree, variable)), None)
        if misuse is not None:
            raise CelExpressionError(f'CEL expression "{quoted}" cannot be evaluated: {variable} is a number, {misuse}')
    return _environment().program(tree, functions=FUNCTIONS)


def evaluate(program: celpy.Runner, activation: Mapping[str, Any]) -> tuple[Any, Exception | None]:
    """Evaluate; return (result, None) or (None, the error celpy gave or raised). Never raises."""
    result: Any
    try:
        result = program.evaluate(dict(activation))
    except Exception as err:  # noqa: BLE001 - celpy surfaces Python errors too; all become a reason
        result = err
    if isinstance(result, Exception):
        return None, result
    return result, None


def raw_reason(error: Exception) -> str:
    """celpy's own words for an error, on one line (node health shows these)."""
    detail = str(error.args[0]) if error.args else type(error).__name__
    # celpy appends a dump of the whole activation to some messages; keep the first clause.
    return one_line(detail.split(" (in activation")[0])


def run_program(program: celpy.Runner, activation: Mapping[str, Any]) -> tuple[Any, str | None]:
    """Evaluate; return (result, None) or (None, one-line error). Never raises."""
    result, error = evaluate(program, activation)
    return (None, raw_reason(error)) if error is not None else (result, None)


# celpy's names for the operators it found no overload of, as a user writes them.
_OPERATORS = {
    "multiplication_mul": "*", "multiplication_div": "/", "multiplication_mod": "%", "addition_add": "+",
    "addition_sub": "-", "relation_in": "in", "unary_neg": "-", "unary_not": "!", "_[_]": "[]",
    "relation_eq": "==", "relation_ne": "!=", "relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
}
_CELPY_CLASS = re.compile(r"<class '(?:celpy\.celtypes\.)?(\w+)'>")
_CELPY_VALUE = re.compile(r"\b(\w+)Type\(([^()]*)\)")
_CELPY_RULE = re.compile(r"Token\('RULE', '(\w+)'\)")
_NO_OVERLOAD = re.compile(r"found no matching overload for (?:Token\('RULE', '(\w+)'\)|'?([^' ]+)'?) applied to '\((.*)\)'")
_NOT_COMPARABLE = re.compile(r"no such overload: .*?<class '(?:celpy\.celtypes\.)?(\w+)'> [!=]= .*?<class '(?:celpy\.celtypes\.)?(\w+)'>")
# celpy's class names -> CEL's type names
_CEL_NAMES = {
    "BoolType": "bool", "IntType": "int", "UintType": "uint", "DoubleType": "double", "StringType": "string",
    "BytesType": "bytes", "ListType": "list", "MapType": "map", "NullType": "null", "DurationType": "duration",
    "TimestampType": "timestamp", "TypeType": "type", "float": "double", "int": "int", "str": "string", "bool": "bool",
}


def _cel_name(celpy_name: str) -> str:
    return _CEL_NAMES.get(celpy_name, celpy_name.removesuffix("Type").lower())


def _described(celpy_name: str) -> str:
    name = _cel_name(celpy_name)
    return {"double": "a number", "int": "an int", "uint": "a uint"}.get(name, f"a {name}")


def _plain_python(text: str) -> str:
    """A Python or celpy message with celpy's class names and value reprs put as CEL writes them."""
    text = _CELPY_CLASS.sub(lambda m: _cel_name(m.group(1)), text)
    text = _CELPY_RULE.sub(lambda m: _OPERATORS.get(m.group(1), m.group(1)), text)
    text = _CELPY_VALUE.sub(lambda m: m.group(2), text)
    return text.replace("'DoubleType'", "number").replace("DoubleType", "number")


def plain_reason(error: Exception) -> str:
    """What went wrong evaluating a CEL expression, in words for its author: celpy's text is translated,
    never shown as it is ("division by zero", "size() takes a list, map, string or bytes, not a number").
    Never raises: a Job is judged with it."""
    try:
        return _plain_reason(error)
    except Exception:  # noqa: BLE001 - an error of an unforeseen shape still gets a reason
        return "it cannot be evaluated"


def _plain_reason(error: Exception) -> str:
    args = error.args
    message = str(args[0]) if args else ""
    kind = args[1] if len(args) > 1 and isinstance(args[1], type) else type(error)
    detail = " ".join(str(a) for a in args[2]) if len(args) > 2 and isinstance(args[2], tuple) else ""
    function = str(getattr(error, "token", None) or "")
    if isinstance(error, RecursionError):
        return "nested too deeply"
    if issubclass(kind, ZeroDivisionError) or "divide by zero" in message:
        return "division by zero"
    if "does not support field selection" in message:
        subject = _CELPY_CLASS.search(message)
        field_tree = getattr(error, "tree", None)
        name = str(field_tree.children[-1]) if isinstance(field_tree, lark.Tree) and field_tree.children else ""
        what = _described(subject.group(1)) if subject else "this value"
        return f"{what} has no field {name}".rstrip() if name else f"{what} has no fields"
    overload = _NO_OVERLOAD.search(message)
    if overload:
        operator_ = _OPERATORS.get(overload.group(1) or overload.group(2) or "", overload.group(1) or overload.group(2))
        types = [_cel_name(m.group(1)) for m in _CELPY_CLASS.finditer(overload.group(3))]
        if operator_ == "[]" and types:
            return f"{_described(types[0])} cannot be indexed" if types[0] not in ("list", "map") else f"a {types[0]} cannot be indexed by {_described(types[-1])}"
        hint = ""
        if sorted(types) == ["double", "int"]:  # `value / 2`: CEL does not mix them in arithmetic
            literal = next(iter(_int_literals(getattr(error, "tree", None))), None)
            hint = f"; write {literal} as {literal}.0" if literal else "; make the int a double with double()"
        return f"operator {operator_} does not apply to {' and '.join(types)}{hint}"
    if message == "no such overload" and function:
        taken = _ARGUMENTS.get(function)
        # the argument's type, not the one the function makes ("Cannot create TimestampType from DoubleType(2.5)")
        named = [name for name in re.findall(r"([A-Z]\w*Type)\b", detail) if name.lower() != f"{function.lower()}type"]
        given = _described(named[0]) if named else "these arguments"
        if taken:
            return f"{function}() takes {taken}, not {given}"
        return f"{function}() does not take {given}"
    compared = _NOT_COMPARABLE.search(detail)
    if compared:  # `2.0 in [1, 2]`: celpy compares each item, and refuses an int beside a double
        return f"{_cel_name(compared.group(1))} and {_cel_name(compared.group(2))} cannot be compared"
    if message == "no such overload":
        return "the operands' types do not go together"
    if message == "match error":
        return "matches() was given an invalid regular expression"
    if "overflow" in message:
        return f"{function}() is out of range" if "overflow" in detail and function else (
            f"{function}() cannot convert its argument" if function else "a number is out of range")
    if issubclass(kind, IndexError):
        return "a list index is out of range"
    if issubclass(kind, KeyError) or message == "no such key":
        return f"a map has no key {_plain_python(detail)}".rstrip()
    text = _plain_python(one_line(message.split(" (in activation")[0] or type(error).__name__, 100))
    return text or "it cannot be evaluated"


def _int_literals(tree: Any) -> list[str]:
    """The int literals (`2`, not `2u` or `2.0`) in a subtree, left to right."""
    return [str(token) for token in tree.scan_values(lambda t: isinstance(t, lark.Token) and t.type == "INT_LIT")] \
        if isinstance(tree, lark.Tree) else []


# What CEL's functions take, for "size() takes ..., not a number".
_ARGUMENTS = {
    "size": "a list, map, string or bytes", "contains": "strings", "startsWith": "strings", "endsWith": "strings",
    "matches": "strings", "duration": 'a string such as "1s"', "timestamp": 'a string such as "2024-01-01T00:00:00Z"',
}


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
