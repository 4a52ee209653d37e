"""Label and field selectors: parsing both forms, canonical strings, clear errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.store import parse_field_selector, parse_label_selector


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("a=b,c!=d,e in (y,x),f notin (z),g,!h", "a=b,c!=d,e in (x,y),f notin (z),g,!h"),
        ("  a == b ,  nvidia.com/gpu.product in ( H100 , B200 ) ", "a=b,nvidia.com/gpu.product in (B200,H100)"),
        ("a=", "a="),
        ("", ""),
    ],
)
def test_string_form_parses_to_a_canonical_string(text: str, canonical: str) -> None:
    assert str(parse_label_selector(text)) == canonical


def test_dict_form_equals_string_form() -> None:
    as_dict = parse_label_selector({
        "matchLabels": {"app": "nccl"},
        "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b", "a"]},
            {"key": "skip", "operator": "DoesNotExist"},
            {"key": "tier", "operator": "NotIn", "values": ["cpu"]},
            {"key": "gpu", "operator": "Exists"},
        ],
    })
    assert str(as_dict) == "app=nccl,zone in (a,b),!skip,tier notin (cpu),gpu"
    assert parse_label_selector(str(as_dict)) == as_dict


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a in (x", "unbalanced parentheses"),
        ("a in x)", "unbalanced parentheses"),
        ("a in ()", "needs at least one value"),
        ("a=b,,c", "cannot parse ''"),
        ("a b", "cannot parse 'a b'"),
        ("-bad=x", "'-bad' is not a valid label key"),
        ("Bad_Prefix/a=x", "'Bad_Prefix/a' is not a valid label key"),
        ("a=" + "v" * 64, "is not a valid label value"),
        ({"app": "x"}, r"unknown field\(s\) \['app'\]"),
        ({"matchLabels": ["a"]}, "matchLabels must be a mapping"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "In needs at least one value"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "takes no values"),
        ({"matchExpressions": ["a"]}, r"matchExpressions\[0\]: expected a mapping"),
        (42, "expected a string or a mapping"),
    ],
)
def test_bad_selectors_raise_value_error_saying_what_is_wrong(selector: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_label_selector(selector)


def test_not_equal_and_notin_match_objects_without_the_label() -> None:
    for text in ("tier!=gpu", "tier notin (gpu)", "!tier"):
        assert parse_label_selector(text).matches({})
        assert parse_label_selector(text).matches(None)
    assert not parse_label_selector("tier=gpu").matches({})
    assert not parse_label_selector("tier!=gpu").matches({"tier": "gpu"})


KEYS = st.sampled_from(["a", "b", "example.com/c"])
VALUES = st.sampled_from(["x", "y", "z"])
REQUIREMENTS = st.one_of(
    st.tuples(KEYS, st.sampled_from(["=", "!="]), VALUES).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
    st.tuples(KEYS, st.sampled_from(["in", "notin"]), st.lists(VALUES, min_size=1, max_size=3)).map(
        lambda t: f"{t[0]} {t[1]} ({','.join(t[2])})"),
    KEYS.map(lambda k: k),
    KEYS.map(lambda k: f"!{k}"),
)


def _reference_match(term: str, labels: dict[str, str]) -> bool:
    """An independent, naive reading of one selector term."""
    if term.startswith("!"):
        return term[1:] not in labels
    for operator in (" notin ", " in "):
        if operator in term:
            key, values = term.split(operator)
            chosen = labels.get(key) in values.strip("()").split(",")
            return chosen if operator == " in " else not chosen
    if "!=" in term:
        key, value = term.split("!=")
        return labels.get(key) != value
    if "=" in term:
        key, value = term.split("=")
        return labels.get(key) == value
    return term in labels


@settings(max_examples=200, derandomize=True, database=None)
@given(st.lists(REQUIREMENTS, max_size=4), st.dictionaries(KEYS, VALUES))
def test_matching_agrees_with_a_naive_reading_and_survives_rendering(terms: list[str], labels: dict[str, str]) -> None:
    selector = parse_label_selector(",".join(terms))
    expected = all(_reference_match(term, labels) for term in terms)
    assert selector.matches(labels) == expected
    assert parse_label_selector(str(selector)).matches(labels) == expected


def test_field_selectors() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "gpu-01", "hostNetwork": True}}
    assert parse_field_selector("spec.nodeName=gpu-01,metadata.name==p").matches(pod)
    assert parse_field_selector("spec.hostNetwork=true").matches(pod)
    assert parse_field_selector("status.phase=").matches(pod)  # a missing field reads as empty
    assert not parse_field_selector("spec.nodeName!=gpu-01").matches(pod)
    assert str(parse_field_selector(" spec.nodeName == gpu-01 ")) == "spec.nodeName=gpu-01"
    assert parse_field_selector(None).matches(pod) and parse_field_selector("").matches(pod)
    with pytest.raises(ValueError, match="cannot parse 'spec.nodeName'"):
        parse_field_selector("spec.nodeName")
    with pytest.raises(ValueError, match="expected a string"):
        parse_field_selector(["a=b"])  # type: ignore[arg-type]
