"""kube-state-metrics families of the workload controllers' objects and their helpers.

Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, HorizontalPodAutoscalers and
PodDisruptionBudgets: spec and status numbers as gauges, conditions as true/false/unknown triples.
Each kind is a table (metric suffix, field path, HELP text), so adding a series is one line. A
status number the controller has not written yet reads 0, as in kube-state-metrics. Reads the
objects only; which controller wrote a field is none of its business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.exposition.pods import CONDITION_STATUSES, epoch, owner_labels
from sandbox.exposition.text import Exposition, labels
from sandbox.store import Key, Obj


@dataclass(frozen=True)
class Kind:
    key: Key
    prefix: str  # "kube_deployment"
    label: str  # the label naming the object: "deployment", "job_name", ...
    table: str  # per series: "metric_suffix dotted.field.path", then its HELP text indented
    conditions: str = ""  # the family of its status conditions, if exported
    owner: bool = False  # exports <prefix>_owner

    def fields(self) -> list[tuple[str, str, str]]:
        lines = self.table.strip().splitlines()
        fields = []
        for head, help in zip(lines[::2], lines[1::2], strict=True):
            suffix, path = head.split()
            fields.append((suffix, path, help.strip()))
        return fields


KINDS = (
    Kind(
        ("apps", "deployments"),
        "kube_deployment",
        "deployment",
        """
spec_replicas spec.replicas
    Number of desired pods for a deployment.
spec_paused spec.paused
    Whether the deployment is paused.
status_replicas status.replicas
    The number of replicas per deployment.
status_replicas_ready status.readyReplicas
    The number of ready replicas per deployment.
status_replicas_available status.availableReplicas
    The number of available replicas per deployment.
status_replicas_unavailable status.unavailableReplicas
    The number of unavailable replicas per deployment.
status_replicas_updated status.updatedReplicas
    The number of updated replicas per deployment.
status_observed_generation status.observedGeneration
    The generation observed by the controller.
metadata_generation metadata.generation
    Sequence number of the desired state.
""",
        conditions="kube_deployment_status_condition",
    ),
    Kind(
        ("apps", "replicasets"),
        "kube_replicaset",
        "replicaset",
        """
spec_replicas spec.replicas
    Number of desired pods for a ReplicaSet.
status_replicas status.replicas
    The number of replicas per ReplicaSet.
status_ready_replicas status.readyReplicas
    The number of ready replicas per ReplicaSet.
status_fully_labeled_replicas status.fullyLabeledReplicas
    Fully labeled replicas per ReplicaSet.
status_observed_generation status.observedGeneration
    The generation observed by the controller.
""",
        owner=True,
    ),
    Kind(
        ("apps", "statefulsets"),
        "kube_statefulset",
        "statefulset",
        """
replicas spec.replicas
    Number of desired pods for a StatefulSet.
status_replicas status.replicas
    The number of replicas per StatefulSet.
status_replicas_ready status.readyReplicas
    The number of ready replicas per StatefulSet.
status_replicas_current status.currentReplicas
    The number of current replicas per StatefulSet.
status_replicas_updated status.updatedReplicas
    The number of updated replicas per StatefulSet.
status_replicas_available status.availableReplicas
    The number of available replicas per StatefulSet.
status_observed_generation status.observedGeneration
    The generation observed by the controller.
""",
    ),
    Kind(
        ("apps", "daemonsets"),
        "kube_daemonset",
        "daemonset",
        """
status_current_number_scheduled status.currentNumberScheduled
    Nodes running at least one daemon pod and supposed to.
status_desired_number_scheduled status.desiredNumberScheduled
    Nodes that should be running the daemon pod.
status_number_available status.numberAvailable
    Nodes that should run the daemon pod and have it available.
status_number_misscheduled status.numberMisscheduled
    Nodes running a daemon pod but not supposed to.
status_number_ready status.numberReady
    Nodes that should run the daemon pod and have it ready.
status_number_unavailable status.numberUnavailable
    Nodes that should run the daemon pod and have none available.
status_updated_number_scheduled status.updatedNumberScheduled
    Nodes running the updated daemon pod.
""",
    ),
    Kind(
        ("batch", "jobs"),
        "kube_job",
        "job_name",
        """
spec_completions spec.completions
    The desired number of successfully finished pods.
spec_parallelism spec.parallelism
    The maximum desired number of pods the job should run at once.
status_active status.active
    The number of actively running pods.
status_succeeded status.succeeded
    The number of pods which reached Phase Succeeded.
status_failed status.failed
    The number of pods which reached Phase Failed.
""",
        owner=True,
    ),
    Kind(
        ("batch", "cronjobs"),
        "kube_cronjob",
        "cronjob",
        """
