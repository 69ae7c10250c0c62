"""Rules for the workload controllers' specs: Deployment, ReplicaSet, StatefulSet, DaemonSet,
Job and CronJob.

What they share: a label selector that must be present and match the pod template's labels, a
pod template validated as a pod spec, and non-negative counters. Immutability on update lives
in `immutable.py`; this module only judges one object on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# `from sandbox import selectors` (not `from sandbox.selectors import ...`): selectors imports
# this package's leaf modules, so whichever side loads first, the other may still be half
# initialised at import time; the module attribute is only read when a rule runs.
from sandbox import selectors
from sandbox.errors import BadRequest, Cause
from sandbox.validation import causes, cron, meta, pods
from sandbox.validation.payload import integer, items, mapping, string_map, text

JOB_RESTART_POLICIES = ("OnFailure", "Never")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
CRONJOB_NAME_MAX = 52  # a DNS-1035 label (63) minus the 11 characters of a Job name suffix


def validate_deployment(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found = _replicated(spec, owner="deployment")
    found += causes.nonnegative("spec.revisionHistoryLimit", integer(spec, "revisionHistoryLimit"))
    deadline = integer(spec, "progressDeadlineSeconds")
    found += causes.nonnegative("spec.progressDeadlineSeconds", deadline)
    if deadline is not None and deadline <= (integer(spec, "minReadySeconds") or 0):
        found.append(
            causes.invalid(
                "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
            )
        )
    return found + _deployment_strategy(mapping(spec, "strategy"), "spec.strategy")


def validate_replica_set(obj: Mapping[str, Any]) -> list[Cause]:
    return _replicated(mapping(obj, "spec"), owner="replicaset")


def validate_stateful_set(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found = _replicated(spec, owner="statefulset")
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in ("OrderedReady", "Parallel"):
        found.append(
            causes.invalid(
                "spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"
            )
        )
    strategy = mapping(spec, "updateStrategy")
    kind = strategy.get("type")
    if kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
        found.append(
            causes.invalid(
                "spec.updateStrategy.rollingUpdate",
                strategy["rollingUpdate"],
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    elif kind is not None and kind not in ("OnDelete", "RollingUpdate"):
        found.append(
            causes.invalid("spec.updateStrategy", kind, "must be 'RollingUpdate' or 'OnDelete'")
        )
    partition = integer(mapping(strategy, "rollingUpdate"), "partition")
    return found + causes.nonnegative("spec.updateStrategy.rollingUpdate.partition", partition)


def validate_daemon_set(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found = _selector_and_template(spec, owner="daemonset")
    found += causes.nonnegative("spec.minReadySeconds", integer(spec, "minReadySeconds"))
    found += causes.nonnegative("spec.revisionHistoryLimit", integer(spec, "revisionHistoryLimit"))
    kind = mapping(spec, "updateStrategy").get("type")
    if kind is not None and kind not in ("OnDelete", "RollingUpdate"):
        found.append(
            causes.not_supported("spec.updateStrategy.type", kind, ("OnDelete", "RollingUpdate"))
        )
    return found


def validate_job(obj: Mapping[str, Any]) -> list[Cause]:
    return job_spec(mapping(obj, "spec"), path="spec")


def validate_cron_job(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    name = text(mapping(obj, "metadata"), "name")
    if len(name) > CRONJOB_NAME_MAX:
        found.append(
            causes.invalid(
                "metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"
            )
        )
    found += _schedule(text(spec, "schedule"), "spec.schedule")
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in CONCURRENCY_POLICIES:
        found.append(causes.not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    for counter in (
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ):
        found += causes.nonnegative(f"spec.{counter}", integer(spec, counter))
    template_spec = mapping(mapping(spec, "jobTemplate"), "spec")
    return found + job_spec(template_spec, path="spec.jobTemplate.spec")


def job_spec(spec: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    for counter in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ):
        found += causes.nonnegative(f"{path}.{counter}", integer(spec, counter))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        found.append(
            causes.not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed"))
        )
    if mode == "Indexed" and integer(spec, "completions") is None:
        found.append(causes.required(f"{path}.completions", "when completion mode is Indexed"))
    # The selector is optional here: the Job strategy generates it when the user gives none,
    # unless they asked to choose it themselves.
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        found += meta.validate_label_selector(selector, path=f"{path}.selector")
    elif spec.get("manualSelector") is True:
        found.append(causes.required(f"{path}.selector"))
    template = spec.get("template")
    if not isinstance(template, Mapping):
        return [*found, causes.required(f"{path}.template")]
    found += _template_matches(selector, template, f"{path}.template")
    found += pods.validate_pod_template(template, path=f"{path}.template")
    policy = mapping(template, "spec").get("restartPolicy")
    policy_path = f"{path}.template.spec.restartPolicy"
    if policy is None:
        found.append(causes.required(policy_path, 'valid values: "OnFailure", "Never"'))
    elif policy == "Always":
        found.append(causes.not_supported(policy_path, policy, JOB_RESTART_POLICIES))
    return found


def _schedule(schedule: str, path: str) -> list[Cause]:
    if not schedule:
        return [causes.required(path)]
    found: list[Cause] = []
    try:
        cron.check(schedule)
    except cron.ScheduleError as err:
        found.append(causes.invalid(path, schedule, str(err)))
    if "TZ" in schedule:
        found.append(
            causes.invalid(
                path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            )
        )
    return found


def _replicated(spec: Mapping[str, Any], *, owner: str) -> list[Cause]:
    found = causes.nonnegative("spec.replicas", integer(spec, "replicas"))
    found += causes.nonnegative("spec.minReadySeconds", integer(spec, "minReadySeconds"))
    return found + _selector_and_template(spec, owner=owner)


def _selector_and_template(spec: Mapping[str, Any], *, owner: str) -> list[Cause]:
    """Controllers that keep pods running: required selector matching an Always-restart template."""
    found: list[Cause] = []
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        found.append(causes.required("spec.selector"))
    else:
        found += meta.validate_label_selector(selector, path="spec.selector")
        if meta.selector_is_empty(selector):
            found.append(
                causes.invalid("spec.selector", selector, f"empty selector is invalid for {owner}")
            )
    template = spec.get("template")
    if not isinstance(template, Mapping):
        return [*found, causes.required("spec.template")]
    found += _template_matches(selector, template, "spec.template")
    claims = [
        str(mapping(claim, "metadata").get("name", ""))
        for claim in items(spec, "volumeClaimTemplates")
    ]
    found += pods.validate_pod_template(template, path="spec.template", claim_volumes=claims)
    template_spec = mapping(template, "spec")
    policy = template_spec.get("restartPolicy")
    if policy in JOB_RESTART_POLICIES:
        found.append(causes.not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
    if template_spec.get("activeDeadlineSeconds") is not None:
        found.append(
            causes.forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {owner} is not Supported",
            )
        )
    return found


def _template_matches(selector: object, template: Mapping[str, Any], path: str) -> list[Cause]:
    if not isinstance(selector, Mapping):
        return []
    try:
        parsed = selectors.LabelSelector.from_object(selector)
    except BadRequest:
        return []  # the selector's own causes already say what is wrong with it
    labels = string_map(mapping(template, "metadata"), "labels")
    if parsed.empty or parsed.matches(labels):
        return []
    return [
        causes.invalid(
            f"{path}.metadata.labels", labels, "`selector` does not match template `labels`"
        )
    ]


def _deployment_strategy(strategy: Mapping[str, Any], path: str) -> list[Cause]:
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is None:
            return []
        return [
            causes.forbidden(
                f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
            )
        ]
    if kind not in (None, "RollingUpdate"):
        return [causes.not_supported(f"{path}.type", kind, ("Recreate", "RollingUpdate"))]
    if not isinstance(rolling, Mapping):
        return []
    at = f"{path}.rollingUpdate"
    unavailable = rolling.get("maxUnavailable", "25%")
    surge = rolling.get("maxSurge", "25%")
    found = causes.int_or_percent(f"{at}.maxUnavailable", unavailable, at_most_100=True)
    found += causes.int_or_percent(f"{at}.maxSurge", surge)
    if _is_zero(unavailable) and _is_zero(surge):
        found.append(
            causes.invalid(f"{at}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    return found


def _is_zero(value: object) -> bool:
    return value == "0%" or (type(value) is int and value == 0)
