"""HorizontalPodAutoscaler, autoscaling/v2 (`horizontal-pod-autoscaler`), on simulated usage.

Every 15 sandbox seconds each HPA reads its target's scale (Deployment, StatefulSet or
ReplicaSet `spec.replicas`), the usage of the target's pods from the metrics book (what
metrics-server would serve) and their requests, and proposes
`ceil(current * usage / target)` per Resource metric, ignoring changes within a 10% tolerance.
The largest proposal wins; it is then held back by the scale-down stabilization window (300 s,
or `behavior`), the scale rate limits and min/maxReplicas, and written to the target's
`spec.replicas` as a normal write (the generation moves, as after `kubectl scale`).

Conditions, events and messages are those of the real controller, so `kubectl describe hpa`
reads the same. Recommendations and scale events live in memory, as in kube-controller-manager.
This module knows the workload kinds only by their scale (`spec.replicas`) and the owner chain
from target to pods; it knows nothing of how those pods are made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sandbox.clock import format_time
from sandbox.control.readiness import is_ready
from sandbox.control.runtime import PODS, Context, Controller
from sandbox.quantity import format_cpu, parse_quantity
from sandbox.store import Key, Obj

HPAS: Key = ("autoscaling", "horizontalpodautoscalers")
REPLICASETS: Key = ("apps", "replicasets")
TARGETS: dict[str, Key] = {
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicaSet": REPLICASETS,
}
SYNC_PERIOD = 15.0
TOLERANCE = 0.1
DOWNSCALE_STABILIZATION = 300.0
MAX_PERIOD = 1800.0  # the longest periodSeconds a scaling policy may have
DEFAULT_METRIC = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}

# condition reasons whose message never varies, worded as kube-controller-manager words them
MESSAGES = {
    "ScalingDisabled": "scaling is disabled since the replica count of the target is zero",
    "ReadyForNewScale": "recommended size matches current size",
    "ScaleDownStabilized": "recent recommendations were higher than current one, applying the "
    "highest recent recommendation",
    "ScaleUpStabilized": "recent recommendations were lower than current one, applying the lowest "
    "recent recommendation",
    "ScaleUpLimit": ("the desired replica count is increasing faster than the maximum scale rate"),
    "ScaleDownLimit": (
        "the desired replica count is decreasing faster than the maximum scale rate"
    ),
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "DesiredWithinRange": "the desired count is within the acceptable range",
}


class MetricError(Exception):
    """One metric could not be computed: `reason` and `detail` go to the event and the
    ScalingActive condition, `str()` into FailedComputeMetricsReplicas, as in Kubernetes."""

    def __init__(self, reason: str, metric: str, detail: str) -> None:
        super().__init__(f"failed to get {metric} resource metric value: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class _Memory:
    """What the controller remembers of one HPA between passes."""

    last_sync: float = -math.inf
    generation: int = 0
    recommendations: list[tuple[float, int]] = field(default_factory=list)  # (when, replicas)
    scale_events: list[tuple[float, int]] = field(default_factory=list)  # (when, change)


@dataclass
class _Proposal:
    replicas: int
    metric: str  # "cpu resource utilization (percentage of request)"
    status: dict[str, Any]  # one entry of status.currentMetrics


@dataclass
class _Recommendation:
    replicas: int
    metric: str
    statuses: list[dict[str, Any]]


class _Conditions:
    """The HPA's conditions being rewritten in one pass (transition times kept when the status
    of a type does not change)."""

    def __init__(self, old: list[dict[str, Any]], now: str) -> None:
        self._old: dict[str, dict[str, Any]] = {str(c.get("type")): c for c in old}
        self._now = now
        self._set: dict[str, dict[str, Any]] = {}

    def set(self, kind: str, status: str, reason: str, message: str | None = None) -> None:
        previous = self._set.get(kind) or self._old.get(kind) or {}
        since = previous.get("lastTransitionTime", self._now)
        if previous.get("status") != status:
            since = self._now
        self._set[kind] = {
            "type": kind,
            "status": status,
            "lastTransitionTime": since,
            "reason": reason,
            "message": MESSAGES[reason] if message is None else message,
        }

    def has(self, kind: str, *reasons: str) -> bool:
        return (self._set.get(kind) or {}).get("reason") in reasons

    @property
    def items(self) -> list[dict[str, Any]]:
        merged = {**self._old, **self._set}
        order = ("AbleToScale", "ScalingActive", "ScalingLimited")
        return [merged[k] for k in order if k in merged]


def _requests(pod: Obj, resource: str) -> float:
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        request = ((container.get("resources") or {}).get("requests") or {}).get(resource)
        if request is None:
            raise ValueError(
                f"missing request for {resource} in container {container.get('name')} of Pod "
                f"{pod['metadata']['name']}"
            )
        total += _amount(resource, request)
    return total


def _amount(resource: str, value: Any) -> float:
    """CPU in millicores, everything else in units."""
    amount = parse_quantity(value)
    return amount * 1000 if resource == "cpu" else amount


def _quantity(resource: str, amount: float) -> str:
    if resource == "cpu":
        return format_cpu(amount)
    return str(int(amount))


class HorizontalPodAutoscalerController(Controller):
    name = "horizontal-pod-autoscaler"
    primary = HPAS

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._memory: dict[str, _Memory] = {}

    def reconcile(self, namespace: str, name: str) -> float | None:
        hpa = self.get(HPAS, namespace, name)
        if hpa is None:
            return None
        meta = hpa["metadata"]
        memory = self._memory.setdefault(meta["uid"], _Memory())
        now = self.now()
        generation = int(meta.get("generation", 1))
        if generation == memory.generation and now - memory.last_sync < SYNC_PERIOD - 1e-6:
            return memory.last_sync + SYNC_PERIOD - now  # our own status write woke us
        memory.last_sync, memory.generation = now, generation
        self._sync(hpa, memory, now)
        return SYNC_PERIOD

    # -- one pass ------------------------------------------------------------------------------

    def _sync(self, hpa: Obj, memory: _Memory, now: float) -> None:
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        old_status = hpa.get("status") or {}
        conditions = _Conditions(old_status.get("conditions") or [], self.ctx.clock.timestamp())
        key = TARGETS.get(ref.get("kind", ""))
        target = self.get(key, hpa["metadata"]["namespace"], ref.get("name", "")) if key else None
        if key is None or target is None:
            resource = f"{key[1]}.{key[0]}" if key else str(ref.get("kind", "")).lower()
            message = (
                "the HPA controller was unable to get the target's current scale: "
                f'{resource} "{ref.get("name", "")}" not found'
            )
            self.event(hpa, "FailedGetScale", message, warning=True)
            conditions.set("AbleToScale", "False", "FailedGetScale", message)
            status = {**old_status, "conditions": conditions.items}
            status.setdefault("currentReplicas", 0)
            status.setdefault("desiredReplicas", 0)
            self.write_status(HPAS, hpa, status)
            return
        current = int((target.get("spec") or {}).get("replicas", 1))
        low, high = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        metrics_status: list[dict[str, Any]] = []
        reason = ""
        if current == 0 and low != 0:
            desired = 0
            conditions.set("ScalingActive", "False", "ScalingDisabled")
        elif current > high:
            desired, reason = high, "Current number of replicas above Spec.MaxReplicas"
        elif current < low:
            desired, reason = low, "Current number of replicas below Spec.MinReplicas"
        else:
            proposal = self._propose(hpa, target, current, conditions)
            if proposal is None:  # metrics failed: keep the last status, only conditions move
                status = {
                    **old_status,
                    "currentReplicas": current,
                    "desiredReplicas": old_status.get("desiredReplicas", current),
                    "conditions": conditions.items,
                }
                self.write_status(HPAS, hpa, status)
                return
            metrics_status = proposal.statuses
            desired = self._normalize(spec, memory, current, proposal.replicas, now, conditions)
            if desired > current:
                reason = f"{proposal.metric} above target"
            elif desired < current:
                reason = "All metrics below target"
        status = {
            "observedGeneration": hpa["metadata"].get("generation", 1),
            "currentReplicas": current,
            "desiredReplicas": desired,
        }
        if old_status.get("lastScaleTime"):
            status["lastScaleTime"] = old_status["lastScaleTime"]
        if metrics_status:
            status["currentMetrics"] = metrics_status
        if desired != current:
            self._rescale(target, key, desired)
            memory.scale_events.append((now, desired - current))
            self.event(hpa, "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            conditions.set(
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            status["lastScaleTime"] = format_time(self.ctx.clock.now())
        elif not conditions.has("AbleToScale", "ScaleDownStabilized", "ScaleUpStabilized"):
            conditions.set("AbleToScale", "True", "ReadyForNewScale")
        status["conditions"] = conditions.items
        self.write_status(HPAS, hpa, status)

    def _rescale(self, target: Obj, key: Key, replicas: int) -> None:
        self.write(key, {**target, "spec": {**target["spec"], "replicas": replicas}}, target)

    # -- metrics -------------------------------------------------------------------------------

    def _propose(
        self, hpa: Obj, target: Obj, current: int, conditions: _Conditions
    ) -> _Recommendation | None:
        """The replica count the metrics ask for, or None (events and conditions say why)."""
        specs = (hpa.get("spec") or {}).get("metrics") or [DEFAULT_METRIC]
        pods = [
            p
            for p in self._pods_of(target)
            if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") != "Failed"
        ]
        proposals: list[_Proposal] = []
        errors: list[str] = []
        for metric in specs:
            try:
                proposals.append(self._resource_metric(hpa, metric, pods, current))
            except MetricError as err:
                self.event(hpa, err.reason, err.detail, warning=True)
                conditions.set(
                    "ScalingActive",
                    "False",
                    err.reason,
                    f"the HPA was unable to compute the replica count: {err.detail}",
                )
                errors.append(str(err))
        if errors and (not proposals or max(p.replicas for p in proposals) < current):
            message = (
                f"invalid metrics ({len(errors)} invalid out of {len(specs)}), "
                f"first error is: {errors[0]}"
            )
            self.event(hpa, "FailedComputeMetricsReplicas", message, warning=True)
            return None
        best = max(proposals, key=lambda p: p.replicas)
        conditions.set(
            "ScalingActive",
            "True",
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {best.metric}",
        )
        return _Recommendation(best.replicas, best.metric, [p.status for p in proposals])

    def _resource_metric(
        self, hpa: Obj, metric: dict[str, Any], pods: list[Obj], current: int
    ) -> _Proposal:
        kind = str(metric.get("type", ""))
        if kind != "Resource":
            raise MetricError(
                "FailedGetMetric",
                kind.lower(),
                f"the sandbox serves no {kind} metrics (only Resource metrics)",
            )
        source = metric.get("resource") or {}
        resource = str(source.get("name", ""))
        target = source.get("target") or {}
        utilization = target.get("type", "Utilization") == "Utilization"
        what = "utilization" if utilization else "usage"
        try:
            usage, requests, unready = self._usage(hpa, pods, resource, need_requests=utilization)
        except ValueError as err:
            detail = f"failed to get {resource} {what}: {err}"
            raise MetricError("FailedGetResourceMetric", resource, detail) from err
        if utilization:
            wanted = float(target.get("averageUtilization", 80))
            percent = int(sum(usage.values()) * 100 / sum(requests[p] for p in usage))
            ratio = percent / wanted
            current_metric: dict[str, Any] = {
                "averageUtilization": percent,
                "averageValue": _quantity(resource, sum(usage.values()) / len(usage)),
            }
            name = f"{resource} resource utilization (percentage of request)"
        else:
            wanted = _amount(resource, target.get("averageValue", "0"))
            average = sum(usage.values()) / len(usage)
            ratio = average / wanted if wanted else 0.0
            current_metric = {"averageValue": _quantity(resource, average)}
            name = f"{resource} resource"
        replicas = current
        if unready and ratio > 1.0:
            # unready pods count as idle when scaling up, so a slow start does not overshoot
            if utilization:
                busy = sum(usage.values()) * 100 / sum(requests[p] for p in (*usage, *unready))
                ratio = busy / wanted
            else:
                ratio = ratio * len(usage) / (len(usage) + len(unready))
            if ratio > 1.0 + TOLERANCE:
                replicas = max(math.ceil(ratio * (len(usage) + len(unready))), current)
        elif abs(1.0 - ratio) > TOLERANCE:
            replicas = math.ceil(ratio * len(usage))
        status = {"type": "Resource", "resource": {"name": resource, "current": current_metric}}
        return _Proposal(replicas, name, status)

    def _usage(
        self, hpa: Obj, pods: list[Obj], resource: str, *, need_requests: bool
    ) -> tuple[dict[str, float], dict[str, float], list[str]]:
        """Usage of the ready pods with metrics, requests of all pods, and the unready pods
        (ValueError with the Kubernetes wording when the metric cannot be computed)."""
        if not pods:
            raise ValueError("no pods returned by selector while calculating replica count")
        namespace = hpa["metadata"]["namespace"]
        requests: dict[str, float] = {}
        usage: dict[str, float] = {}
        unready: list[str] = []
        for pod in pods:
            pod_name = pod["metadata"]["name"]
            if need_requests:
                requests[pod_name] = _requests(pod, resource)
            if resource == "cpu" and not is_ready(pod):
                unready.append(pod_name)
                continue
            found = self.ctx.metrics.pod(namespace, pod_name)
            if found is not None:
                usage[pod_name] = sum(
                    _amount(resource, c["usage"].get(resource, "0")) for c in found["containers"]
                )
        if not usage:
            raise ValueError(
                f"unable to get metrics for resource {resource}: no metrics returned from "
                "resource metrics API"
            )
        if need_requests and not sum(requests[p] for p in usage):
            raise ValueError("no metrics returned matched known pods")
        return usage, requests, unready

    def _pods_of(self, target: Obj) -> list[Obj]:
        uid = target["metadata"]["uid"]
        if target.get("kind") == "Deployment":
            return [
                pod
                for rs in self.ctx.index.owned(REPLICASETS, uid)
                for pod in self.ctx.index.owned(PODS, rs["metadata"]["uid"])
            ]
        return self.ctx.index.owned(PODS, uid)

    # -- stabilization and limits -------------------------------------------------------------

    def _normalize(
        self,
        spec: dict[str, Any],
        memory: _Memory,
        current: int,
        proposed: int,
        now: float,
        conditions: _Conditions,
    ) -> int:
        behavior = spec.get("behavior") or {}
        up_rules, down_rules = behavior.get("scaleUp") or {}, behavior.get("scaleDown") or {}
        up_window = float(up_rules.get("stabilizationWindowSeconds", 0))
        down_window = float(down_rules.get("stabilizationWindowSeconds", DOWNSCALE_STABILIZATION))
        longest = max(up_window, down_window)
        memory.recommendations = [
            (t, r) for t, r in memory.recommendations if now - t < longest + 1e-6
        ]
        memory.recommendations.append((now, proposed))
        up_floor = min(r for t, r in memory.recommendations if now - t <= up_window + 1e-6)
        down_ceiling = max(r for t, r in memory.recommendations if now - t <= down_window + 1e-6)
        stabilized = current
        if up_floor > current:
            stabilized = up_floor
        elif down_ceiling < current:
            stabilized = down_ceiling
        if stabilized != proposed:
            if proposed < current:
                conditions.set("AbleToScale", "True", "ScaleDownStabilized")
            else:
                conditions.set("AbleToScale", "True", "ScaleUpStabilized")
        low, high = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        memory.scale_events = [(t, c) for t, c in memory.scale_events if now - t < MAX_PERIOD]
        if behavior:
            up_limit = self._policy_limit(up_rules, memory, current, now, up=True)
            down_limit = self._policy_limit(down_rules, memory, current, now, up=False)
        else:
            up_limit, down_limit = max(2 * current, 4), 0
        limited = stabilized
        if stabilized > up_limit:
            limited = up_limit
            conditions.set("ScalingLimited", "True", "ScaleUpLimit")
        elif stabilized < down_limit:
            limited = down_limit
            conditions.set("ScalingLimited", "True", "ScaleDownLimit")
        if limited > high:
            conditions.set("ScalingLimited", "True", "TooManyReplicas")
            return high
        if limited < low:
            conditions.set("ScalingLimited", "True", "TooFewReplicas")
            return low
        if limited == stabilized:
            conditions.set("ScalingLimited", "False", "DesiredWithinRange")
        return limited

    def _policy_limit(
        self, rules: dict[str, Any], memory: _Memory, current: int, now: float, *, up: bool
    ) -> int:
        """The furthest `behavior` lets the target move from `current` in this pass."""
        select = rules.get("selectPolicy", "Max")
        if select == "Disabled":
            return current
        policies = rules.get("policies") or (
            [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ]
            if up
            else [{"type": "Percent", "value": 100, "periodSeconds": 15}]
        )
        limits = []
        for policy in policies:
            period = float(policy.get("periodSeconds", 15))
            changes = [c for t, c in memory.scale_events if now - t < period]
            added = sum(c for c in changes if c > 0)
            removed = -sum(c for c in changes if c < 0)
            start = current - added + removed
            value = int(policy.get("value", 0))
            if policy.get("type") == "Pods":
                limits.append(start + value if up else start - value)
            elif up:
                limits.append(math.ceil(start * (1 + value / 100)))
            else:
                limits.append(int(start * (1 - value / 100)))
        most_change = max(limits) if up else min(limits)
        least_change = min(limits) if up else max(limits)
        return most_change if select == "Max" else least_change


CONTROLLERS: tuple[type[Controller], ...] = (HorizontalPodAutoscalerController,)
