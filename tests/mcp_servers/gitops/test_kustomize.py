"""Kustomize directories rendered by sync, drift and find_manifest, on the sandbox, over MCP.

The repository gets a base (Deployment `api`) and a prod overlay on it (namePrefix `prod-`,
commonLabels `env: prod`, a patch setting 3 replicas): the overlay is the top-level kustomization,
so its rendered `prod-api` is what reaches the cluster, and the base is never applied raw.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.gitops.server import build
from sandbox.server import Sandbox
from tests.support.gitops import Call, ToolFailed, git, session, settings_for
from tests.support.kubectl import Kubectl

BASE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
        - name: api
          image: nginx:1.27
"""
BASE = "resources:\n  - deployment.yaml\n"
PROD = """\
namespace: shop
namePrefix: prod-
commonLabels:
  env: prod
resources:
  - ../../base
patches:
  - target:
      kind: Deployment
      name: api
    patch: |-
      - op: replace
        path: /spec/replicas
        value: 3
"""
OVERLAY = "apps/api/overlays/prod"


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", message)


@pytest.fixture
def kustomized(manifests: Path) -> Path:
    commit(
        manifests,
        {
            "apps/api/base/deployment.yaml": BASE_DEPLOYMENT,
            "apps/api/base/kustomization.yaml": BASE,
            f"{OVERLAY}/kustomization.yaml": PROD,
        },
        "api: base and prod overlay",
    )
    return manifests


def test_sync_applies_what_the_overlay_renders_and_not_the_base(
    kustomized: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(kustomized, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        done = await call("sync", dry_run=False)
        assert done["ok"], done
        assert done["notes"] == []
        rows = {(o["kind"], o["name"]): o for o in done["objects"]}
        assert ("Deployment", "api") not in rows  # the base is rendered only inside the overlay
        assert rows[("Deployment", "prod-api")] == {
            "file": OVERLAY,
            "kind": "Deployment",
            "name": "prod-api",
            "rendered_by": "kustomize",
            "namespace": "shop",
            "action": "create",
        }
        found = await call("find_manifest", kind="Deployment", name="prod-api")
        assert [(f["file"], f.get("rendered_by")) for f in found["found"]] == [
            (OVERLAY, "kustomize")
        ]
        again = await call("sync")
        assert {o["action"] for o in again["objects"]} == {"unchanged"}

    session(server, script)
    live = kubectl.json("get", "deployment", "prod-api", "-n", "shop")
    assert live["spec"]["replicas"] == 3
    assert live["metadata"]["labels"]["env"] == "prod"
    assert live["spec"]["selector"]["matchLabels"] == {"app": "api", "env": "prod"}
    assert live["metadata"]["labels"]["kubecrew.io/gitops-repo"] == "manifests"
    kubectl.fails("get", "deployment", "api", "-n", "shop")
    kubectl.fails("get", "deployment", "api", "-n", "default")


def test_drift_names_the_overlay_of_a_manually_edited_rendered_object(
    kustomized: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(kustomized, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        assert (await call("drift"))["out_of_sync"] == []
        kubectl("scale", "deployment", "prod-api", "-n", "shop", "--replicas=5")
        report = await call("drift", namespace="shop")
        assert report["out_of_sync"] == [
            {
                "file": OVERLAY,
                "rendered_by": "kustomize",
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "prod-api",
                "state": "drifted",
                "diffs": [{"path": "spec.replicas", "git": 3, "live": 5}],
            }
        ]
        with pytest.raises(ToolFailed, match=f"rendered by the kustomization in {OVERLAY}"):
            await call("adopt_live", kind="Deployment", name="prod-api", namespace="shop")
        await call("sync", dry_run=False)
        assert (await call("drift"))["out_of_sync"] == []

    session(server, script)
    assert kubectl.json("get", "deployment", "prod-api", "-n", "shop")["spec"]["replicas"] == 3


def test_broken_kustomizations_become_notes_and_the_rest_is_applied(
    kustomized: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    commit(
        kustomized,
        {
            "apps/broken/missing/kustomization.yaml": "resources:\n  - missing.yaml\n",
            "apps/broken/invalid/kustomization.yaml": "resources:\n  - bad.yaml\n",
            "apps/broken/invalid/bad.yaml": "kind: [unclosed\n",
            "apps/broken/remote/kustomization.yaml": (
                "resources:\n  - https://github.com/example/shop//base?ref=v1\n"
            ),
            "apps/broken/overlay/kustomization.yaml": "resources:\n  - ../remote\n",
            "apps/broken/escape/kustomization.yaml": "resources:\n  - ../../../../outside\n",
            "apps/broken/helm/kustomization.yaml": "helmCharts:\n  - name: redis\n",
        },
        "broken kustomizations",
    )
    server = build(settings_for(kustomized, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        done = await call("sync", dry_run=False, prune=True)
        assert not done["ok"]
        notes = "\n".join(done["notes"])
        assert (
            "apps/broken/invalid: kustomize failed: accumulating resources: accumulating "
            "resources from 'bad.yaml': MalformedYAMLError" in notes
        )
        assert "apps/broken/missing: kustomize refused: resources names 'missing.yaml'" in notes
        assert "apps/broken/remote:" not in notes  # a base: rendered only in its overlay
        assert "apps/broken/overlay: kustomize refused: resources names 'https://github" in notes
        assert "a remote location; kustomize runs offline here" in notes
        assert "(in its base apps/broken/remote)" in notes
        assert "apps/broken/escape: kustomize refused: resources names " in notes
        assert "outside the repository" in notes
        assert "apps/broken/helm: kustomize refused: helmCharts needs helm" in notes
        assert "/tmp" not in notes  # scratch paths are shown as repository paths
        assert done["notes"][-1].startswith("prune skipped")
        assert done["pruned"] == []
        assert {o["name"] for o in done["objects"]} == {"shop", "web", "prod-api"}
        drifted = await call("drift")
        assert len(drifted["notes"]) == 5

    session(server, script)
    assert kubectl.json("get", "deployment", "prod-api", "-n", "shop")["spec"]["replicas"] == 3
