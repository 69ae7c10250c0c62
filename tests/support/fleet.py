"""A fleet of sandboxes as one kubeconfig: each sandbox a context of its own (its cluster and
its user under the context's name), as `kubectl config` merges them, the first one current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def fleet_kubeconfig(path: Path, clusters: dict[str, Path]) -> Path:
    """One kubeconfig naming every sandbox as a context of its own, as `kubectl config` merges."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [],
                              "users": [], "contexts": []}  # fmt: skip
    for name, source in clusters.items():
        config = yaml.safe_load(source.read_text())
        merged["clusters"].append({"name": name, "cluster": config["clusters"][0]["cluster"]})
        merged["users"].append({"name": name, "user": config["users"][0]["user"]})
        context = {"cluster": name, "user": name, "namespace": "default"}
        merged["contexts"].append({"name": name, "context": context})
    merged["current-context"] = next(iter(clusters))
    path.write_text(yaml.safe_dump(merged))
    return path
