"""CEL conditions: what the documented input offers, and failures as results, never raises."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.policy import cel
from core.policy.checks.base import Scope
from tests.support.policies import request

LIVE = {
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
    "spec": {
        "replicas": 5,
        "template": {"spec": {"containers": [{"name": "web", "image": "shop/web:1.4"}]}},
    },
}


@pytest.fixture(scope="module")
def scope() -> Scope:
    made = request(
        "scale",
        "deployment/web",
        replicas=(5, 1),
        metrics={"cpu_utilization": 0.1, "pods": 5},
        live=LIVE,
        now=datetime(2026, 12, 2, 23, 30, tzinfo=UTC),
        actor="cluster-operator",
    )
    return Scope.of(made)


HOLDING = [
    'action.type == "scale" && action.verb == "patch"',
    "action.replicas.from == 5 && action.replicas.to < action.replicas.from",
    'action.target.kind == "Deployment" && action.target.namespace == "shop"',
    'action.labels.app == "web" && "tier" in action.labels',
    'action.via == "direct" && action.actor.startsWith("cluster")',
    "has(action.replicas) && !has(action.pods)",
    "metrics.cpu_utilization < 0.2 && metrics.pods >= 5 && metrics.pods * 2.0 == 10.0",
    "size(target.spec.template.spec.containers) == 1",
    'target.spec.template.spec.containers.all(c, c.image.contains(":"))',
    'target.metadata.name.matches("^w[a-z]+$") && target.metadata.name.endsWith("eb")',
    'target.metadata.name.upperAscii() == "WEB" && "a,b".split(",").size() == 2',
    "now.getHours() == 23 && now.getDayOfWeek() == 3",
    'now > timestamp("2026-12-01T00:00:00Z") && now - duration("1h") < now',
    "math.greatest(action.replicas.to, 3) == 3",
]


@pytest.mark.parametrize("text", HOLDING)
def test_the_documented_input_supports_the_condition(scope: Scope, text: str) -> None:
    assert cel.evaluate(text, scope.variables) == cel.Outcome(True)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("action.pods > 3", "no field 'pods' in the input"),
        ('target.metadata.labels["missing"] == "x"', "no field 'missing' in the input"),
        ("action.replicas.to", "the condition returned 1, not true or false"),
        ("1 / (action.replicas.to - 1) > 0", "division by zero"),
        (
            "metrics.pods * 2 > 1",
            "Unsupported operation: float * int (CEL mixes no types in arithmetic: write 10.0 "
            "for a double, or use double(x))",
        ),
    ],
    ids=["absent-field", "absent-key", "not-a-boolean", "division", "int-times-double"],
)
def test_an_evaluation_failure_is_a_result(scope: Scope, text: str, reason: str) -> None:
    assert cel.evaluate(text, scope.variables) == cel.Outcome(None, reason)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("action.replicas.to <", "CEL syntax error at column 21"),
        ("acton.type == 'x'", "unknown variable 'acton'"),
        ("action.type.lower() == 'x'", "unknown CEL function 'lower'"),
        ("   ", "empty CEL condition"),
    ],
)
def test_a_bad_condition_is_refused_at_load_time(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match="^" + reason):
        cel.check(text)


def test_a_condition_is_compiled_once() -> None:
    text = "action.replicas.to < 3 && metrics.cpu_utilization < 0.2"
    assert cel.compile_condition(text) is cel.compile_condition(text)


def test_bound_variables_of_macros_are_not_unknown() -> None:
    text = "[1, 2].exists(x, x > 1) && {'a': 1}.all(k, k != '')"
    assert cel.check(text) == text
