"""Whether a rollout is done, for the three kinds `kubectl rollout status` watches.

Each function reads one object's spec and status and answers in kubectl's own words, because
people and models already know them: a Deployment by its updated, old and available replicas
and its Progressing condition; a StatefulSet by ready pods, its partition and its current vs
update revision; a DaemonSet by its updated and available scheduled pods. Only the RollingUpdate
strategy has a rollout to watch, as in kubectl. Pure functions of the object; no API calls.
"""

from __future__ import annotations

from core.connection import Json
from core.errors import InvalidArgument
from mcp_servers.kube import rollouts

KINDS = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}
ALIASES = {"deploy": "deployment", "deployments": "deployment", "sts": "statefulset",
           "statefulsets": "statefulset", "ds": "daemonset", "daemonsets": "daemonset"}  # fmt: skip


def kind_of(kind: str) -> str:
    """The canonical lower-case kind for `kind` ("sts", "StatefulSet", "deployments.apps")."""
    word = kind.lower().split(".")[0]
    word = ALIASES.get(word, word)
    if word not in KINDS:
        raise InvalidArgument(
            f"rollout status is for a deployment, statefulset or daemonset, not {kind!r}"
        )
    return word


def status_of(kind: str, obj: Json) -> Json:
    return {"deployment": deployment, "statefulset": statefulset, "daemonset": daemonset}[kind](obj)


def deployment(obj: Json) -> Json:
    name, spec, status = obj["metadata"]["name"], obj.get("spec", {}), obj.get("status", {})
    wanted = spec.get("replicas", 1)
    updated = status.get("updatedReplicas", 0)
    available = status.get("availableReplicas", 0)
    total = status.get("replicas", 0)
    progressing: Json = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Progressing"), {}
    )
    done, failed = False, False
    prefix = f'Waiting for deployment "{name}" rollout to finish: '
    if _unobserved(obj):
        message = "Waiting for deployment spec update to be observed..."
    elif progressing.get("reason") == "ProgressDeadlineExceeded":
        message, failed = f'deployment "{name}" exceeded its progress deadline', True
    elif updated < wanted:
        message = prefix + f"{updated} out of {wanted} new replicas have been updated..."
    elif total > updated:
        message = prefix + f"{total - updated} old replicas are pending termination..."
    elif available < updated:
        message = prefix + f"{available} of {updated} updated replicas are available..."
    else:
        message, done = f'deployment "{name}" successfully rolled out', True
    return {
        "kind": "Deployment",
        "done": done,
        "failed": failed,
        "message": message,
        "revision": str(rollouts.revision(obj) or ""),
        "replicas": wanted,
        "updated": updated,
        "available": available,
        "progressing": {k: progressing.get(k) for k in ("status", "reason", "message")},
    }


def statefulset(obj: Json) -> Json:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    _rolling(spec.get("updateStrategy"), "statefulset")
    wanted = spec.get("replicas", 1)
    ready, updated = status.get("readyReplicas", 0), status.get("updatedReplicas", 0)
    partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
    current, update = status.get("currentRevision", ""), status.get("updateRevision", "")
    done = False
    if _unobserved(obj):
        message = "Waiting for statefulset spec update to be observed..."
    elif ready < wanted:
        message = f"Waiting for {wanted - ready} pods to be ready..."
    elif partition:
        if updated < wanted - partition:
            message = (
                "Waiting for partitioned roll out to finish: "
                f"{updated} out of {wanted - partition} new pods have been updated..."
            )
        else:
            message, done = (
                f"partitioned roll out complete: {updated} new pods have been updated...",
                True,
            )
    elif update != current:
        message = (
            "waiting for statefulset rolling update to complete "
            f"{updated} pods at revision {update}..."
        )
    else:
        count = status.get("currentReplicas", ready)
        message, done = (
            f"statefulset rolling update complete {count} pods at revision {current}...",
            True,
        )
    return {
        "kind": "StatefulSet",
        "done": done,
        "failed": False,
        "message": message,
        "revision": update or current,
        "replicas": wanted,
        "updated": updated,
        "available": status.get("availableReplicas", ready),
    }


def daemonset(obj: Json) -> Json:
    name, spec, status = obj["metadata"]["name"], obj.get("spec", {}), obj.get("status", {})
    _rolling(spec.get("updateStrategy"), "daemonset")
    desired = status.get("desiredNumberScheduled", 0)
    updated = status.get("updatedNumberScheduled", 0)
    available = status.get("numberAvailable", 0)
    done = False
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if _unobserved(obj):
        message = "Waiting for daemon set spec update to be observed..."
    elif updated < desired:
        message = prefix + f"{updated} out of {desired} new pods have been updated..."
    elif available < desired:
        message = prefix + f"{available} of {desired} updated pods are available..."
    else:
        message, done = f'daemon set "{name}" successfully rolled out', True
    return {
        "kind": "DaemonSet",
        "done": done,
        "failed": False,
        "message": message,
        "revision": "",
        "replicas": desired,
        "updated": updated,
        "available": available,
    }


def _unobserved(obj: Json) -> bool:
    observed = (obj.get("status") or {}).get("observedGeneration", 0)
    return not observed or obj["metadata"].get("generation", 0) > observed


def _rolling(strategy: Json | None, kind: str) -> None:
    if (strategy or {}).get("type", "RollingUpdate") != "RollingUpdate":
        raise InvalidArgument(
            f"rollout status is only available for the RollingUpdate strategy; this {kind} "
            f"uses {strategy.get('type') if strategy else None}: read its pods instead"
        )
