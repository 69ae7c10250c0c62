"""Kubeconfig files for a sandbox: the admin's, and one per identity when asked.

Written with mode 0600 because they hold bearer tokens. The same shape a real cluster's
kubeconfig has, so every client (kubectl, the official Python clients, kubecrew) reads it unchanged.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

CLUSTER_NAME = "kubecrew-sandbox"


def render(
    *,
    server: str,
    token: str,
    user: str = "kubecrew-admin",
    namespace: str = "default",
    ca_pem: bytes | None = None,
    context: str = CLUSTER_NAME,
) -> str:
    cluster: dict[str, object] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER_NAME, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": CLUSTER_NAME, "user": user, "namespace": namespace},
            }
        ],
        "current-context": context,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
    os.chmod(path, 0o600)
    return path
