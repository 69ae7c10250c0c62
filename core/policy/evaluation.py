"""The dry run: which policies apply to an action, which of their rules fire and why, the verdict.

`evaluate` is what the policy MCP server's "evaluate an action" tool and `kubecrew policy check`
expose, and what each stakeholder will run on a proposal. It selects policies by their
selectors (namespace, kind, labels; namespace classes for egress), runs each kind's check
(`checks/`) with one CEL context, derives the stakeholders from Ownership, and resolves the
findings by the PriorityPolicy (`resolution`). It reads nothing but its arguments: the same
policies and request give the same report, which is what makes it citable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.policy.actions import EvaluationRequest
from core.policy.catalog import PolicySet
from core.policy.checks import capacity, change, cost, egress, images
from core.policy.checks.base import Scope
from core.policy.documents import (
    CapacityPolicy,
    ChangePolicy,
    CostPolicy,
    EgressPolicy,
    ImagePolicy,
    Ownership,
    PolicyDocument,
)
from core.policy.findings import Applicability, EvaluationReport, Finding, Stakeholder
from core.policy.resolution import resolve

_CHECKS: dict[type[Any], Callable[[Scope, Any], list[Finding]]] = {
    CapacityPolicy: capacity.check,
    CostPolicy: cost.check,
    EgressPolicy: egress.check,
    ChangePolicy: change.check,
    ImagePolicy: images.check,
}


def evaluate(policies: PolicySet, request: EvaluationRequest) -> EvaluationReport:
    request = request.completed()
    scope = Scope.of(request)
    applicable: list[Applicability] = []
    findings: list[Finding] = []
    for loaded in policies:
        reason = applies(loaded.document, request)
        check = _CHECKS.get(type(loaded.document))
        if reason is None or check is None:
            continue
        applicable.append(Applicability(kind=loaded.kind, policy=loaded.name, reason=reason))
        findings += check(scope, loaded.document)
    holders = stakeholders(policies, request)
    owner = next((holder.team for holder in holders if holder.owner), None)
    declared, priority = policies.priority, policies.priorities
    concerns, verdict = resolve(findings, priority, request.action, owner=owner)
    return EvaluationReport(
        action=request.action,
        priority=list(priority.ranked()),
        priority_source=(
            f"PriorityPolicy {declared.metadata.name}" if declared else "the built-in default"
        ),
        applicable=applicable,
        stakeholders=holders,
        findings=findings,
        concerns=concerns,
        verdict=verdict,
    )


def applies(document: PolicyDocument, request: EvaluationRequest) -> str | None:
    """Why `document` applies to the request's target, or None when it does not."""
    target = request.action.target
    if isinstance(document, EgressPolicy):
        # Only a NetworkPolicy changes egress; the policy's own rules may judge anything there.
        about_egress = target.kind == "NetworkPolicy" or bool(document.spec.rules)
        if not about_egress or not document.spec.selects(
            target.namespace, request.namespace_class()
        ):
            return None
        return f"governs egress of namespace {target.namespace}"
    if isinstance(document, ImagePolicy):
        # It judges the images an action brings in, wherever the policy reaches.
        if not request.action.images or not document.spec.selects(
            target.namespace or "", request.namespace_class()
        ):
            return None
        return f"governs the images of namespace {target.namespace}"
    if isinstance(document, CapacityPolicy | CostPolicy | ChangePolicy):
        selector = document.spec.selector
        if not selector.matches(
            kind=target.kind, namespace=target.namespace, labels=request.labels()
        ):
            return None
        return f"selects {selector.describe()}"
    return None


def stakeholders(policies: PolicySet, request: EvaluationRequest) -> list[Stakeholder]:
    """Every team whose Ownership selects the target; the most specific one is the owner."""
    target, labels = request.action.target, request.labels()
    scored = []
    for ownership in policies.documents(Ownership):
        score = ownership.spec.specificity(
            kind=target.kind, namespace=target.namespace, labels=labels
        )
        if score >= 0:
            scored.append((-score, ownership.metadata.name, ownership))
    scored.sort(key=lambda entry: entry[:2])
    return [
        Stakeholder(
            team=ownership.spec.team,
            ownership=ownership.metadata.name,
            agent=ownership.spec.agent,
            humans=ownership.spec.humans,
            owner=index == 0,
        )
        for index, (_, _, ownership) in enumerate(scored)
    ]
