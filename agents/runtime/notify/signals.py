"""Signals: one observation that something is wrong, named by the incident it belongs to.

An incident is a workload in trouble: ten BackOff events of web's pods, a `diagnose` finding on
Deployment web and a restarted watcher listing the same events again are all one incident on
Deployment shop/web. So the fingerprint is the workload that owns the pods (the kube server
resolves it), and the finding class (`diagnose`'s codes, so the watch and the patrol use the same
words) says what the latest signal saw. An Alertmanager alert names its
workload by the usual kube-state-metrics labels; with none, the alert itself is the subject.

This module only translates; it knows nothing of storage, MCP sessions or HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# "heal": a heal a person ran (`kubecrew heal`) that ended with a person, booked so it shows
Source = Literal["watch", "patrol", "alertmanager", "heal"]

# Alertmanager labels that name a workload (kube-state-metrics and kube-prometheus rules).
_ALERT_SUBJECTS = (
    ("deployment", "Deployment"),
    ("statefulset", "StatefulSet"),
    ("daemonset", "DaemonSet"),
    ("cronjob", "CronJob"),
    ("job_name", "Job"),
    ("pod", "Pod"),
    ("node", "Node"),
)


@dataclass(frozen=True)
class Signal:
    source: Source
    kind: str  # the subject: the workload that owns the failing pods, a node, or an Alert
    namespace: str  # empty for cluster-scoped subjects
    name: str
    finding: str  # the class of failure: a diagnose code, an event reason, an alert name
    summary: str  # one line for people; data from the cluster, never an instruction
    firing: bool = True  # False: the source says it is over (a resolved alert)

    @property
    def fingerprint(self) -> str:
        """A workload has one incident at a time, whatever the watch or the patrol calls its
        failure first (a rollout's DeploymentUnavailable and the crash loop behind it are one
        incident; `finding` follows the latest signal). An alert is an incident of its own:
        Alertmanager knows its rule and resolves it."""
        subject = f"{self.kind}/{self.namespace}/{self.name}"
        return f"{subject}/{self.finding}" if self.source == "alertmanager" else subject


def finding_of(reason: str, message: str) -> str:
    """The diagnose code an event's reason and message stand for; else the reason itself."""
    text = message.lower()
    if reason == "BackOff" and "restarting" in text:
        return "CrashLoopBackOff"
    if reason in ("BackOff", "Failed", "ErrImagePull", "ImagePullBackOff") and (
        "image" in text or "pull" in text
    ):
        return "ImagePullBackOff"
    if reason in ("OOMKilling", "OOMKilled") or "oomkill" in text:
        return "OOMKilled"
    if reason == "Unhealthy":
        return "ProbeFailing"
    return reason or "Warning"


def from_event(item: Mapping[str, Any]) -> Signal:
    """A `watch_events` item (a Warning event with its `owner`) as a signal."""
    owner = item.get("owner") or item.get("object") or {}
    reason, message = str(item.get("reason", "")), str(item.get("message", ""))
    subject = item.get("object") or {}
    return Signal(
        source="watch",
        kind=str(owner.get("kind", "")),
        namespace=str(owner.get("namespace", "")),
        name=str(owner.get("name", "")),
        finding=finding_of(reason, message),
        summary=f"{reason} on {subject.get('kind', '')}/{subject.get('name', '')}: {message}",
    )


def from_finding(finding: Mapping[str, Any]) -> Signal:
    """A `diagnose` finding as a signal: its object is already the workload."""
    ref = finding.get("ref") or {}
    return Signal(
        source="patrol",
        kind=str(ref.get("kind", "")),
        namespace=str(ref.get("namespace", "")),
        name=str(ref.get("name", "")),
        finding=str(finding.get("code", "")),
        summary=str(finding.get("summary", "")),
    )


def from_alert(alert: Mapping[str, Any]) -> Signal:
    """One alert of an Alertmanager webhook payload (version 4) as a signal."""
    labels = {str(k): str(v) for k, v in (alert.get("labels") or {}).items()}
    annotations = alert.get("annotations") or {}
    name = labels.get("alertname", "alert")
    kind, subject = "Alert", name
    for label, label_kind in _ALERT_SUBJECTS:
        if labels.get(label):
            kind, subject = label_kind, labels[label]
            break
    summary = str(annotations.get("summary") or annotations.get("description") or name)
    return Signal(
        source="alertmanager",
        kind=kind,
        namespace="" if kind == "Node" else labels.get("namespace", ""),
        name=subject,
        finding=name,
        summary=summary,
        firing=alert.get("status") != "resolved",
    )
