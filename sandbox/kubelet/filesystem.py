"""The files a container would show to `cat` and `ls` in an exec: what its volumes mount and
what the kubelet writes into every container, nothing of the host.

ConfigMap and Secret volumes (also inside projected volumes) appear at their `mountPath` as one
file per key (or per `items[].path`), with Secret values decoded from base64; a `subPath` mount
places the one key at the mount path itself. An `emptyDir` is an empty directory. The kubelet's
own files are `/etc/hostname`, `/etc/hosts` and `/etc/resolv.conf` (cluster DNS 10.96.0.10,
the pod's search domains, ndots 5). Anything else is absent: the image's own files are not
simulated, and neither are ServiceAccount tokens (the sandbox mounts none into pods). Contents
are read from the ConfigMaps and Secrets as they are when the exec runs (a real kubelet syncs
them within a minute). Pure: the caller hands in the pod, the container and a `Lookup`.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from typing import Any

from sandbox.kubelet.config import Lookup

DNS_SERVER = "10.96.0.10"
Files = dict[str, str]  # absolute path -> content


class ContainerFiles:
    """The files of one container, by absolute path; directories are implied by the paths."""

    def __init__(self, files: Files, directories: set[str]) -> None:
        self.files = files
        self.directories = {"/", *directories}
        for path in files:
            parent = posixpath.dirname(path)
            while parent not in self.directories:
                self.directories.add(parent)
                parent = posixpath.dirname(parent)

    @classmethod
    def of(cls, pod: dict[str, Any], container: dict[str, Any], lookup: Lookup) -> ContainerFiles:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        hostname = str(spec.get("hostname") or meta.get("name") or "")
        namespace = str(meta.get("namespace") or "default")
        address = str((pod.get("status") or {}).get("podIP") or "")
        files: Files = {
            "/etc/hostname": f"{hostname}\n",
            "/etc/hosts": _hosts(hostname, address),
            "/etc/resolv.conf": (
                f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
                f"nameserver {DNS_SERVER}\noptions ndots:5\n"
            ),
        }
        directories: set[str] = {"/tmp", "/root", "/etc"}
        volumes = {str(v.get("name")): v for v in spec.get("volumes") or ()}
        for mount in container.get("volumeMounts") or ():
            volume = volumes.get(str(mount.get("name")))
            if volume is None:
                continue
            keys = _volume_files(volume, lookup)
            target = str(mount.get("mountPath") or "/").rstrip("/") or "/"
            sub_path = str(mount.get("subPath") or "")
            if sub_path:
                if sub_path in keys:
                    files[target] = keys[sub_path]
                else:
                    directories.add(target)
                continue
            directories.add(target)
            files.update({posixpath.join(target, name): text for name, text in keys.items()})
        return cls(files, directories)

    def read(self, path: str) -> str | None:
        return self.files.get(posixpath.normpath(path))

    def is_directory(self, path: str) -> bool:
        return posixpath.normpath(path) in self.directories

    def entries(self, directory: str) -> list[str]:
        """Names directly inside `directory`, sorted as `ls` sorts them."""
        base = posixpath.normpath(directory)
        found = {
            posixpath.basename(path)
            for path in [*self.files, *self.directories]
            if path != base and posixpath.dirname(path) == base
        }
        return sorted(found)


def _hosts(hostname: str, address: str) -> str:
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost"]
    if address:
        lines.append(f"{address}\t{hostname}")
    return "\n".join(lines) + "\n"


def _volume_files(volume: dict[str, Any], lookup: Lookup) -> Files:
    """The files a volume shows under its mount: key (or item path) -> content."""
    if isinstance(volume.get("configMap"), dict):
        ref = volume["configMap"]
        return _keys(lookup("configmaps", str(ref.get("name") or "")), ref, secret=False)
    if isinstance(volume.get("secret"), dict):
        ref = volume["secret"]
        return _keys(lookup("secrets", str(ref.get("secretName") or "")), ref, secret=True)
    files: Files = {}
    for source in (volume.get("projected") or {}).get("sources") or ():
        if isinstance(source.get("configMap"), dict):
            ref = source["configMap"]
            obj = lookup("configmaps", str(ref.get("name") or ""))
            files.update(_keys(obj, ref, secret=False))
        elif isinstance(source.get("secret"), dict):
            ref = source["secret"]
            files.update(_keys(lookup("secrets", str(ref.get("name") or "")), ref, secret=True))
    return files


def _keys(obj: dict[str, Any] | None, ref: dict[str, Any], *, secret: bool) -> Files:
    if obj is None:
        return {}
    data = {str(k): _text(v, decode=secret) for k, v in (obj.get("data") or {}).items()}
    data |= {str(k): _text(v, decode=True) for k, v in (obj.get("binaryData") or {}).items()}
    items = ref.get("items") or ()
    if not items:
        return data
    return {str(i.get("path")): data[str(i.get("key"))] for i in items if i.get("key") in data}


def _text(value: Any, *, decode: bool) -> str:
    if not decode:
        return str(value)
    try:
        return base64.b64decode(str(value), validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return str(value)
