"""The node pools an upgrade rolls (Cluster API MachineDeployments), read through the agent's
tools: the control planes, the pools in upgrade order (the canary first, then the smallest), why a
pool cannot roll, its machines, its nodes, the teams on them, and what is wrong after a wave that
was not before the upgrade (`baseline`, `regressions`): nodes, workloads' availability and
budgets, and the golden signals' error ratio of each Service where a metrics server with a
Prometheus answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, TypedDict

from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.placement import MAX_SIZE, POOL_LABEL, is_ready
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name"
CANARY_LABEL = "kubecrew.io/canary"
NODE_FIELDS = (
    "status.nodeInfo.kubeletVersion", "status.nodeInfo.kernelVersion", "status.nodeInfo.osImage",
)  # fmt: skip
# Where a MachineDeployment's template holds what a wave changes (`upgrading.Field`).
TEMPLATE_FIELDS = {
    "version": "spec.template.spec.version",
    "template": "spec.template.spec.infrastructureRef.name",
}
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/kubecrew"  # the crew's pre-drain hook
SIGNALS_WINDOW = "2m"  # the golden signals a wave is judged by: the minutes after it
MAX_ERROR_RATIO = 0.05  # a Service failing more than this, and more than before, fails a wave
MAX_SERVICES = 50  # the Services whose signals an upgrade watches, at most
MACHINES_QUOTA = "count/machines.cluster.x-k8s.io"  # a ResourceQuota's count of Machines
MAX_MACHINES = 1000  # the Machines of a namespace counted against its quota, at most
HORIZON = timedelta(days=15)  # how far ahead a drain's windows are looked for (as the store does)


async def cordoned(toolbox: Toolbox, node: str) -> bool:
    got = await toolbox.call(
        "get_resource", kind="Node", name=node, output="fields", fields=["spec.unschedulable"]
    )
    return bool(got.get("spec.unschedulable"))


async def control_planes(toolbox: Toolbox) -> list[str]:
    try:
        listed = await toolbox.call("list_resources", kind="kubeadmcontrolplanes", limit=10)
    except ToolFailed as exc:
        if "has no resource type" in exc.reason:
            return []
        raise
    return [f"{row['namespace']}/{row['name']}" for row in listed.get("items", [])]


async def in_order(toolbox: Toolbox) -> list[dict[str, Any]]:
    """The MachineDeployments, the canary first, then the smallest first."""
    try:
        listed = await toolbox.call(
            "list_resources", kind="machinedeployments", output="fields", limit=200,
            fields=["spec.template.spec.version", "spec.replicas", "metadata.labels"],
        )  # fmt: skip
    except ToolFailed as exc:
        if "has no resource type" in exc.reason:
            return []
        raise
    pools = [
        {
            "pool": f"{row['namespace']}/{row['name']}",
            "version": str(row.get("spec.template.spec.version") or ""),
            "replicas": int(row.get("spec.replicas") or 0),
            "canary": (row.get("metadata.labels") or {}).get(CANARY_LABEL) == "true",
        }
        for row in listed.get("items", [])
    ]
    return sorted(pools, key=lambda p: (not p["canary"], p["replicas"], p["pool"]))


async def cannot_roll(toolbox: Toolbox, pool: dict[str, Any]) -> list[str]:
    """Why `pool` cannot roll: no surge nor unavailability allowed, its surge refused by
    policy, or maintenance windows its drains wait for that never open together."""
    return await _no_room(toolbox, pool) + await _never_open(toolbox, pool)


async def _never_open(toolbox: Toolbox, pool: dict[str, Any]) -> list[str]:
    """Why no drain of the pool's nodes can ever start: every ChangePolicy covering them must
    have its window open at once, and looked at from now, each opening of one falls while
    another is closed for `HORIZON` (say weekday windows of two policies on different days).
    The drain is judged at now, then at each opening the policy store names, as a wave would."""
    nodes = await nodes_of(toolbox, pool["pool"].split("/", 1)[1])
    if not nodes:
        return []
    at = await cluster_now(toolbox)
    end = at + HORIZON
    waited: dict[str, str] = {}  # citation -> the policy's words, for every window waited for
    while at <= end:
        judged = await toolbox.call(
            "evaluate_action", action="drain", target=f"node/{nodes[0]}", pods=1,
            now=at.isoformat(),
        )  # fmt: skip
        deferring = [f for f in judged.get("fired", []) if f.get("effect") == "defer"]
        if not deferring:
            return []
        for finding in deferring:
            waited.setdefault(finding["citation"], str(finding["why"]).split("; ")[0])
        opens = judged.get("not_before")
        if not opens or datetime.fromisoformat(str(opens)) <= at:
            break
        at = datetime.fromisoformat(str(opens))
    why = "; ".join(f"{citation}: {said}" for citation, said in waited.items())
    return [f"pool {pool['pool']}: the maintenance windows its nodes' drains wait for never open "
            f"together in the next {HORIZON.days} days ({why}); make them overlap"]  # fmt: skip


async def _no_room(toolbox: Toolbox, pool: dict[str, Any]) -> list[str]:
    namespace, name = pool["pool"].split("/", 1)
    got = await read(toolbox, pool["pool"])
    replicas = int(got.get("spec.replicas") or 0)
    surge = _count(got.get("spec.strategy.rollingUpdate.maxSurge"), replicas, default=1, up=True)
    unavailable = _count(got.get("spec.strategy.rollingUpdate.maxUnavailable"), replicas,
                         default=0, up=False)  # fmt: skip
    if not surge and not unavailable:
        return [f"pool {pool['pool']}: maxSurge and maxUnavailable are both 0, so no machine can "
                "be replaced"]  # fmt: skip
    if not surge:
        return []
    if over := await _over_quota(toolbox, pool["pool"], got, replicas + surge):
        return [f"pool {pool['pool']} has no room for its surge of {surge} machine(s) "
                f"({replicas} -> {replicas + surge}): {over}"]  # fmt: skip
    judged = await toolbox.call(
        "evaluate_action", action="scale", target=f"machinedeployment/{name}",
        namespace=namespace, from_replicas=replicas, replicas=replicas + surge,
    )  # fmt: skip
    if judged.get("verdict") != "reject":
        return []
    why = "; ".join(f"{f['citation']}: {f['why']}" for f in judged.get("fired", [])
                    if f.get("effect") == "reject")  # fmt: skip
    return [f"pool {pool['pool']} has no room for its surge of {surge} machine(s) "
            f"({replicas} -> {replicas + surge}): {why or 'policy refuses it'}"]  # fmt: skip


async def _over_quota(toolbox: Toolbox, pool: str, got: dict[str, Any], machines: int) -> str:
    """Why `machines` machines at once would break a ceiling the cluster sets the pool: its
    node group's max size (the autoscaler's annotation, which capacity planning sets to what the
    infrastructure grants), or a ResourceQuota counting Machines in its namespace; "" if none."""
    annotations = got.get("metadata.annotations") or {}
    most = annotations.get(MAX_SIZE)
    if most is not None and str(most).isdigit() and machines > int(most):
        return f"its max size is {most} machines ({MAX_SIZE})"
    namespace = pool.split("/", 1)[0]
    try:
        quotas = await toolbox.call(
            "list_resources", kind="resourcequotas", namespace=namespace, output="fields",
            fields=["spec.hard"], limit=50,
        )  # fmt: skip
    except ToolFailed as exc:
        if not exc.denied:
            raise
        # RBAC of an install older than this check: the API server still enforces the quota,
        # and a Machine it refuses stalls the wave, whose validation rolls it back.
        return ""
    limits = [
        (str(row["name"]), int(hard))
        for row in quotas.get("items", [])
        if str(hard := (row.get("spec.hard") or {}).get(MACHINES_QUOTA, "")).isdigit()
    ]
    if not limits:
        return ""
    listed = await toolbox.call(
        "list_resources", kind="machines", namespace=namespace, output="fields",
        fields=["status.phase"], limit=MAX_MACHINES,
    )  # fmt: skip
    extra = machines - int(got.get("spec.replicas") or 0)  # the surge, beside every Machine
    count = len(listed.get("items", [])) + extra
    for name, hard in limits:
        if count > hard:
            return (f"ResourceQuota {namespace}/{name} allows {hard} Machines in {namespace} "
                    f"and {count} would exist")  # fmt: skip
    return ""


def _count(value: object, replicas: int, *, default: int, up: bool) -> int:
    """maxSurge / maxUnavailable as a number of machines (a percentage of `replicas`, rounded
    up for surge and down for unavailability, as Cluster API does)."""
    if value is None:
        return default
    text = str(value)
    if text.endswith("%"):
        share = replicas * float(text[:-1]) / 100
        return math.ceil(share) if up else math.floor(share)
    return int(text)


async def read(toolbox: Toolbox, pool: str) -> dict[str, Any]:
    namespace, name = pool.split("/", 1)
    return await toolbox.call(
        "get_resource", kind="machinedeployments", name=name, namespace=namespace,
        output="fields", fields=[
            "spec.replicas", *TEMPLATE_FIELDS.values(), "status.availableReplicas",
            "metadata.annotations",
            "status.updatedReplicas", "spec.strategy.rollingUpdate.maxSurge",
            "spec.strategy.rollingUpdate.maxUnavailable",
        ],
    )  # fmt: skip


async def machines(toolbox: Toolbox, pool: str) -> list[dict[str, Any]]:
    namespace, name = pool.split("/", 1)
    listed = await toolbox.call(
        "list_resources", kind="machines", namespace=namespace,
        label_selector=f"{DEPLOYMENT_LABEL}={name}", output="fields", limit=500,
        fields=["spec.version", "spec.infrastructureRef.name", "status.phase",
                "status.nodeRef.name", "status.failureMessage",
                "metadata.deletionTimestamp", "metadata.annotations"],
    )  # fmt: skip
    found = []
    for row in listed.get("items", []):
        node = str(row.get("status.nodeRef.name") or "")
        found.append({
            "name": str(row["name"]), "namespace": namespace, "node": node,
            "version": str(row.get("spec.version") or ""),
            "template": str(row.get("spec.infrastructureRef.name") or ""),
            "phase": str(row.get("status.phase") or ""),
            "failure": str(row.get("status.failureMessage") or ""),
            "deleting": bool(row.get("metadata.deletionTimestamp")),
            "hooked": HOOK in (row.get("metadata.annotations") or {}),
            "cordoned": False,
        })  # fmt: skip
    return found


async def nodes_of(toolbox: Toolbox, name: str) -> list[str]:
    listed = await toolbox.call(
        "list_resources", kind="Node", output="fields", fields=["spec.unschedulable"],
        label_selector=f"{POOL_LABEL}={name}", limit=500,
    )  # fmt: skip
    return sorted(str(row["name"]) for row in listed.get("items", []))


async def teams_on(toolbox: Toolbox, nodes: list[str]) -> list[str]:
    teams: set[str] = set()
    for node in nodes:
        plan = await toolbox.call("drain_plan", node=node)
        teams |= {p["pod"].split("/", 1)[0] for p in plan["pods"] if p["action"] == "evict"}
    return sorted(teams)


async def ready(toolbox: Toolbox, node: str) -> tuple[bool, datetime | None]:
    """Whether the node is Ready, and since when it has said so (or not)."""
    try:
        got = await toolbox.call("get_resource", kind="Node", name=node, output="fields",
                                 fields=["status.conditions"])  # fmt: skip
    except ToolFailed:
        return False, None
    for found in got.get("status.conditions") or []:
        if found.get("type") == "Ready":
            since = str(found.get("lastTransitionTime") or "").replace("Z", "+00:00")
            return found.get("status") == "True", datetime.fromisoformat(since) if since else None
    return False, None


class Baseline(TypedDict):
    """The cluster as an upgrade found it, so validation blames a wave only for what it broke."""

    problems: list[str]  # workloads already short before it began ("Deployment shop/web")
    errors: dict[str, float]  # each Service's error ratio then ("shop/web"), when metrics answer


async def baseline(toolbox: Toolbox) -> Baseline:
    problems = await _workload_problems(toolbox)
    return Baseline(problems=sorted({_subject(p) for p in problems}),
                    errors=await error_ratios(toolbox))  # fmt: skip


async def regressions(
    toolbox: Toolbox, pool: str, lacks: Callable[[dict[str, Any]], str], before: Baseline | None
) -> list[str]:
    """What is wrong after a wave that was not before the upgrade: `validate`'s findings less
    the workloads already short then, and Services whose error ratio rose past the bound."""
    known = set(before["problems"]) if before else set()
    wrong = [w for w in await validate(toolbox, pool, lacks) if _subject(w) not in known]
    if before and before["errors"]:
        after = await error_ratios(toolbox, services=before["errors"])
        wrong += [
            f"Service {name}: error ratio {ratio:.2f} over the last {SIGNALS_WINDOW} "
            f"({before['errors'][name]:.2f} before the upgrade)"
            for name, ratio in sorted(after.items())
            if ratio > MAX_ERROR_RATIO and ratio > before["errors"][name] + MAX_ERROR_RATIO
        ]
    return wrong


async def error_ratios(toolbox: Toolbox, *, services: Iterable[str] = ()) -> dict[str, float]:
    """Each Service's error ratio (5xx of all requests over `SIGNALS_WINDOW`, the golden
    signals) by "namespace/name": those given, else the workloads' (at most `MAX_SERVICES`);
    {} when no metrics server with a Prometheus answers: the cluster alone is judged then."""
    if not toolbox.has("golden_signals"):
        return {}
    named = list(services)
    if not named:
        listed = await toolbox.call("list_resources", kind="services", output="fields",
                                    fields=["metadata.name"], limit=500)  # fmt: skip
        named = [f"{row['namespace']}/{row['name']}" for row in listed.get("items", [])
                 if not str(row["namespace"]).startswith("kube-")
                 and row["namespace"] != "default"][:MAX_SERVICES]  # fmt: skip
    ratios: dict[str, float] = {}
    for name in named:
        namespace, service = name.split("/", 1)
        try:
            got = await toolbox.call("golden_signals", service=service, namespace=namespace,
                                     window=SIGNALS_WINDOW)  # fmt: skip
        except ToolFailed:
            return ratios  # no Prometheus behind the metrics server, or it does not answer
        ratio = got.get("error_ratio")
        if isinstance(ratio, int | float):
            ratios[name] = float(ratio)
    return ratios


def _subject(problem: str) -> str:
    return problem.split(":", 1)[0]


async def validate(
    toolbox: Toolbox, pool: str, lacks: Callable[[dict[str, Any]], str]
) -> list[str]:
    """What is wrong after a wave: pool nodes not Ready or lacking what the wave was for
    (`lacks` of a node's row of `NODE_FIELDS`: "kubelet v1.37.0"), Deployments not fully
    available, budgets below their promise."""
    wrong: list[str] = []
    listed = await toolbox.call(
        "list_resources", kind="Node", label_selector=f"{POOL_LABEL}={pool.split('/', 1)[1]}",
        output="fields", fields=[*NODE_FIELDS, "status.conditions"], limit=500,
    )  # fmt: skip
    for row in listed.get("items", []):
        if lacking := lacks(row):
            wrong.append(f"node {row['name']}: {lacking}")
        if not is_ready(row.get("status.conditions")):
            wrong.append(f"node {row['name']} is not Ready")
    return wrong + await _workload_problems(toolbox)


async def _workload_problems(toolbox: Toolbox) -> list[str]:
    """Deployments not fully available and budgets below their promise, cluster-wide."""
    wrong: list[str] = []
    deployments = await toolbox.call(
        "list_resources", kind="deployments", output="fields",
        fields=["spec.replicas", "status.availableReplicas"], limit=500,
    )  # fmt: skip
    for row in deployments.get("items", []):
        want, have = (
            int(row.get("spec.replicas") or 0),
            int(row.get("status.availableReplicas") or 0),
        )
        if have < want:
            wrong.append(f"Deployment {row['namespace']}/{row['name']}: {have}/{want} available")
    budgets = await toolbox.call(
        "list_resources", kind="poddisruptionbudgets", output="fields",
        fields=["status.currentHealthy", "status.desiredHealthy"], limit=500,
    )  # fmt: skip
    for row in budgets.get("items", []):
        healthy, desired = row.get("status.currentHealthy"), row.get("status.desiredHealthy")
        if healthy is not None and desired is not None and int(healthy) < int(desired):
            wrong.append(f"PodDisruptionBudget {row['namespace']}/{row['name']}: {healthy} "
                         f"healthy, {desired} required")  # fmt: skip
    return wrong
