"""The environment a container's processes see, as `env` prints it in an exec.

Built as the kubelet and the runtime build it: the image's `PATH` and the runtime's `HOSTNAME`
(the pod name), then the Service link variables (`KUBERNETES_SERVICE_HOST`,
`KUBERNETES_PORT_443_TCP`, ... for the `kubernetes` Service, and the same for each Service of the
pod's namespace unless `enableServiceLinks: false`), then `envFrom` sources (with their
`prefix`), then `env` entries: literal values with `$(VAR)` references to earlier ones expanded,
`valueFrom.configMapKeyRef`/`secretKeyRef` (Secret values decoded), and the common `fieldRef`
paths. Later entries override earlier ones; `HOME` comes last, as the runtime adds it. Pure:
the caller hands in the pod, the container, a `config.Lookup` and the Services.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from sandbox.kubelet.config import Lookup

IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def container_env(
    pod: dict[str, Any], container: dict[str, Any], lookup: Lookup, services: list[dict[str, Any]]
) -> dict[str, str]:
    meta = pod.get("metadata") or {}
    env: dict[str, str] = {"PATH": IMAGE_PATH, "HOSTNAME": str(meta.get("name") or "")}
    linked = [s for s in services if _linked(s, pod)]
    for service in sorted(linked, key=lambda s: str(s["metadata"]["name"])):
        env.update(_service_links(service))
    for source in container.get("envFrom") or ():
        prefix = str(source.get("prefix") or "")
        for field, plural in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
            ref = source.get(field)
            if isinstance(ref, dict):
                data = _data(lookup(plural, str(ref.get("name") or "")), secret=plural == "secrets")
                env.update({prefix + k: v for k, v in data.items()})
    for variable in container.get("env") or ():
        value = _value(variable, pod, lookup, env)
        if value is not None:
            env[str(variable.get("name"))] = value
    env.setdefault("HOME", "/root")
    return env


def _linked(service: dict[str, Any], pod: dict[str, Any]) -> bool:
    meta = service.get("metadata") or {}
    if meta.get("namespace") == "default" and meta.get("name") == "kubernetes":
        return True
    if (pod.get("spec") or {}).get("enableServiceLinks") is False:
        return False
    return bool(meta.get("namespace") == (pod.get("metadata") or {}).get("namespace"))


def _service_links(service: dict[str, Any]) -> dict[str, str]:
    spec = service.get("spec") or {}
    address = str(spec.get("clusterIP") or "")
    ports = spec.get("ports") or ()
    if not address or address == "None" or not ports:
        return {}
    name = str(service["metadata"]["name"]).upper().replace("-", "_")
    first = ports[0]
    found = {
        f"{name}_SERVICE_HOST": address,
        f"{name}_SERVICE_PORT": str(first.get("port")),
        f"{name}_PORT": f"{str(first.get('protocol') or 'TCP').lower()}://{address}:{first['port']}",
    }
    for port in ports:
        number, protocol = port.get("port"), str(port.get("protocol") or "TCP")
        if port.get("name"):
            port_name = str(port["name"]).upper().replace("-", "_")
            found[f"{name}_SERVICE_PORT_{port_name}"] = str(number)
        prefix = f"{name}_PORT_{number}_{protocol}"
        found[prefix] = f"{protocol.lower()}://{address}:{number}"
        found[f"{prefix}_PROTO"] = protocol.lower()
        found[f"{prefix}_PORT"] = str(number)
        found[f"{prefix}_ADDR"] = address
    return found


def _value(
    variable: dict[str, Any], pod: dict[str, Any], lookup: Lookup, env: dict[str, str]
) -> str | None:
    if "value" in variable or not variable.get("valueFrom"):
        text = str(variable.get("value") or "")
        return _REFERENCE.sub(lambda m: env.get(m.group(1), m.group(0)), text)
    source = variable["valueFrom"]
    for field, plural in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
        ref = source.get(field)
        if isinstance(ref, dict):
            data = _data(lookup(plural, str(ref.get("name") or "")), secret=plural == "secrets")
            return data.get(str(ref.get("key") or ""))
    path = str((source.get("fieldRef") or {}).get("fieldPath") or "")
    return _field(pod, path) if path else None


def _field(pod: dict[str, Any], path: str) -> str | None:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    known = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
        "status.podIP": status.get("podIP"),
        "status.hostIP": status.get("hostIP"),
    }
    if path in known:
        value = known[path]
        return "" if value is None else str(value)
    for prefix, source in (("metadata.labels", "labels"), ("metadata.annotations", "annotations")):
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((meta.get(source) or {}).get(path[len(prefix) + 2 : -2], ""))
    return None


def _data(obj: dict[str, Any] | None, *, secret: bool) -> dict[str, str]:
    if obj is None:
        return {}
    data = {str(k): str(v) for k, v in (obj.get("data") or {}).items()}
    if not secret:
        return data
    decoded: dict[str, str] = {}
    for key, value in data.items():
        try:
            decoded[key] = base64.b64decode(value, validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            decoded[key] = value
    return decoded
