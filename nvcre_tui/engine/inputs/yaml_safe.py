"""PyYAML's SafeLoader, stricter: duplicate keys, aliases and deep nesting are errors with a line.

A duplicated key is a typo PyYAML silently resolves to the last value; aliases let a few lines expand
to a billion nodes (and no manifest needs them); nesting deeper than MAX_DEPTH would exhaust the
recursion of the composer and of everything that walks the result.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import yaml
import yaml.reader
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.error import Mark
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs.limits import MAX_DEPTH

_MERGE = "tag:yaml.org,2002:merge"


_SURROGATE = re.compile("[\ud800-\udfff]")
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
# Plain numbers YAML 1.1 (PyYAML) reads otherwise than YAML 1.2, JSON and Kubernetes' YAML do: base 60 (1:30 is 90,
# and text to kubectl) and a leading 0 (017 is octal 15 here, 17 in YAML 1.2). Refused: nobody means both.
_AMBIGUOUS_NUMBER = re.compile(r"[-+]?(?:[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|0[0-7_]+)")


class DepthLimitedLoader(yaml.SafeLoader):
    """SafeLoader refusing nesting past MAX_DEPTH. Alone, for a file another tool reads as well (a kubeconfig:
    kubectl takes its aliases and repeated keys); nvcre's own inputs are read with StrictLoader."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        nested = isinstance(event, (MappingStartEvent, SequenceStartEvent))
        if nested:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            if nested:
                self._depth -= 1


class StrictLoader(DepthLimitedLoader):
    """SafeLoader refusing duplicate keys, aliases and nesting past MAX_DEPTH."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            # cast: this loader's parser is the pure-Python one, whose marks are yaml.error.Marks (the stubs' Event
            # types start_mark as either parser's Mark, the C one's _yaml.Mark too)
            raise ComposerError(None, None, f"aliases (*{event.anchor}) are not accepted; write the value out",
                                cast(Mark | None, event.start_mark))
        return super().compose_node(parent, index)

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        if isinstance(node, ScalarNode) and node.tag in _NUMBER_TAGS and _AMBIGUOUS_NUMBER.fullmatch(node.value):
            how = "base 60, text to kubectl" if ":" in node.value else "octal, a decimal number in YAML 1.2"
            shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            try:
                read = str(super().construct_object(node, deep))
            except (ValueError, OverflowError):
                read = "a number"
            read = read if len(read) <= 40 else "a number of " + str(len(read)) + " digits"
            raise ConstructorError(None, None, f"{shown} is {read} in YAML 1.1 ({how}): write the number you mean "
                                               "without ':' or a leading 0, or quote it", node.start_mark)
        try:
            value = super().construct_object(node, deep)
        except (ValueError, OverflowError) as error:  # e.g. 2026-13-45 as a timestamp, an int of 10,000 digits
            if isinstance(node.value, str) and "digits" in str(error):  # Python's int-string limit, said in our words
                raise ConstructorError(None, None, f"number too long: {sum(c.isdigit() for c in node.value)} digits", node.start_mark) from None
            shown = f" {node.value[:40]!r}{'...' if len(node.value) > 40 else ''}" if isinstance(node.value, str) else ""
            raise ConstructorError(None, None, f"invalid value{shown}: {error}", node.start_mark) from None
        if isinstance(value, float) and math.isinf(value) and "inf" not in node.value.lower():  # 1e400: not .inf, written
            raise ConstructorError(None, None, f"{node.value[:40]} is beyond a float's range", node.start_mark)
        if isinstance(value, str) and _SURROGATE.search(value):
            # "\ud83d\ude80" (JSON's escape of one emoji, as json.dumps writes it) is a pair: joined into its
            # character. A lone "\ud800" is no text (UTF-8 cannot encode it; the run's first store write failed).
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
            if lone := _SURROGATE.search(value):
                raise ConstructorError(None, None, f"a lone surrogate \\u{ord(lone[0]):04x} is not text", node.start_mark)
        return value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):  # JSON and every Kubernetes field name are text
                said = (f"key {key_node.value!r} is read as {_read_as(key)}, not text: put it in quotes"
                        if isinstance(key_node, ScalarNode) else "a key must be text, not a list or mapping")
                raise ConstructorError(None, None, said, key_node.start_mark)
            try:
                earlier = first_line.get(key)
            except TypeError:  # an unhashable key: the base class names it
                continue
            if earlier is not None:
                raise ConstructorError(None, None, f"duplicate key {key!r} (first on line {earlier})", key_node.start_mark)
            first_line[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def _read_as(value: Any) -> str:
    """What YAML made of an unquoted scalar, in words: `null`, `yes` and `2020-01-01` are no text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


# YAML 1.2, JSON, Go and Kubernetes' YAML read 1e10 as a number; PyYAML's YAML 1.1 floats need a dot (1.0e10) and read
# it as text, which a numeric field then refuses as "got '1e10'".
StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
                                   list("-+0123456789"))


def _where(name: str, error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    return f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name


def parse_yaml_documents(name: str, text: str) -> list[Any]:
    """Every non-empty YAML document in `text`; every problem is one InputError line naming file and line."""
    loader = None
    try:
        loader = StrictLoader(text)  # its reader refuses control characters already here
        documents = []
        while loader.check_data():
            document = loader.get_data()
            if document is not None:
                documents.append(document)
        return documents
    except yaml.MarkedYAMLError as error:
        raise InputError(f"{_where(name, error)}: invalid YAML: {error.problem or error.context}") from None
    except yaml.reader.ReaderError as error:  # a character YAML refuses (NUL, a C0 control): where, as other errors
        line = text.count("\n", 0, error.position) + 1
        column = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
        character = error.character if isinstance(error.character, str) else chr(error.character)
        raise InputError(f"{name}:{line}:{column}: invalid YAML: character {ord(character):#06x} is not allowed; "
                         "remove it (or write it escaped in a double-quoted string)") from None
    except yaml.YAMLError as error:
        raise InputError(f"{name}: invalid YAML: {' '.join(str(error).split())}") from None
    except (ValueError, OverflowError) as error:  # e.g. a timestamp like 2026-13-45, an int of 10,000 digits
        raise InputError(f"{name}: invalid YAML value: {error}") from None
    finally:
        if loader is not None:
            loader.dispose()


def plain_scalar(text: str) -> Any:
    """What `key: text` means in a manifest: 3 is an int, while ٣ (int() reads it as 3) and 3.0 are not.

    The loader's own resolver and constructor decide, so a form field takes exactly what a file would.
    A value the constructor refuses (an int of 10,000 digits) stays text: the model then names the field."""
    loader = StrictLoader("")
    try:
        tag = loader.resolve(ScalarNode, text, (True, False))
        return loader.construct_object(ScalarNode(tag, text), deep=True)
    except yaml.YAMLError:
        return text
    finally:
        loader.dispose()
