"""Node readiness: a node is offered to workloads only while its declared rules hold (the
`node-readiness` skill as tool calls).

The rules are the policy server's NodeReadinessPolicy documents (`list_policies`, `get_policy`),
read back into the store's own model, so a rule means here what it means in the file. For each
node a policy selects, every rule is checked against live state: the kubelet's Ready (always
required, never enough), a Ready pod of a DaemonSet or with given labels running on that node, a
node condition with the given status. All pass: the policy's taint is removed; one fails: it is
put back (or kept). Each check carries its evidence, so the answer cites the rule that failed and
what was seen. The taint writes go through the kube server's gate like any other node write.

Knows no Kubernetes client; reads and writes only through the tools.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, TypeVar

import yaml
from pydantic import ValidationError

from agents.cluster_operator.nodes import said
from agents.runtime.errors import AgentError
from agents.runtime.toolbox import Toolbox
from core.policy.documents.patch import PatchPolicy
from core.policy.documents.readiness import NodeReadinessPolicy, ReadinessRule

KIND = "NodeReadinessPolicy"
D = TypeVar("D", NodeReadinessPolicy, PatchPolicy)
NODE_FIELDS = ["metadata.name", "metadata.labels", "spec.taints", "status.conditions"]
POD_FIELDS = [
    "metadata.name", "metadata.labels", "metadata.ownerReferences", "metadata.deletionTimestamp",
    "status.conditions",
]  # fmt: skip
Action = Literal["removed-taint", "added-taint", "kept-taint", "ready", "not-ready"]


class Check(TypedDict):
    rule: str  # the citation: "NodeReadinessPolicy gpu-nodes / rule device-plugin"
    passed: bool
    evidence: str  # what was seen on the node


class Readiness(TypedDict):
    node: str
    policy: str
    taint: str  # key:effect
    ready: bool  # every rule holds
    action: Action  # what the patrol did to the taint
    checks: list[Check]


async def policies(toolbox: Toolbox) -> list[NodeReadinessPolicy]:
    return await documents(toolbox, NodeReadinessPolicy)


async def documents(toolbox: Toolbox, model: type[D]) -> list[D]:
    """The policy server's documents of one kind (NodeReadinessPolicy, PatchPolicy), read back
    whole and sorted by name; none without a policy server."""
    kind = str(model.model_fields["kind"].default)
    if not toolbox.has("list_policies"):  # no policy server: nothing declared
        return []
    listed = await toolbox.call("list_policies", kind=kind, limit=200)
    found: list[D] = []
    for row in listed.get("policies", []):
        got = await toolbox.call("get_policy", name=row["name"], kind=kind)
        try:
            found.append(model.model_validate(yaml.safe_load(got["yaml"])))
        except (yaml.YAMLError, ValidationError) as exc:
            raise AgentError(
                f"the policy server's {kind} {row['name']} does not read back as one ({exc}); "
                f"check {row.get('source') or 'its file'} with `kubecrew policy validate`"
            ) from exc
    return sorted(found, key=lambda p: p.metadata.name)


async def enforce(toolbox: Toolbox, *, apply: bool = True) -> list[Readiness]:
    """Every selected node's rules checked, and (apply) its readiness taint removed or put
    back; apply=False only reads, for a question."""
    rules = await policies(toolbox)
    if not rules:
        return []
    listed = await toolbox.call("list_resources", kind="Node", output="fields", fields=NODE_FIELDS)
    done: list[Readiness] = []
    for item in listed.get("items", []):
        labels = dict(item.get("metadata.labels") or {})
        for policy in rules:
            if policy.spec.nodeSelector.matches(labels):
                done.append(await _enforce_one(toolbox, policy, item, apply=apply))
    return done


async def _enforce_one(
    toolbox: Toolbox, policy: NodeReadinessPolicy, node: dict[str, Any], *, apply: bool
) -> Readiness:
    name, taint = str(node["metadata.name"]), policy.spec.taint
    checks = [_kubelet(policy, node)]
    for rule in policy.spec.rules:
        checks.append(await _check(toolbox, policy, rule, name, node))
    ready = all(c["passed"] for c in checks)
    taints = node.get("spec.taints") or []
    tainted = any(t.get("key") == taint.key and t.get("effect") == taint.effect for t in taints)
    action: Action = "ready" if ready else "kept-taint"
    if not apply:
        action = "ready" if ready else "kept-taint" if tainted else "not-ready"
    elif ready and tainted:
        await toolbox.call("taint", node=name, key=taint.key, effect=taint.effect, remove=True)
        action = "removed-taint"
    elif not ready and not tainted:
        await toolbox.call("taint", node=name, key=taint.key, effect=taint.effect)
        action = "added-taint"
    return Readiness(
        node=name, policy=policy.metadata.name, taint=taint.describe(), ready=ready,
        action=action, checks=checks,
    )  # fmt: skip


def _cite(policy: NodeReadinessPolicy, rule: str) -> str:
    return f"{KIND} {policy.metadata.name} / rule {rule}"


def _condition(node: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in node.get("status.conditions") or [] if c.get("type") == kind), None)


def _kubelet(policy: NodeReadinessPolicy, node: dict[str, Any]) -> Check:
    ready = _condition(node, "Ready")
    if ready is None:
        return Check(
            rule=_cite(policy, "kubelet-ready"), passed=False, evidence="no Ready condition"
        )
    passed = ready.get("status") == "True"
    return Check(rule=_cite(policy, "kubelet-ready"), passed=passed, evidence=said(ready))


async def _check(
    toolbox: Toolbox,
    policy: NodeReadinessPolicy,
    rule: ReadinessRule,
    name: str,
    node: dict[str, Any],
) -> Check:
    cite = _cite(policy, rule.name)
    if rule.condition is not None:
        seen = _condition(node, rule.condition.type)
        if seen is None:
            return Check(
                rule=cite, passed=False,
                evidence=f"node {name} reports no {rule.condition.type} condition",
            )  # fmt: skip
        passed = seen.get("status") == rule.condition.status
        return Check(rule=cite, passed=passed, evidence=f"node {name}: {said(seen)}")
    namespace = (
        rule.daemonSet.namespace if rule.daemonSet else rule.pod.namespace if rule.pod else ""
    )
    listed = await toolbox.call(
        "list_resources", kind="pods", namespace=namespace, field_selector=f"spec.nodeName={name}",
        output="fields", fields=POD_FIELDS, limit=500,
    )  # fmt: skip
    # A terminating pod can still say Ready for its grace period; it serves nothing new.
    pods = [
        p for p in listed.get("items", [])
        if _matches(rule, p) and not p.get("metadata.deletionTimestamp")
    ]  # fmt: skip
    if not pods:
        return Check(
            rule=cite, passed=False, evidence=f"no pod on {name}: wanted {rule.describe()}"
        )
    for pod in pods:
        ready = _condition({"status.conditions": pod.get("status.conditions")}, "Ready")
        if ready is not None and ready.get("status") == "True":
            return Check(
                rule=cite, passed=True, evidence=f"pod {namespace}/{pod['metadata.name']} is Ready"
            )
    pod = pods[0]
    ready = _condition({"status.conditions": pod.get("status.conditions")}, "Ready")
    state = said(ready) if ready is not None else "no Ready condition yet"
    return Check(
        rule=cite, passed=False,
        evidence=f"pod {namespace}/{pod['metadata.name']} on {name} is not Ready: {state}",
    )  # fmt: skip


def _matches(rule: ReadinessRule, pod: dict[str, Any]) -> bool:
    if rule.daemonSet is not None:
        owners = pod.get("metadata.ownerReferences") or []
        return any(
            o.get("kind") == "DaemonSet" and o.get("name") == rule.daemonSet.name for o in owners
        )
    assert rule.pod is not None
    return rule.pod.selector.matches(dict(pod.get("metadata.labels") or {}))
