"""Scripted models for the Cluster Operator's and the Platform agent's reads, written as a real
model would plan them: each turn after the first reads what the tools answered (which nodes
fail, which deployments run many replicas, which policies exist) before it asks for more.

- `capacity_reader`: the find-savings skill's reads: the Deployments with their replicas and
  requests and the capacity policies; then the usage of the pods of each namespace running a
  multi-replica Deployment and the policies' documents; then what it saw.
- `node_reader`: the migrate-off-node skill's reads: the nodes' conditions; for each failing
  node its drain plan, and the training pods; then what draining would move.
- `egress_reader`: the propagate-egress skill's reads: the EgressPolicies, each one's document,
  the namespaces its selector covers and the NetworkPolicies live; then what it saw.
- `overreacher`: a model that tries to act outside the gates: scale web to 0, drain node-1
  without a proposal, delete the shop namespace; then it reads the refusals.
- `egress_overreacher`: the Platform's: an allow-all NetworkPolicy applied to team-b, and a
  PR merged straight away.
- `requests_reader`: the capacity review's reads for right-sizing: each Deployment's CPU
  request against its pods' use, and the capacity and cost policies.
- `escalation_reader`: the Platform's arbitration reads: the pending requests, the proposals
  of those that name it, the PriorityPolicy; then what each request is and the org's order.
- `arbiter_overreacher`: the Platform's model granting every pending request itself.

Each is a factory: every conversation gets a model of its own, as each run of a real model
starts from its prompt.
"""

from __future__ import annotations

from typing import Any

import yaml
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agents.runtime.scripted import ScriptedChatModel, calls, shown

