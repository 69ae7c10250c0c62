"""Validation of workloads: Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
CronJobs (with every cron schedule rule), PodDisruptionBudgets and HorizontalPodAutoscalers,
reported with Kubernetes' field paths and wording.

Each case starts from the valid object of its kind in `GOOD` and changes one thing, given as
dotted field paths to set (None deletes), so a case names exactly the field it breaks. The case
table is kept out of the formatter: one case per two or three lines reads as a table.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.validation_objects import (
    FORBID,
    GOOD,
    INV,
    REQ,
    UNS,
    check_reported,
    edit,
    params,
    reported,
)

# (id, kind, changes to the good object, the start of one expected "field: message", reason)
# fmt: off
BAD: list[tuple[Any, ...]] = [
    # Deployment, ReplicaSet, StatefulSet, DaemonSet
    ("deployment-negative-replicas", "Deployment", {"spec.replicas": -1},
     "spec.replicas: Invalid value: -1: must be greater than or equal to 0", INV),
    ("deployment-selector-missing", "Deployment", {"spec.selector": None},
     "spec.selector: Required value", REQ),
    ("deployment-selector-mismatch", "Deployment", {"spec.selector.matchLabels": {"app": "db"}},
     'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
     "template `labels`", INV),
    ("deployment-empty-selector", "Deployment", {"spec.selector": {}},
     "spec.selector: Invalid value: {}: empty selector is invalid for deployment", INV),
    ("deployment-selector-operator", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "Like"}]},
     'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector '
     "operator", INV),
    ("deployment-selector-in-without-values", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "In"}]},
     "spec.selector.matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'", REQ),
    ("deployment-selector-exists-with-values", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
     "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when "
     "`operator` is 'Exists' or 'DoesNotExist'", FORBID),
    ("deployment-template-missing", "Deployment", {"spec.template": None},
     "spec.template: Required value", REQ),
    ("deployment-template-image", "Deployment", {"spec.template.spec.containers": [{"name": "a"}]},
     "spec.template.spec.containers[0].image: Required value", REQ),
    ("deployment-template-label", "Deployment", {"spec.template.metadata.labels.app": "a b"},
     'spec.template.metadata.labels: Invalid value: "a b": a valid label must be', INV),
    ("deployment-template-restart-never", "Deployment",
     {"spec.template.spec.restartPolicy": "Never"},
     'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
     '"Always"', UNS),
    ("deployment-template-active-deadline", "Deployment",
     {"spec.template.spec.activeDeadlineSeconds": 5},
     "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in deployment "
     "is not Supported", FORBID),
    ("deployment-strategy-type", "Deployment", {"spec.strategy": {"type": "BlueGreen"}},
     'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", '
     '"RollingUpdate"', UNS),
    ("deployment-surge-and-unavailable-zero", "Deployment",
     {"spec.strategy.rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}},
     'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when '
     "`maxSurge` is 0", INV),
    ("deployment-unavailable-over-100", "Deployment",
     {"spec.strategy.rollingUpdate.maxUnavailable": "150%"},
     'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater '
     "than 100%", INV),
    ("deployment-surge-negative", "Deployment", {"spec.strategy.rollingUpdate.maxSurge": -1},
     "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal "
     "to 0", INV),
    ("deployment-recreate-with-rolling", "Deployment", {"spec.strategy.type": "Recreate"},
     "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
     "'Recreate'", FORBID),
    ("deployment-deadline-below-min-ready", "Deployment",
     {"spec.progressDeadlineSeconds": 5, "spec.minReadySeconds": 10},
     "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds", INV),
    ("deployment-history-negative", "Deployment", {"spec.revisionHistoryLimit": -1},
     "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("replicaset-selector-mismatch", "ReplicaSet",
     {"spec.template.metadata.labels": {"app": "other"}},
     'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not '
     "match template `labels`", INV),
    ("replicaset-min-ready", "ReplicaSet", {"spec.minReadySeconds": -5},
     "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0", INV),
    ("statefulset-pod-management", "StatefulSet", {"spec.podManagementPolicy": "Random"},
     "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or "
     "'Parallel'", INV),
    ("statefulset-update-strategy", "StatefulSet", {"spec.updateStrategy": {"type": "Sideways"}},
     "spec.updateStrategy: Invalid value: \"Sideways\": must be 'RollingUpdate' or 'OnDelete'",
     INV),
    ("statefulset-on-delete-with-rolling", "StatefulSet", {"spec.updateStrategy.type": "OnDelete"},
     'spec.updateStrategy.rollingUpdate: Invalid value: {"partition":0}: only allowed for '
     "updateStrategy 'RollingUpdate'", INV),
    ("statefulset-partition", "StatefulSet", {"spec.updateStrategy.rollingUpdate.partition": -1},
     "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than", INV),
    ("statefulset-replicas", "StatefulSet", {"spec.replicas": -2},
     "spec.replicas: Invalid value: -2: must be greater than or equal to 0", INV),
    ("statefulset-empty-selector", "StatefulSet", {"spec.selector": {"matchLabels": {}}},
     'spec.selector: Invalid value: {"matchLabels":{}}: empty selector is invalid for '
     "statefulset", INV),
    ("daemonset-expression-mismatch", "DaemonSet",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "NotIn",
                                          "values": ["web"]}]},
     'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
     "template `labels`", INV),
    ("daemonset-update-strategy", "DaemonSet", {"spec.updateStrategy.type": "Recreate"},
     'spec.updateStrategy.type: Unsupported value: "Recreate": supported values: "OnDelete", '
     '"RollingUpdate"', UNS),
    # Job and CronJob
    ("job-restart-always", "Job", {"spec.template.spec.restartPolicy": "Always"},
     'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
     '"OnFailure", "Never"', UNS),
    ("job-restart-missing", "Job", {"spec.template.spec.restartPolicy": None},
     'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"', REQ),
    ("job-parallelism", "Job", {"spec.parallelism": -1},
     "spec.parallelism: Invalid value: -1: must be greater than or equal to 0", INV),
    ("job-completions", "Job", {"spec.completions": -3},
     "spec.completions: Invalid value: -3: must be greater than or equal to 0", INV),
    ("job-backoff", "Job", {"spec.backoffLimit": -1},
     "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("job-completion-mode", "Job", {"spec.completionMode": "Ordered"},
     'spec.completionMode: Unsupported value: "Ordered": supported values: "NonIndexed", '
     '"Indexed"', UNS),
    ("job-indexed-without-completions", "Job",
     {"spec.completionMode": "Indexed", "spec.completions": None},
     "spec.completions: Required value: when completion mode is Indexed", REQ),
    ("job-manual-selector-mismatch", "Job", {"spec.selector": {"matchLabels": {"job": "x"}}},
     "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template "
     "`labels`", INV),
    ("job-template-missing", "Job", {"spec.template": None},
     "spec.template: Required value", REQ),
    ("cronjob-schedule-missing", "CronJob", {"spec.schedule": None},
     "spec.schedule: Required value", REQ),
    ("cronjob-schedule-fields", "CronJob", {"spec.schedule": "every day"},
     'spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: '
     "[every day]", INV),
    ("cronjob-name-too-long", "CronJob", {"metadata.name": "n" * 53},
     f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters', INV),
    ("cronjob-tz-in-schedule", "CronJob", {"spec.schedule": "TZ=UTC 0 * * * *"},
     'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, '
     "use timeZone field instead", INV),
    ("cronjob-concurrency", "CronJob", {"spec.concurrencyPolicy": "Sometimes"},
     'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
     '"Forbid", "Replace"', UNS),
    ("cronjob-history-limit", "CronJob", {"spec.failedJobsHistoryLimit": -1},
     "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("cronjob-template-restart", "CronJob",
     {"spec.jobTemplate.spec.template.spec.restartPolicy": "Always"},
     'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": '
     'supported values: "OnFailure", "Never"', UNS),
    # PodDisruptionBudget and HorizontalPodAutoscaler
    ("pdb-both-set", "PodDisruptionBudget", {"spec.maxUnavailable": 1},
     'spec: Invalid value: {"maxUnavailable":1,"minAvailable":"50%","selector":{"matchLabels":'
     '{"app":"web"}}}: minAvailable and maxUnavailable cannot be both set', INV),
    ("pdb-percent-format", "PodDisruptionBudget", {"spec.minAvailable": "half"},
     'spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric '
     "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
     "'[0-9]+%')", INV),
    ("pdb-negative", "PodDisruptionBudget", {"spec.minAvailable": -1},
     "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0", INV),
    ("pdb-over-100", "PodDisruptionBudget", {"spec.minAvailable": "101%"},
     'spec.minAvailable: Invalid value: "101%": must not be greater than 100%', INV),
    ("pdb-eviction-policy", "PodDisruptionBudget", {"spec.unhealthyPodEvictionPolicy": "Never"},
     'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
     '"AlwaysAllow", "IfHealthyBudget"', UNS),
    ("hpa-max-below-min", "HorizontalPodAutoscaler", {"spec.maxReplicas": 1},
     "spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`", INV),
    ("hpa-min-zero", "HorizontalPodAutoscaler", {"spec.minReplicas": 0},
     "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1", INV),
    ("hpa-max-missing", "HorizontalPodAutoscaler",
     {"spec.maxReplicas": None, "spec.minReplicas": None},
     "spec.maxReplicas: Invalid value: 0: must be greater than 0", INV),
    ("hpa-target-missing", "HorizontalPodAutoscaler", {"spec.scaleTargetRef": None},
     "spec.scaleTargetRef.kind: Required value", REQ),
    ("hpa-target-name", "HorizontalPodAutoscaler", {"spec.scaleTargetRef.name": "a%b"},
     "spec.scaleTargetRef.name: Invalid value: \"a%b\": may not contain '%'", INV),
    ("hpa-metric-type", "HorizontalPodAutoscaler", {"spec.metrics": [{"type": "Magic"}]},
     'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
     '"ContainerResource", "External", "Object", "Pods", "Resource"', UNS),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes", "expected", "reason"), params(BAD))
def test_invalid_objects_are_reported_in_kubernetes_words(
    kind: str, changes: dict[str, Any], expected: str, reason: str
) -> None:
    check_reported(kind, changes, expected, reason)


# fmt: off
SCHEDULES: list[tuple[str, str, str]] = [
    ("minute-range", "60 * * * *", "end of range (60) above maximum (59): 60"),
    ("reversed", "* 5-1 * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("day-zero", "* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("month-13", "* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("weekday-7", "* * * * 7", "end of range (7) above maximum (6): 7"),
    ("zero-step", "*/0 * * * *", "step of range should be a positive number: */0"),
    ("hyphens", "1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("slashes", "1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("word", "x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("negative", "-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid'),
    ("descriptor", "@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("every-bad-duration", "@every soon",
     'failed to parse duration @every soon: time: invalid duration "soon"'),
    ("four-fields", "* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
]
# fmt: on


@pytest.mark.parametrize(("schedule", "message"), params(SCHEDULES))
def test_cron_schedules_are_checked_like_kubernetes(schedule: str, message: str) -> None:
    obj = edit(GOOD["CronJob"], {"spec.schedule": schedule})
    expected = f'spec.schedule: Invalid value: "{schedule}": {message}'
    assert any(m.startswith(expected) for m in reported("CronJob", obj)), reported("CronJob", obj)


def test_statefulset_containers_may_mount_their_volume_claim_templates() -> None:
    mount = [{"name": "data", "mountPath": "/var/lib/data"}]
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    sts = edit(GOOD["StatefulSet"], {"spec.volumeClaimTemplates": [claim]})
    sts["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = mount
    assert reported("StatefulSet", sts) == []
    deployment = edit(GOOD["Deployment"], {})
    deployment["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = mount
    assert 'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"' in reported(
        "Deployment", deployment
    )
