"""timeoutPerJob and measurementTimeout: no time at all (under a second) is refused (it blamed every node with Timeout), and a value
YAML read as a date, a time or a number is named as the duration it should be, not as a "string" it is not."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import ValidationError

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.validation import validation_messages


def _refusal(options: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        CategoryOptions.model_validate(options)
    return validation_messages(caught.value, "cert.yaml")


@pytest.mark.parametrize("field", ["timeoutPerJob", "measurementTimeout"])
@pytest.mark.parametrize("zero", ["0s", "0h0m", "0.0s", "0ms", "1ns", "999ms"])
def test_no_time_at_all_is_refused(field: str, zero: str) -> None:
    assert _refusal({field: zero}) == [f"cert.yaml: {field}: must be at least 1s, got {zero!r}"]


@pytest.mark.parametrize(
    ("written", "shown"),
    [(datetime.date(2019, 1, 1), "2019-01-01"), (datetime.datetime(2019, 1, 1, 3, 4), "2019-01-01T03:04:00"),
     (30, "30"), (1.5, "1.5"), (True, "True")],
)
def test_a_value_yaml_did_not_read_as_text_is_named_as_a_duration(written: object, shown: str) -> None:
    assert _refusal({"timeoutPerJob": written}) == [
        f"cert.yaml: timeoutPerJob: must be a duration such as 90s, 15m or 1h30m, got {shown}"]


@pytest.mark.parametrize("duration", ["1s", "90s", "1h30m", "8784h"])
def test_any_time_of_a_second_or_more_is_taken(duration: str) -> None:
    assert CategoryOptions.model_validate({"timeoutPerJob": duration, "measurementTimeout": duration}).timeout_per_job == duration