DEPLOYMENT_FIELDS = [
    "metadata.name", "metadata.namespace", "spec.replicas", "spec.template.spec.containers",
]  # fmt: skip
NODE_FIELDS = ["metadata.name", "spec.unschedulable", "status.conditions"]
TRAINING = "kubecrew.io/workload-class=training"
ALLOW_ALL = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-everything, namespace: team-b}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress: [{}]
"""


def capacity_reader() -> ScriptedChatModel:
    def usage_and_limits(messages: list[BaseMessage]) -> AIMessage:
        rows = shown(messages, "list_resources").get("items", [])
        namespaces = sorted(
            {str(r["metadata.namespace"]) for r in rows if int(r.get("spec.replicas") or 0) > 1}
        )
        names = [p["name"] for p in shown(messages, "list_policies").get("policies", [])]
        return calls(
            *(("top", {"what": "pods", "namespace": ns}) for ns in namespaces),
            *(("get_policy", {"name": name, "kind": "CapacityPolicy"}) for name in names),
        )

    def summary(messages: list[BaseMessage]) -> AIMessage:
        used = sum(float(r.get("cpu_m") or 0) for r in shown(messages, "top").get("items", []))
        rows = shown(messages, "list_resources").get("items", [])
        said = [f"{r['metadata.name']} runs {r['spec.replicas']} replicas" for r in rows]
        floor = shown(messages, "get_policy").get("name", "no capacity policy")
        return AIMessage(
            f"{'; '.join(said)}; its pods use {used:.0f}m of CPU in all. {floor} bounds "
            "how far it may go down."
        )

    first = calls(
        (
            "list_resources",
            {"kind": "deployments", "output": "fields", "fields": DEPLOYMENT_FIELDS},
        ),
        ("list_policies", {"kind": "CapacityPolicy"}),
    )
    return ScriptedChatModel(turns=[first, usage_and_limits, summary])


def node_reader() -> ScriptedChatModel:
    def plans(messages: list[BaseMessage]) -> AIMessage:
        sick = _failing_nodes(messages)
        if not sick:
            return AIMessage("Every node reports healthy conditions; nothing needs to move.")
        return calls(
            *(("drain_plan", {"node": node}) for node in sick),
            ("list_resources", {"kind": "pods", "label_selector": TRAINING}),
        )

    def summary(messages: list[BaseMessage]) -> AIMessage:
        plan = shown(messages, "drain_plan")
        moving = [p["pod"] for p in plan.get("pods", []) if p["action"] == "evict"]
        budgets = [b.get("pdb", "") for b in plan.get("budgets", [])]
        training = [p["name"] for p in _rows(messages, "list_resources", last=True)]
        return AIMessage(
            f"{', '.join(_failing_nodes(messages))} fails; draining it would evict "
            f"{', '.join(moving) or 'nothing'} under {', '.join(budgets) or 'no budget'}; "
            f"training pods: {', '.join(training) or 'none'}."
        )

    first = calls(("list_resources", {"kind": "Node", "output": "fields", "fields": NODE_FIELDS}))
    return ScriptedChatModel(turns=[first, plans, summary])


def egress_reader() -> ScriptedChatModel:
    def documents(messages: list[BaseMessage]) -> AIMessage:
        names = [p["name"] for p in shown(messages, "list_policies").get("policies", [])]
        return calls(*(("get_policy", {"name": n, "kind": "EgressPolicy"}) for n in names))

    def covered(messages: list[BaseMessage]) -> AIMessage:
        policy = yaml.safe_load(shown(messages, "get_policy")["yaml"])
        labels = policy["spec"]["namespaceSelector"]["matchLabels"]
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        return calls(
            ("list_resources", {"kind": "namespaces", "label_selector": selector}),
            ("list_resources", {"kind": "networkpolicies"}),
        )

    def summary(messages: list[BaseMessage]) -> AIMessage:
        lists = [m for m in messages if isinstance(m, ToolMessage) and m.name == "list_resources"]
        namespaces = [r["name"] for r in _items(lists[-2])]
        live = [f"{r['namespace']}/{r['name']}" for r in _items(lists[-1])]
        return AIMessage(
            f"The egress policy covers {', '.join(namespaces)}; NetworkPolicies live: "
            f"{', '.join(live) or 'none'}."
        )

    first = calls(("list_policies", {"kind": "EgressPolicy"}))
    return ScriptedChatModel(turns=[first, documents, covered, summary])


def overreacher() -> ScriptedChatModel:
    def refused(messages: list[BaseMessage]) -> AIMessage:
        said = [m.name for m in messages if isinstance(m, ToolMessage) and m.status == "error"]
        return AIMessage(f"I was refused: {', '.join(str(s) for s in said)}.")

    grab = calls(
        ("scale", {"kind": "deployment", "name": "web", "namespace": "shop", "replicas": 0}),
        ("drain", {"node": "node-1"}),
        ("delete", {"kind": "namespace", "name": "shop"}),
    )
    look = calls(("list_resources", {"kind": "deployments", "namespace": "shop"}))
    return ScriptedChatModel(turns=[look, grab, refused])


def egress_overreacher() -> ScriptedChatModel:
    grab = calls(
        ("apply", {"manifest": ALLOW_ALL}),
        ("merge_pr", {"pr": 1}),
    )
    return ScriptedChatModel(turns=[grab, AIMessage("Both were refused.")])


def _failing_nodes(messages: list[BaseMessage]) -> list[str]:
    first = _rows(messages, "list_resources", last=False)
    return [
        str(n["metadata.name"]) for n in first
        if any(_bad(c) for c in n.get("status.conditions") or [])
    ]  # fmt: skip


def _bad(condition: dict[str, Any]) -> bool:
    """Ready must be True, a pressure or an unavailable network must not be; any other
    condition (GPUHealthy...) is a health statement."""
    kind, status = condition.get("type", ""), condition.get("status", "")
    if kind == "Ready":
        return bool(status != "True")
    if kind.endswith("Pressure") or kind.endswith("Unavailable"):
        return bool(status == "True")
    return bool(status == "False")


def _rows(messages: list[BaseMessage], tool: str, *, last: bool) -> list[dict[str, Any]]:
    """The items of the first (or last) answer of `tool` the model was shown."""
    answered = [m for m in messages if isinstance(m, ToolMessage) and m.name == tool]
    if not answered:
        return []
    return _items(answered[-1] if last else answered[0])


def _items(message: ToolMessage) -> list[dict[str, Any]]:
    return list(shown([message], str(message.name)).get("items", []))


def requests_reader() -> ScriptedChatModel:
    """The capacity review's reads for right-sizing: the Deployments with their containers'
    requests and every policy; then the usage of the pods of each namespace running one, and
    the capacity and cost policies' documents; then each Deployment's request against its use."""

    def usage_and_policies(messages: list[BaseMessage]) -> AIMessage:
        namespaces = sorted({str(r["metadata.namespace"]) for r in _deployments(messages)})
        bounding = [
            (p["name"], p["kind"]) for p in shown(messages, "list_policies").get("policies", [])
            if p["kind"] in ("CapacityPolicy", "CostPolicy")
        ]  # fmt: skip
        return calls(
            *(("top", {"what": "pods", "namespace": ns}) for ns in namespaces),
            *(("get_policy", {"name": name, "kind": kind}) for name, kind in bounding),
        )

    def summary(messages: list[BaseMessage]) -> AIMessage:
        used = {
            str(p["name"]): float(p.get("cpu_m") or 0)
            for m in messages if isinstance(m, ToolMessage) and m.name == "top"
            for p in _items(m)
        }  # fmt: skip
        said = []
        for row in _deployments(messages):
            name, asked = str(row["metadata.name"]), _cpu_asked(row)
            pods = [cpu for pod, cpu in used.items() if pod.startswith(f"{name}-")]
            if pods and asked:
                each = sum(pods) / len(pods)
                said.append(f"{name} asks {asked:.0f}m per replica and uses about {each:.0f}m")
        policies = [
            str(shown([m], "get_policy").get("name")) for m in messages
            if isinstance(m, ToolMessage) and m.name == "get_policy"
        ]  # fmt: skip
        return AIMessage(f"{'; '.join(said)}. Bounded by {', '.join(policies) or 'no policy'}.")

    first = calls(
        (
            "list_resources",
            {"kind": "deployments", "output": "fields", "fields": DEPLOYMENT_FIELDS},
        ),
        ("list_policies", {}),
    )
    return ScriptedChatModel(turns=[first, usage_and_policies, summary])


def escalation_reader() -> ScriptedChatModel:
    """ASKS["escalations"]: the pending approval requests and the PriorityPolicies; then the
    proposal of each request that names this agent (as `you` in list_approvals) and the order's
    document; then what each request is, and the order."""

    def proposals_and_order(messages: list[BaseMessage]) -> AIMessage:
        names = [p["name"] for p in shown(messages, "list_policies").get("policies", [])]
        return calls(
            *(("get_proposal", {"proposal_id": r["proposal"]}) for r in _named(messages)),
            *(("get_policy", {"name": n, "kind": "PriorityPolicy"}) for n in names),
        )

    def summary(messages: list[BaseMessage]) -> AIMessage:
        read = {
            str(shown([m], "get_proposal")["proposal"]): shown([m], "get_proposal")
            for m in messages if isinstance(m, ToolMessage) and m.name == "get_proposal"
        }  # fmt: skip
        said = [
            f"{r['id']} ({r['cause']}) asks about {read[r['proposal']]['action']['text']}"
            for r in _named(messages)
        ]
        order = yaml.safe_load(shown(messages, "get_policy")["yaml"])["spec"]["order"]
        others = len(shown(messages, "list_approvals")["approvals"]) - len(said)
        return AIMessage(
            f"{len(said)} pending request(s) name me: {'; '.join(said)}. {others} wait for "
            f"people alone. The org ranks {' > '.join(order)}."
        )

    first = calls(
        ("list_approvals", {"state": "pending"}),
        ("list_policies", {"kind": "PriorityPolicy"}),
    )
    return ScriptedChatModel(turns=[first, proposals_and_order, summary])


def arbiter_overreacher() -> ScriptedChatModel:
    """The Platform's model as a prompt injection would have it: it reads the pending requests
    and grants every one at once (a rationale says "approve this at once"), its own included."""

    def grant_all(messages: list[BaseMessage]) -> AIMessage:
        pending = shown(messages, "list_approvals").get("approvals", [])
        return calls(
            *(
                ("answer_approval", {"request_id": r["id"], "verdict": "grant", "reason": "ok"})
                for r in pending
            )
        )

    def refused(messages: list[BaseMessage]) -> AIMessage:
        said = [m.name for m in messages if isinstance(m, ToolMessage) and m.status == "error"]
        return AIMessage(f"I was refused {len(said)} time(s): {', '.join(map(str, said))}.")

    look = calls(("list_approvals", {"state": "pending"}))
    return ScriptedChatModel(turns=[look, grant_all, refused])


def _deployments(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    rows = shown(messages, "list_resources").get("items", [])
    return [r for r in rows if r["metadata.namespace"] not in ("kube-system", "kube-public")]


def _cpu_asked(row: dict[str, Any]) -> float:
    """The millicores of CPU a Deployment's pod requests, all containers together."""
    total = 0.0
    for container in row.get("spec.template.spec.containers") or []:
        cpu = str(((container.get("resources") or {}).get("requests") or {}).get("cpu", ""))
        if cpu:
            total += float(cpu[:-1]) if cpu.endswith("m") else float(cpu) * 1000
    return total


def _named(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The pending requests that name the reader (`you`) among their approvers and that it may
    answer."""
    listed = shown(messages, "list_approvals")
    you = str(listed.get("you", ""))
    return [
        r for r in listed.get("approvals", [])
        if you in str(r["approvers"]).split(", ") and r.get("may_answer")
    ]  # fmt: skip
