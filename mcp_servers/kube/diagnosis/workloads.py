"""Workload analyzers: Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs.

A controller's own status says what its pods' problems amount to: a Deployment not Available or
past its progress deadline, fewer ready replicas than wanted, a ReplicaSet refused by quota
(ReplicaFailure), a Job failed (BackoffLimitExceeded, DeadlineExceeded), a CronJob suspended or
whose last Job failed. The why, when it is in the pods, is the pod analyzers' Finding on the same
object; these say how far the workload is from what was asked. A failed Job's pods are over
(no pod rule looks at them), so its Finding carries their exit codes and last log lines itself.

It knows workload status shapes; nothing of pods' internals, fixes or MCP.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    for deployment in snapshot.of("deployments"):
        found.extend(_deployment(deployment))
    for replicaset in snapshot.of("replicasets"):
        found.extend(_replica_failure(replicaset, "ReplicaSet"))
    for kind, plural in (("StatefulSet", "statefulsets"), ("DaemonSet", "daemonsets")):
        for obj in snapshot.of(plural):
            found.extend(_ready_gap(obj, kind))
    for job in snapshot.of("jobs"):
        found.extend(_job(snapshot, job))
    for cronjob in snapshot.of("cronjobs"):
        found.extend(_cronjob(snapshot, cronjob))
    return found


def _ref(obj: Json, kind: str) -> ObjectRef:
    return ObjectRef(kind, name_of(obj), namespace_of(obj))


def _conditions(obj: Json) -> dict[str, Json]:
    return {str(c.get("type")): c for c in (obj.get("status") or {}).get("conditions") or []}


def _cond_evidence(obj: Json, kind: str, cond: Json) -> Evidence:
    return Evidence(
        "condition",
        f"{kind} {name_of(obj)} condition {cond.get('type')}",
        f"{cond.get('status')}/{cond.get('reason')}: {cond.get('message')}",
    )


def _deployment(deployment: Json) -> Iterator[Finding]:
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    if spec.get("paused"):
        yield Finding(
            "DeploymentPaused",
            _ref(deployment, "Deployment"),
            "low",
            "rollout is paused; changes to the template do not roll out",
            (),
            0.9,
        )
    wanted = int(spec.get("replicas", 1) or 0)
    ready = int(status.get("readyReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    conditions = _conditions(deployment)
    progressing, available = conditions.get("Progressing", {}), conditions.get("Available", {})
    evidence = [_cond_evidence(deployment, "Deployment", c) for c in (available, progressing) if c]
    evidence.append(
        Evidence(
            "status",
            f"Deployment {name_of(deployment)}",
            f"replicas wanted {wanted}, updated {updated}, ready {ready}, "
            f"unavailable {status.get('unavailableReplicas') or 0}",
        )
    )
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        yield Finding(
            "ProgressDeadlineExceeded",
            _ref(deployment, "Deployment"),
            "high",
            "rollout made no progress within its deadline",
            tuple(evidence),
            0.95,
            details={"ready": ready, "wanted": wanted},
        )
    elif available.get("status") == "False":
        yield Finding(
            "DeploymentUnavailable",
            _ref(deployment, "Deployment"),
            "high",
            f"Deployment has not minimum availability ({ready}/{wanted} ready)",
            tuple(evidence),
            0.9,
            details={"ready": ready, "wanted": wanted},
        )
    elif wanted and ready < wanted:
        yield Finding(
            "ReplicasMismatch",
            _ref(deployment, "Deployment"),
            "medium",
            f"{ready} of {wanted} replicas ready",
            tuple(evidence),
            0.7,
            details={"ready": ready, "wanted": wanted},
        )
    yield from _replica_failure(deployment, "Deployment")


def _replica_failure(obj: Json, kind: str) -> Iterator[Finding]:
    cond = _conditions(obj).get("ReplicaFailure")
    if cond and cond.get("status") == "True":
        yield Finding(
            "ReplicaFailure",
            _ref(obj, kind),
            "high",
            f"pods cannot be created: {cond.get('message')}",
            (_cond_evidence(obj, kind, cond),),
            0.95,
        )


def _ready_gap(obj: Json, kind: str) -> Iterator[Finding]:
    status = obj.get("status") or {}
    if kind == "DaemonSet":
        wanted = int(status.get("desiredNumberScheduled") or 0)
        ready = int(status.get("numberReady") or 0)
    else:
        wanted = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        ready = int(status.get("readyReplicas") or 0)
    if wanted and ready < wanted:
        yield Finding(
            "ReplicasMismatch",
            _ref(obj, kind),
            "medium" if ready else "high",
            f"{ready} of {wanted} pods ready",
            (Evidence("status", f"{kind} {name_of(obj)}", f"ready {ready}/{wanted}"),),
            0.7,
            details={"ready": ready, "wanted": wanted},
        )


def _job(snapshot: Snapshot, job: Json) -> Iterator[Finding]:
    cond = _conditions(job).get("Failed")
    if cond and cond.get("status") == "True":
        status = job.get("status") or {}
        yield Finding(
            "JobFailed",
            _ref(job, "Job"),
            "high",
            f"Job failed: {cond.get('reason')} ({status.get('failed') or 0} failed pods)",
            (_cond_evidence(job, "Job", cond), *_failed_pod(snapshot, job)),
            0.95,
            details={"reason": cond.get("reason")},
        )


def _failed_pod(snapshot: Snapshot, job: Json) -> list[Evidence]:
    """How the Job's last failed pod ended: exit code and the last lines it printed."""
    namespace, name = namespace_of(job), name_of(job)
    failed = [
        p
        for p in snapshot.pods_in(namespace)
        if (p.get("status") or {}).get("phase") == "Failed"
        and any(
            o.get("kind") == "Job" and o.get("name") == name
            for o in (p.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    if not failed:
        return []
    pod = max(failed, key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""))
    evidence = []
    for cstatus in (pod.get("status") or {}).get("containerStatuses") or []:
        ended = (cstatus.get("state") or {}).get("terminated") or {}
        where = f"Pod {name_of(pod)} container {cstatus.get('name')}"
        evidence.append(
            Evidence(
                "status",
                where,
                f"terminated: exit code {ended.get('exitCode')}, reason {ended.get('reason')}",
            )
        )
        lines = snapshot.log_tail(namespace, name_of(pod), str(cstatus.get("name")), previous=False)
        evidence.extend(Evidence("log", where, line) for line in lines[-5:])
    return evidence


def _cronjob(snapshot: Snapshot, cronjob: Json) -> Iterator[Finding]:
    ref = _ref(cronjob, "CronJob")
    spec, status = cronjob.get("spec") or {}, cronjob.get("status") or {}
    if spec.get("suspend"):
        yield Finding(
            "CronJobSuspended",
            ref,
            "low",
            "CronJob is suspended: no Job is started",
            (
                Evidence("spec", str(ref), f"spec.suspend: true, schedule {spec.get('schedule')}"),
                Evidence(
                    "status",
                    str(ref),
                    f"last scheduled {status.get('lastScheduleTime') or 'never'}",
                ),
            ),
            0.9,
            details={"schedule": spec.get("schedule")},
        )
    owned = [
        j
        for j in snapshot.of("jobs")
        if namespace_of(j) == ref.namespace
        and any(
            o.get("kind") == "CronJob" and o.get("name") == ref.name
            for o in (j.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    owned.sort(key=lambda j: str((j.get("metadata") or {}).get("creationTimestamp") or ""))
    if owned:
        last = owned[-1]
        cond = _conditions(last).get("Failed")
        if cond and cond.get("status") == "True":
            yield Finding(
                "CronJobFailing",
                ref,
                "medium",
                f"the last Job {name_of(last)} failed: {cond.get('reason')}",
                (_cond_evidence(last, "Job", cond), *_failed_pod(snapshot, last)),
                0.85,
                related=(_ref(last, "Job"),),
                details={"job": name_of(last)},
            )
