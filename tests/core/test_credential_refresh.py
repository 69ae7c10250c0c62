"""Expiring kubeconfig credentials are renewed on time, without re-reading them on every request.

The kubeconfig's user is an exec credential plugin (as cloud providers ship them) that hands out
the sandbox's token with an expiry inside the client's 5-minute renewal margin, so every check
finds it due and runs the plugin again. Each run of the plugin leaves a line in a file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from core.connection import Clusters
from sandbox.server import Sandbox

PLUGIN = """\
import datetime, json, sys
with open(sys.argv[1], "a") as runs:
    runs.write("run\\n")
soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=1)
print(json.dumps({
    "apiVersion": "client.authentication.k8s.io/v1",
    "kind": "ExecCredential",
    "status": {"token": sys.argv[2], "expirationTimestamp": soon.strftime("%Y-%m-%dT%H:%M:%SZ")},
}))
"""


def exec_kubeconfig(sandbox: Sandbox, tmp_path: Path) -> tuple[Path, Path]:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    user = config["users"][0]["user"]
    token = user.pop("token")
    plugin, runs = tmp_path / "plugin.py", tmp_path / "runs"
    plugin.write_text(PLUGIN)
    user["exec"] = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(plugin), str(runs), token],
        "interactiveMode": "Never",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    return path, runs


def runs_after_gets(clusters: Clusters, runs: Path, gets: int) -> int:
    api = clusters.api()
    before = len(runs.read_text().splitlines())
    for _ in range(gets):
        assert api.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
    return len(runs.read_text().splitlines()) - before


def test_an_expiring_token_is_renewed_once_per_interval_not_per_request(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    kubeconfig, runs = exec_kubeconfig(sandbox, tmp_path)
    assert runs_after_gets(Clusters(kubeconfig, refresh_every=3600), runs, 5) == 1


def test_an_expiring_token_is_renewed_whenever_the_interval_has_passed(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    kubeconfig, runs = exec_kubeconfig(sandbox, tmp_path)
    assert runs_after_gets(Clusters(kubeconfig, refresh_every=0), runs, 5) == 5
