"""`includes`, the one partial match objectives use: a map includes every key given with a value
it includes, a list each item given in one of its own items (in any order), a scalar is equal,
and a boolean is no number."""

from __future__ import annotations

from typing import Any

import pytest

from kubecrew.evals.observe import includes

TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Exists"},
]


@pytest.mark.parametrize(
    ("whole", "part", "held"),
    [
        pytest.param(TOLERATIONS, [{"key": "dedicated", "value": "gpu"}], True, id="list-item"),
        pytest.param(TOLERATIONS, [{"key": "spot"}, {"key": "dedicated"}], True, id="any-order"),
        pytest.param(TOLERATIONS, [{"key": "dedicated", "value": "cpu"}], False, id="one-off"),
        pytest.param(TOLERATIONS, [{}], True, id="any-item"),
        pytest.param([], [{}], False, id="no-item"),
        pytest.param(None, [{"key": "spot"}], False, id="absent-list"),
        pytest.param({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, True, id="nested-map"),
        pytest.param({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, False, id="missing-key"),
        pytest.param({"a": 1}, {}, True, id="empty-part"),
        pytest.param({"spec": {"hard": {"pods": "10"}}}, {"spec": {"hard": {"pods": 10}}}, False,
                     id="string-is-no-number"),
        pytest.param(1, True, False, id="true-is-no-one"),
        pytest.param(True, True, True, id="true"),
        pytest.param("0 2 * * *", "0 2 * * *", True, id="scalar"),
    ],
)  # fmt: skip
def test_a_part_is_included_where_the_whole_says_at_least_that(
    whole: Any, part: Any, held: bool
) -> None:
    assert includes(whole, part) is held
