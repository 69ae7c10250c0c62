"""Defaulting: the fields Kubernetes fills in when a client leaves them out.

Only the defaults that people and controllers actually read are here (restart policy, pull
policy, rollout strategy, service type, ...), so `kubectl get -o yaml` looks like a real cluster
and the simulated controllers can rely on them. Defaults apply on every write, like the API
server's decoding step; status is only initialised on create.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from sandbox.jsoncopy import deep_copy

Obj = dict[str, Any]


def apply(kind: str, obj: Obj, *, creating: bool) -> Obj:
    fill = _BY_KIND.get(kind)
    if fill is None:
        return obj
    out = deep_copy(obj)
    fill(out, creating)
    return out


def _pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    if "serviceAccountName" in spec or "serviceAccount" not in spec:
        spec.setdefault("serviceAccountName", "default")
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _container(container)


def _container(container: Obj) -> None:
    image = str(container.get("image", ""))
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(probe_name)
        if isinstance(probe, dict):
            probe.setdefault("timeoutSeconds", 1)
            probe.setdefault("periodSeconds", 10)
            probe.setdefault("successThreshold", 1)
            probe.setdefault("failureThreshold", 3)


def _template(obj: Obj) -> None:
    template = obj.setdefault("spec", {}).setdefault("template", {})
    _pod_spec(template.setdefault("spec", {}))


def _pod(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    _pod_spec(spec)
    spec.setdefault(
        "tolerations",
        [
            {
                "key": f"node.kubernetes.io/{taint}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for taint in ("not-ready", "unreachable")
        ],
    )
    spec.setdefault("priority", 0)
    if creating:
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def qos_class(spec: Obj) -> str:
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    requests = [c.get("resources", {}).get("requests") or {} for c in containers]
    limits = [c.get("resources", {}).get("limits") or {} for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        lim.get(r) and (req.get(r, lim.get(r)) == lim.get(r))
        for req, lim in zip(requests, limits, strict=True)
        for r in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _deployment(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxSurge", "25%")
        rolling.setdefault("maxUnavailable", "25%")
    _template(obj)


def _replicaset(obj: Obj, creating: bool) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


def _statefulset(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {"partition": 0})
    _template(obj)


def _daemonset(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
    _template(obj)


def _job_spec(spec: Obj) -> None:
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if "completions" not in spec and spec["parallelism"] == 1:
        spec["completions"] = 1
    template_spec = spec.setdefault("template", {}).setdefault("spec", {})
    _pod_spec(template_spec)


def _job(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    _job_spec(spec)
    meta = obj.get("metadata") or {}
    if creating and not spec.get("manualSelector") and not spec.get("selector") and "uid" in meta:
        # What the API server's Job strategy does: a selector no other pod can match, and the
        # template labelled to fit it (the newer batch.kubernetes.io/ keys and the legacy ones).
        labels = {
            "batch.kubernetes.io/controller-uid": meta["uid"],
            "batch.kubernetes.io/job-name": meta.get("name", ""),
            "controller-uid": meta["uid"],
            "job-name": meta.get("name", ""),
        }
        template_meta = spec["template"].setdefault("metadata", {})
        template_meta["labels"] = {**(template_meta.get("labels") or {}), **labels}
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": meta["uid"]}}


def _cronjob(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    _job_spec(spec.setdefault("jobTemplate", {}).setdefault("spec", {}))


def _service(obj: Obj, creating: bool) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        if "port" in port:
            port.setdefault("targetPort", port["port"])
    if creating:
        obj.setdefault("status", {"loadBalancer": {}})


def _namespace(obj: Obj, creating: bool) -> None:
    name = obj["metadata"].get("name", "")
    labels = obj["metadata"].setdefault("labels", {})
    labels.setdefault("kubernetes.io/metadata.name", name)
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    if creating:
        obj["status"] = {"phase": "Active"}


def _pvc(obj: Obj, creating: bool) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    if creating:
        obj["status"] = {"phase": "Pending"}


def _secret(obj: Obj, creating: bool) -> None:
    obj.setdefault("type", "Opaque")
    # `stringData` is write-only: the API server folds it into `data` (base64, winning over a
    # `data` key of the same name) and never stores or returns it.
    plain = obj.pop("stringData", None)
    if isinstance(plain, dict) and plain:
        encoded = {k: base64.b64encode(str(v).encode()).decode() for k, v in plain.items()}
        obj["data"] = {**(obj.get("data") or {}), **encoded}


_BY_KIND: dict[str, Callable[[Obj, bool], None]] = {
    "Pod": _pod,
    "Deployment": _deployment,
    "ReplicaSet": _replicaset,
    "StatefulSet": _statefulset,
    "DaemonSet": _daemonset,
    "Job": _job,
    "CronJob": _cronjob,
    "Service": _service,
    "Namespace": _namespace,
    "PersistentVolumeClaim": _pvc,
    "Secret": _secret,
}
