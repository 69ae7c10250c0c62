"""The policy server's document tools: list, read and explain policies, and the dry run.

All read the PolicySet loaded at start (restart the server to pick up edited files) and nothing
else, so each answer is a pure function of the documents and the arguments. `evaluate_action`
is the same dry run as `kubecrew policy check`: which policies apply, which rules fire and why,
the verdict and any counter-offer, with `text` the report as that command prints it. It takes
what `propose` takes (a resize's per-container requests too, read the same way by `resized`), so
a dry run judges exactly the action a proposal would carry.
"""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp import FastMCP

from core.policy.actions import EvaluationRequest
from core.policy.catalog import LoadedPolicy, PolicySet
from core.policy.documents.common import ActionType
from core.policy.documents.priority import TEAM_LABEL
from core.policy.evaluation import evaluate
from core.policy.explaining import explain, summary
from core.policy.findings import EvaluationReport
from core.policy.reporting import render
from mcp_servers.common.bounds import DEFAULT_LIMIT, page
from mcp_servers.common.tools import READ_ONLY, off_loop
from mcp_servers.common.yamltext import dump
from mcp_servers.policy.tools_base import Deps, Via, action_json, build_action, moment
from mcp_servers.policy.tools_proposals import resized


def register(mcp: FastMCP, deps: Deps) -> None:
    policies = deps.policies

    @mcp.tool(annotations=READ_ONLY)
    def list_policies(
        kind: str = "", limit: int = DEFAULT_LIMIT, offset: int = 0
    ) -> dict[str, Any]:
        """The policy documents this server holds: kind, name, owning team, what each mostly
        says, and the file it came from. kind: only CapacityPolicy, CostPolicy, EgressPolicy,
        ChangePolicy, PriorityPolicy, Ownership, or the three the agents read: NamespaceBlueprint,
        ImagePolicy (Platform; it also judges images a write brings in), NodeReadinessPolicy
        (Cluster Operator)."""
        chosen = [p for p in policies if kind in ("", p.kind)]
        shown = page(chosen, limit=limit, offset=offset, what="policies")
        return {
            "policies": [_row(p) for p in shown.items],
            "total": shown.total,
            "note": shown.note,
            "next": "explain_policy NAME says what one means, rule by rule",
        }

    @mcp.tool(annotations=READ_ONLY)
    def get_policy(name: str, kind: str = "") -> dict[str, Any]:
        """One policy document as YAML (give kind when two kinds share the name)."""
        policy = _get(policies, name, kind)
        document = policy.document.model_dump(mode="json", exclude_unset=True)
        return {**_row(policy), "yaml": dump(document)}

    @mcp.tool(annotations=READ_ONLY)
    def explain_policy(name: str, kind: str = "") -> dict[str, Any]:
        """One policy in words: what it selects, then each rule as evaluation cites it
        (`rule min-replicas`), so a citation in a verdict can be looked up here."""
        policy = _get(policies, name, kind)
        return {**_row(policy), "explanation": explain(policy)}

    @mcp.tool(annotations=READ_ONLY)
    async def evaluate_action(
        action: ActionType,
        target: str,
        namespace: str = "",
        replicas: int | None = None,
        from_replicas: int | None = None,
        pods: int | None = None,
        via: Via = "direct",
        labels: dict[str, str] | None = None,
        metrics: dict[str, float] | None = None,
        live_object: dict[str, Any] | None = None,
        namespace_labels: dict[str, str] | None = None,
        now: str = "",
        resources: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        """Dry-run an action against the policies; nothing is recorded. target is KIND/NAME as
        kubectl writes it (deployment/web, node/worker-1); scale needs replicas (and
        from_replicas unless live_object, the object as read from the cluster, has them);
        drain/evict take pods. metrics feed the CEL rules (cpu_utilization=0.1). Answers the
        stakeholders, the policies that apply, the rules that fired and why, and the verdict:
        allow, counter (with the counter-offer), reject, or escalate; approvals list the
        people an approval rule requires. now: an ISO time (default: now). resources (action
        resize): the per-container requests as propose takes them ({"container": "web",
        "cpu": "100m", "from_cpu": "500m"}); without them a resize is judged as an intent."""
        typed = build_action(
            action,
            target,
            namespace=namespace,
            replicas=replicas,
            from_replicas=from_replicas,
            pods=pods,
            via=via,
            labels=labels,
            actor=str(deps.identity),
        )
        request = EvaluationRequest(
            action=resized(typed, resources),
            target=live_object,
            metrics=metrics or {},
            now=moment(now) or deps.now(),
            namespace_labels=namespace_labels or {},
        )
        report = await off_loop(evaluate, policies, request)
        return _report(report)


def _get(policies: PolicySet, name: str, kind: str) -> LoadedPolicy:
    return policies.get(name, kind=kind or None)


def _row(policy: LoadedPolicy) -> dict[str, Any]:
    return {
        "kind": policy.kind,
        "name": policy.name,
        "team": policy.document.metadata.labels.get(TEAM_LABEL, ""),
        "summary": summary(policy.document),
        "source": str(policy.source) if policy.source else "",
    }


def _report(report: EvaluationReport) -> dict[str, Any]:
    verdict = report.verdict
    answer: dict[str, Any] = {
        "verdict": verdict.outcome,
        "action": action_json(report.action),
        "counter": verdict.counter.model_dump(exclude_none=True) if verdict.counter else None,
        "approvals": [
            {
                "citation": str(need.citation),
                "approvers": need.approvers.describe(),
                "min_approvals": need.min_approvals,
            }
            for need in verdict.approvals
        ],
        "not_before": verdict.not_before.isoformat() if verdict.not_before else None,
        "reasons": verdict.reasons,
        "stakeholders": [
            {"team": h.team, "agent": h.agent, "owner": h.owner} for h in report.stakeholders
        ],
        "applicable": [f"{a.kind} {a.policy}: {a.reason}" for a in report.applicable],
        "fired": [
            {
                "citation": str(f.citation),
                "effect": f.effect,
                "concern": f.concern,
                "why": f.message,
            }
            for f in report.fired()
        ],
        "text": render(report, passed=False),
    }
    answer["next"] = _next(verdict.outcome, bool(verdict.approvals))
    return answer


def _next(outcome: str, approvals: bool) -> str:
    if outcome == "allow" and approvals:
        return "allowed once the approvers grant it: propose it, and a person answers the request"
    if outcome == "allow":
        return "allowed: propose it to record the decision before acting"
    if outcome == "counter":
        return "the counter-offer would be accepted: propose it, or propose this and negotiate"
    if outcome == "reject":
        return "rejected: the fired rules say why; change the action, or ask the policy's team"
    return "a person decides: propose it to open an approval request"
