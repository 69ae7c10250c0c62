"""Resolution: concerns weighed by priority, ties broken as declared, gates always holding."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy.actions import Action, ReplicaChange, TargetRef
from core.policy.documents.priority import PrioritySpec
from core.policy.findings import Citation, Finding, ReplicaBounds
from core.policy.resolution import resolve

ACTION = Action(
    type="scale",
    target=TargetRef(kind="Deployment", name="web", namespace="shop"),
    replicas=ReplicaChange(from_=5, to=1),
)


def finding(concern: Any, effect: Any, *, team: str | None = None, **extra: Any) -> Finding:
    rule = f"{concern}-{effect}-{team}"
    return Finding(
        citation=Citation(kind="CapacityPolicy", policy="p", rule=rule),
        concern=concern,
        effect=effect,
        message=rule,
        team=team,
        **extra,
    )


def priority(*tie_breaks: Any) -> PrioritySpec:
    return PrioritySpec(order=["security", "reliability", "cost"], tieBreaks=list(tie_breaks))


@pytest.mark.parametrize(
    ("tie_breaks", "opinion", "outcome"),
    [
        (["owner", "most-conservative"], "support", "allow"),
        (["most-conservative"], "reject", "reject"),
        (["escalate"], "escalate", "escalate"),
        ([], "reject", "reject"),
    ],
    ids=["owner-wins", "most-conservative", "escalate", "none-declared"],
)
def test_a_tie_within_a_concern_follows_the_tie_breaks(
    tie_breaks: list[str], opinion: str, outcome: str
) -> None:
    findings = [
        finding("cost", "support", team="shop"),
        finding("cost", "reject", team="finance"),
    ]
    concerns, verdict = resolve(findings, priority(*tie_breaks), ACTION, owner="shop")
    assert concerns[2].concern == "cost" and concerns[2].opinion == opinion
    assert verdict.outcome == outcome


def test_the_owner_tie_break_passes_when_both_sides_are_the_owners() -> None:
    findings = [finding("cost", "support", team="shop"), finding("cost", "reject", team="shop")]
    concerns, _ = resolve(findings, priority("owner", "escalate"), ACTION, owner="shop")
    assert concerns[2].opinion == "escalate"
    assert concerns[2].note == "tie: a person decides (tie-break escalate)"


def test_the_counter_satisfies_every_binding_rejection() -> None:
    findings = [
        finding("reliability", "reject", bounds=ReplicaBounds(minimum=3)),
        finding(None, "reject", bounds=ReplicaBounds(minimum=4, maximum=6)),
        finding(None, "reject", via="pull-request"),
    ]
    _, verdict = resolve(findings, priority(), ACTION, owner=None)
    assert verdict.outcome == "counter"
    assert verdict.counter is not None
    assert (verdict.counter.replicas, verdict.counter.via) == (4, "pull-request")


def test_rejections_that_disagree_leave_no_counter() -> None:
    findings = [
        finding("reliability", "reject", bounds=ReplicaBounds(minimum=3)),
        finding(None, "reject", bounds=ReplicaBounds(maximum=2)),
    ]
    _, verdict = resolve(findings, priority(), ACTION, owner=None)
    assert verdict.outcome == "reject" and verdict.counter is None
    assert verdict.reasons[-1] == "no replica count satisfies every rejecting rule"


def test_an_unevaluable_rule_blocks_allow_but_not_a_counter() -> None:
    error = finding("reliability", "error")
    _, allowed = resolve([error], priority(), ACTION, owner=None)
    assert allowed.outcome == "escalate"
    bounded = finding("reliability", "reject", bounds=ReplicaBounds(minimum=3))
    _, countered = resolve([error, bounded], priority(), ACTION, owner=None)
    assert countered.outcome == "counter"


concerns = st.sampled_from(["security", "reliability", "cost", None])
effects = st.sampled_from(["reject", "support", "warn", "error", "pass"])
bounds = st.none() | st.builds(
    lambda low, span: ReplicaBounds(minimum=low, maximum=None if span is None else low + span),
    st.integers(0, 8),
    st.none() | st.integers(0, 4),
)
findings_lists = st.lists(
    st.builds(
        lambda concern, effect, b, team: finding(
            concern, effect, team=team, bounds=b if effect == "reject" else None
        ),
        concerns,
        effects,
        bounds,
        st.sampled_from(["shop", "platform", None]),
    ),
    max_size=8,
)
orders = st.permutations(["security", "reliability", "cost"])
tie_lists = st.lists(st.sampled_from(["owner", "most-conservative", "escalate"]), unique=True)


@settings(max_examples=300, deadline=None)
@given(found=findings_lists, order=orders, ties=tie_lists, data=st.data())
def test_the_verdict_does_not_depend_on_the_order_of_findings(
    found: list[Finding], order: list[Any], ties: list[Any], data: st.DataObject
) -> None:
    spec = PrioritySpec(order=order, tieBreaks=ties)
    _, verdict = resolve(found, spec, ACTION, owner="shop")
    shuffled = data.draw(st.permutations(found))
    _, again = resolve(shuffled, spec, ACTION, owner="shop")
    assert (again.outcome, again.counter) == (verdict.outcome, verdict.counter)
    gates = [f for f in found if f.concern is None and f.effect == "reject"]
    if gates or any(f.effect == "error" for f in found):
        assert verdict.outcome != "allow"
    if verdict.counter is not None and verdict.counter.replicas is not None:
        for gate in gates:
            assert gate.bounds is not None
            assert gate.bounds.clamp(verdict.counter.replicas) == verdict.counter.replicas
