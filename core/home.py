"""Where kubecrew keeps its files, and which of them belong to one cluster.

The home (`$KUBECREW_HOME`, else `~/.kubecrew`) holds what is the person's whatever cluster they
work on: the crew file, the agents' kubeconfigs, MCP tokens, people, the sandbox. What the crew
learns about a cluster belongs to that cluster: its incidents, the agents' checkpoints and
memory, the front doors' conversations and the default policy store (proposals, approvals, the
audit). Those live in the cluster's state folder, `$KUBECREW_HOME/clusters/<name>/`, named by the
cluster's API server and CA: a sandbox started after another one (a fresh CA) starts with
nothing of the first's, and switching kubeconfig context switches what the crew remembers.

`$KUBECREW_STATE` names the state folder of a process: `kubecrew` sets it for each command from
the kubeconfig the crew uses (`kubecrew.crew.follow_cluster`); a person may set it to choose
one. Unset, the home itself is the state folder (library use, and callers that give paths).

Only files are read here: kubeconfigs as YAML, merged as kubectl merges them (the first file to
set a value wins), never a Kubernetes client.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HOME_ENV = "KUBECREW_HOME"
STATE_ENV = "KUBECREW_STATE"
CLUSTERS = "clusters"
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


def kubecrew_home(environ: Mapping[str, str] = os.environ) -> Path:
    """`$KUBECREW_HOME`, else `~/.kubecrew`."""
    base = environ.get(HOME_ENV)
    return Path(base).expanduser() if base else Path.home() / ".kubecrew"


def state_home(environ: Mapping[str, str] = os.environ) -> Path:
    """The state folder of the cluster this process works on: `$KUBECREW_STATE`, else the home."""
    chosen = environ.get(STATE_ENV)
    return Path(chosen).expanduser() if chosen else kubecrew_home(environ)


@dataclass(frozen=True)
class Cluster:
    """A cluster as a kubeconfig knows it: its API server and the CA that vouches for it."""

    server: str
    authority: str  # the CA's PEM (base64, as kubeconfigs hold it), else its file's path

    @property
    def folder(self) -> str:
        """`<host>-<port>-<digest>`: readable, and different for a new CA at the same address."""
        parts = urlsplit(self.server)
        where = f"{parts.hostname or 'cluster'}-{parts.port or ''}".rstrip("-")
        digest = hashlib.sha256(f"{self.server}\n{self.authority}".encode()).hexdigest()[:10]
        return f"{_UNSAFE.sub('-', where)}-{digest}"


def cluster_state(cluster: Cluster, environ: Mapping[str, str] = os.environ) -> Path:
    return kubecrew_home(environ) / CLUSTERS / cluster.folder


def default_kubeconfigs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The kubeconfig files kubectl would read: `$KUBECONFIG`'s, else `~/.kube/config`, those
    that exist."""
    listed = [Path(p).expanduser() for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    return [p for p in listed or [Path.home() / ".kube" / "config"] if p.is_file()]


def current_cluster(files: Sequence[Path], context: str | None = None) -> Cluster | None:
    """The cluster of `context` (else the current context) in these kubeconfig files; None when
    they name no server for it."""
    documents = _load(files)
    chosen = context or next(
        (str(d["current-context"]) for d in documents if d.get("current-context")), ""
    )
    name = str(_first(documents, "contexts", chosen).get("cluster") or "")
    entry = _first(documents, "clusters", name)
    server = str(entry.get("server") or "").rstrip("/")
    if not server:
        return None
    authority = entry.get("certificate-authority-data") or entry.get("certificate-authority")
    return Cluster(server, str(authority or ""))


def _load(files: Sequence[Path]) -> list[dict[str, Any]]:
    import yaml  # here: every server start reads this module, few read a kubeconfig with it

    loaded = []
    for path in files:
        try:
            document = yaml.safe_load(Path(path).expanduser().read_text())
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(document, dict):
            loaded.append(document)
    return loaded


def _first(documents: list[dict[str, Any]], section: str, name: str) -> dict[str, Any]:
    key = section[:-1]  # "contexts" -> each entry's "context"
    for document in documents:
        for entry in document.get(section) or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                found = entry.get(key)
                return found if isinstance(found, dict) else {}
    return {}
