"""ConfigMap and Secret references that do not resolve: a container that cannot be created
(CreateContainerConfigError) or a volume that cannot be mounted (FailedMount) because the object,
or one key of it, does not exist.

The kubelet's message names the object and the key; the pod's spec names every key it reads from
that object (`referenced_keys`), which is what a playbook needs to create it. Only names and keys
are read: the snapshot never holds a Secret's values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_servers.kube.diagnosis.evidence import pod_events, pod_finding
from mcp_servers.kube.diagnosis.findings import Evidence, Finding
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot

_MISSING = re.compile(r'(configmap|secret)s? "([^"]+)" not found', re.IGNORECASE)
_MISSING_KEY = re.compile(r"couldn't find key (\S+) in (ConfigMap|Secret) [^/\s]+/(\S+)")


def config_error(
    snapshot: Snapshot, pod: Json, name: str, message: str, where: str
) -> Iterator[Finding]:
    missing = _MISSING.search(message)
    missing_key = _MISSING_KEY.search(message)
    evidence = [Evidence("status", where, f"waiting: CreateContainerConfigError: {message}")]
    if missing:
        kind = "ConfigMap" if missing.group(1).lower() == "configmap" else "Secret"
        yield _missing(snapshot, pod, kind, missing.group(2), evidence, name)
    elif missing_key:
        kind, obj = missing_key.group(2), missing_key.group(3)
        yield _missing(snapshot, pod, kind, obj, evidence, name, key=missing_key.group(1))
    else:
        yield pod_finding(
            snapshot,
            pod,
            "CreateContainerConfigError",
            "critical",
            f"container {name} cannot be created: {message}",
            evidence,
            0.7,
            container=name,
        )


def mount_failures(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    for event in pod_events(snapshot, pod, "FailedMount", limit=1):
        missing = _MISSING.search(event.text)
        if missing:
            kind = "ConfigMap" if missing.group(1).lower() == "configmap" else "Secret"
            yield _missing(snapshot, pod, kind, missing.group(2), [event], "")


def _missing(
    snapshot: Snapshot,
    pod: Json,
    kind: str,
    obj: str,
    evidence: list[Evidence],
    container: str,
    key: str = "",
) -> Finding:
    keys = sorted(referenced_keys(pod, kind, obj))
    what = f"key {key} of {kind} {obj}" if key else f"{kind} {obj}"
    return pod_finding(
        snapshot,
        pod,
        f"Missing{kind}Key" if key else f"Missing{kind}",
        "critical",
        f"pod references {what}, which does not exist",
        evidence,
        0.95,
        container=container,
        object=obj,
        object_kind=kind,
        keys=keys,
        missing_key=key,
    )


def referenced_keys(pod: Json, kind: str, obj: str) -> set[str]:
    """The keys of ConfigMap/Secret `obj` the pod's env and volumes name."""
    ref_field = "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef"
    spec = pod.get("spec") or {}
    keys: set[str] = set()
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for env in container.get("env") or []:
            ref = (env.get("valueFrom") or {}).get(ref_field) or {}
            if ref.get("name") == obj and ref.get("key"):
                keys.add(str(ref["key"]))
    source = "configMap" if kind == "ConfigMap" else "secret"
    for volume in spec.get("volumes") or []:
        vol = volume.get(source) or {}
        if (vol.get("name") or vol.get("secretName")) == obj:
            keys.update(str(item.get("key")) for item in vol.get("items") or [])
    return keys
