"""Rows for the controllers that run pods: Deployments, ReplicaSets, StatefulSets, DaemonSets,
Jobs and CronJobs, plus ControllerRevisions and PodDisruptionBudgets.

Fields Kubernetes would have defaulted before storing (`spec.replicas` 1, `suspend` false, ...)
read as their defaults when absent, so an object stored without defaulting still prints as it
would on a real cluster. This module reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import (
    NONE,
    bool_text,
    condition_status,
    containers_and_images,
    format_labels,
    format_selector,
    items,
    selector_string,
    sub,
    template_spec,
)
from sandbox.tables.durations import epoch, human_duration, since
from sandbox.tables.printer import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    SELECTOR,
    Column,
    Printer,
    age_of,
    name_of,
)


def _replicas(obj: Mapping[str, Any]) -> int:
    value = sub(obj, "spec").get("replicas")
    return 1 if value is None else int(value)


def _count(obj: Mapping[str, Any], key: str) -> int:
    return int(sub(obj, "status").get(key) or 0)


def _deployment(obj: dict[str, Any], now: float) -> list[Any]:
    names, images = containers_and_images(template_spec(obj))
    return [
        name_of(obj),
        f"{_count(obj, 'readyReplicas')}/{_replicas(obj)}",
        _count(obj, "updatedReplicas"),
        _count(obj, "availableReplicas"),
        age_of(obj, now),
        names,
        images,
        selector_string(sub(obj, "spec", "selector")),
    ]


def _replica_set(obj: dict[str, Any], now: float) -> list[Any]:
    names, images = containers_and_images(template_spec(obj))
    return [
        name_of(obj),
        _replicas(obj),
        _count(obj, "replicas"),
        _count(obj, "readyReplicas"),
        age_of(obj, now),
        names,
        images,
        format_selector(sub(obj, "spec", "selector")),
    ]


def _stateful_set(obj: dict[str, Any], now: float) -> list[Any]:
    names, images = containers_and_images(template_spec(obj))
    ready = f"{_count(obj, 'readyReplicas')}/{_replicas(obj)}"
    return [name_of(obj), ready, age_of(obj, now), names, images]


def _daemon_set(obj: dict[str, Any], now: float) -> list[Any]:
    pod_spec = template_spec(obj)
    names, images = containers_and_images(pod_spec)
    counts = [
        _count(obj, key)
        for key in (
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "updatedNumberScheduled",
            "numberAvailable",
        )
    ]
    node_selector = format_labels(pod_spec.get("nodeSelector"))
    return [
        name_of(obj),
        *counts,
        node_selector,
        age_of(obj, now),
        names,
        images,
        format_selector(sub(obj, "spec", "selector")),
    ]


def job_status(obj: Mapping[str, Any]) -> str:
    conditions = items(sub(obj, "status"), "conditions")

    def holds(kind: str) -> bool:
        return condition_status(conditions, kind) == "True"

    if holds("Complete"):
        return "Complete"
    if holds("Failed"):
        return "Failed"
    if sub(obj, "metadata").get("deletionTimestamp") is not None:
        return "Terminating"
    if holds("Suspended"):
        return "Suspended"
    return "FailureTarget" if holds("FailureTarget") else "Running"


def _completions(spec: Mapping[str, Any], succeeded: int) -> str:
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = int(spec.get("parallelism") or 0)
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(status: Mapping[str, Any], now: float) -> str:
    started = epoch(status.get("startTime"))
    if started is None:
        return ""
    finished = epoch(status.get("completionTime"))
    return human_duration((now if finished is None else finished) - started)


def _job(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = sub(obj, "spec"), sub(obj, "status")
    names, images = containers_and_images(template_spec(obj))
    return [
        name_of(obj),
        job_status(obj),
        _completions(spec, int(status.get("succeeded") or 0)),
        _job_duration(status, now),
        age_of(obj, now),
        names,
        images,
        format_selector(spec.get("selector")),
    ]


def _cron_job(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = sub(obj, "spec"), sub(obj, "status")
    job_spec = sub(spec, "jobTemplate", "spec")
    names, images = containers_and_images(sub(job_spec, "template", "spec"))
    last = status.get("lastScheduleTime")
    return [
        name_of(obj),
        spec.get("schedule", ""),
        spec.get("timeZone") or NONE,
        bool_text(spec.get("suspend", False)),
        len(items(status, "active")),
        NONE if last is None else since(last, now),
        age_of(obj, now),
        names,
        images,
        format_selector(job_spec.get("selector")),
    ]


def _controller_name(obj: Mapping[str, Any]) -> str:
    for owner in items(sub(obj, "metadata"), "ownerReferences"):
        if owner.get("controller"):
            api_version = str(owner.get("apiVersion", ""))
            group = api_version.rpartition("/")[0]
            kind = str(owner.get("kind", ""))
            if not group and not kind:
                return str(owner.get("name", ""))
            qualified = f"{kind}.{group}" if group else kind
            return f"{qualified.lower()}/{owner.get('name', '')}"
    return NONE


def _controller_revision(obj: dict[str, Any], now: float) -> list[Any]:
    return [name_of(obj), _controller_name(obj), int(obj.get("revision") or 0), age_of(obj, now)]


def _pdb(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    minimum, maximum = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        name_of(obj),
        "N/A" if minimum is None else str(minimum),
        "N/A" if maximum is None else str(maximum),
        _count(obj, "disruptionsAllowed"),
        age_of(obj, now),
    ]


_DESIRED = "Desired number of replicas."
_CURRENT = "Number of replicas that exist."
_READY_COUNT = "Number of replicas that are ready."

PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("apps", "Deployment"): Printer(
        (
            NAME,
            Column("Ready", "Ready replicas out of desired replicas."),
            Column("Up-to-date", "Replicas running the latest pod template."),
            Column("Available", "Replicas available to serve."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _deployment,
    ),
    ("apps", "ReplicaSet"): Printer(
        (
            NAME,
            Column("Desired", _DESIRED, type="integer"),
            Column("Current", _CURRENT, type="integer"),
            Column("Ready", _READY_COUNT, type="integer"),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _replica_set,
    ),
    ("apps", "StatefulSet"): Printer(
        (NAME, Column("Ready", "Ready replicas out of desired replicas."), AGE, CONTAINERS, IMAGES),
        _stateful_set,
    ),
    ("apps", "DaemonSet"): Printer(
        (
            NAME,
            Column("Desired", "Nodes that should run the daemon pod.", type="integer"),
            Column("Current", "Nodes running at least one daemon pod.", type="integer"),
            Column("Ready", "Nodes whose daemon pod is ready.", type="integer"),
            Column("Up-to-date", "Nodes running the latest daemon pod.", type="integer"),
            Column("Available", "Nodes whose daemon pod is available.", type="integer"),
            Column("Node Selector", "The node selector of the pod template."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _daemon_set,
    ),
    ("apps", "ControllerRevision"): Printer(
        (
            NAME,
            Column("Controller", "The object that owns this revision."),
            Column("Revision", "The revision number."),
            AGE,
        ),
        _controller_revision,
    ),
    ("batch", "Job"): Printer(
        (
            NAME,
            Column("Status", "The job's state, from its conditions."),
            Column("Completions", "Succeeded pods out of the completions wanted."),
            Column("Duration", "Time the job ran, or has been running."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _job,
    ),
    ("batch", "CronJob"): Printer(
        (
            NAME,
            Column("Schedule", "The cron schedule."),
            Column("Timezone", "The time zone the schedule is read in."),
            Column("Suspend", "Whether new runs are suspended.", type="boolean"),
            Column("Active", "Jobs currently running.", type="integer"),
            Column("Last Schedule", "Time since a job was last scheduled."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _cron_job,
    ),
    ("policy", "PodDisruptionBudget"): Printer(
        (
            NAME,
            Column("Min Available", "Pods that must stay available."),
            Column("Max Unavailable", "Pods that may be unavailable."),
            Column("Allowed Disruptions", "Pods that may be disrupted now.", type="integer"),
            AGE,
        ),
        _pdb,
    ),
}