spec_suspend spec.suspend
    Suspend flag tells the controller to suspend subsequent executions.
""",
    ),
    Kind(
        ("autoscaling", "horizontalpodautoscalers"),
        "kube_horizontalpodautoscaler",
        "horizontalpodautoscaler",
        """
spec_min_replicas spec.minReplicas
    Lower limit for the number of pods set by the autoscaler.
spec_max_replicas spec.maxReplicas
    Upper limit for the number of pods set by the autoscaler.
status_current_replicas status.currentReplicas
    Current number of replicas managed by this autoscaler.
status_desired_replicas status.desiredReplicas
    Desired number of replicas managed by this autoscaler.
""",
        conditions="kube_horizontalpodautoscaler_status_condition",
    ),
    Kind(
        ("policy", "poddisruptionbudgets"),
        "kube_poddisruptionbudget",
        "poddisruptionbudget",
        """
status_current_healthy status.currentHealthy
    Current number of healthy pods.
status_desired_healthy status.desiredHealthy
    Minimum desired number of healthy pods.
status_pod_disruptions_allowed status.disruptionsAllowed
    Number of pod disruptions currently allowed.
status_expected_pods status.expectedPods
    Total number of pods counted by this budget.
status_observed_generation status.observedGeneration
    The generation observed by the controller.
""",
    ),
)


def field(obj: Obj, path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def render_workloads(out: Exposition, objects: dict[Key, list[Obj]]) -> None:
    for kind in KINDS:
        found = objects.get(kind.key, [])
        _numbers(out, kind, found)
        if kind.owner:
            owner = out.gauge(
                f"{kind.prefix}_owner", f"Information about the {kind.label}'s owner."
            )
            for obj in found:
                base = _base(kind, obj)
                for ref in owner_labels(obj):
                    owner.add(f"{base},{ref}", 1)
        if kind.conditions:
            _conditions(out, kind, found)
    _job_outcomes(out, objects.get(("batch", "jobs"), []))
    _cronjob_status(out, objects.get(("batch", "cronjobs"), []))


def _base(kind: Kind, obj: Obj) -> str:
    meta = obj["metadata"]
    return labels(("namespace", meta["namespace"]), (kind.label, meta["name"]))


def _numbers(out: Exposition, kind: Kind, found: list[Obj]) -> None:
    families = [(out.gauge(f"{kind.prefix}_{s}", help), path) for s, path, help in kind.fields()]
    created = out.gauge(f"{kind.prefix}_created", "Unix creation timestamp")
    for obj in found:
        base = _base(kind, obj)
        for family, path in families:
            value = field(obj, path)
            # an unset spec field has no series; an unset status count is 0 (nothing counted yet)
            if value is not None or not path.startswith("spec."):
                family.add(base, _number(value))
        if stamp := obj["metadata"].get("creationTimestamp"):
            created.add(base, epoch(stamp))


def _conditions(out: Exposition, kind: Kind, found: list[Obj]) -> None:
    family = out.gauge(kind.conditions, f"The current status conditions of a {kind.label}.")
    for obj in found:
        base = _base(kind, obj)
        for condition in field(obj, "status.conditions") or ():
            where = f"{base},{labels(('condition', condition['type']))}"
            for text, status in CONDITION_STATUSES:
                family.add(
                    f'{where},status="{text}"', 1 if condition.get("status") == status else 0
                )


def _job_outcomes(out: Exposition, jobs: list[Obj]) -> None:
    families = {
        "Complete": out.gauge("kube_job_complete", "The job has completed its execution."),
        "Failed": out.gauge("kube_job_failed", "The job has failed its execution."),
    }
    for job in jobs:
        meta = job["metadata"]
        base = labels(("namespace", meta["namespace"]), ("job_name", meta["name"]))
        for condition in field(job, "status.conditions") or ():
            family = families.get(condition["type"])
            if family is None:
                continue
            for text, status in CONDITION_STATUSES:
                family.add(
                    f'{base},condition="{text}"', 1 if condition.get("status") == status else 0
                )


def _cronjob_status(out: Exposition, cronjobs: list[Obj]) -> None:
    active = out.gauge("kube_cronjob_status_active", "Active holds pointers to running jobs.")
    last = out.gauge(
        "kube_cronjob_status_last_schedule_time",
        "LastScheduleTime keeps information of when the job was last successfully scheduled.",
    )
    for cronjob in cronjobs:
        meta = cronjob["metadata"]
        base = labels(("namespace", meta["namespace"]), ("cronjob", meta["name"]))
        active.add(base, len(field(cronjob, "status.active") or ()))
        if stamp := field(cronjob, "status.lastScheduleTime"):
            last.add(base, epoch(stamp))


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    return 0.0
