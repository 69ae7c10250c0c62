"""sync leaves the apply to Argo CD or Flux when one of them deploys the repository, on the sandbox.

The sandbox serves minimal CRDs for Argo CD's Application and Flux's GitRepository and
Kustomization. No controller runs: a thread of the test plays it over the real API, the way the
real one would: it waits for the "reconcile now" annotation sync sets, then reports the commit
applied in the object's status.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_servers.gitops.deferral import ARGO_REFRESH, FLUX_REQUESTED
from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Sandbox
from tests.support.gitops import Call, git, session, settings_for
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


def crd(group: str, version: str, kind: str, plural: str, *, status: bool) -> str:
    """A minimal namespaced CRD whose spec and status keep any fields."""
    subresources = "      subresources: {status: {}}\n" if status else ""
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: {plural}, singular: {kind.lower()}, kind: {kind}}}
  versions:
    - name: {version}
      served: true
      storage: true
{subresources}      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
            status: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


# Argo CD's own Application CRD has no status subresource; Flux's CRDs have one.
ARGO_CRDS = [crd("argoproj.io", "v1alpha1", "Application", "applications", status=False)]
FLUX_CRDS = [
    crd("source.toolkit.fluxcd.io", "v1", "GitRepository", "gitrepositories", status=True),
    crd("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", status=True),
]


def install(kubectl: Kubectl, crds: list[str], namespace: str) -> None:
    kubectl("apply", "-f", "-", input="---\n".join(crds))
    kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=20s")
    kubectl("create", "namespace", namespace)


def create(kubectl: Kubectl, obj: dict[str, Any]) -> None:
    kubectl("create", "-f", "-", input=json.dumps(obj))


def application(name: str, source: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"project": "default", **source, "destination": {"namespace": "shop"}},
    }


@contextmanager
def controller(play: Callable[[], None]) -> Iterator[None]:
    """Run `play` (a controller's reaction) in a thread; its failure fails the test."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            play()
        except BaseException as exc:  # handed to the test thread below
            failures.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield
    thread.join(timeout=30)
    if failures:
        raise failures[0]


def annotation(kubectl: Kubectl, resource: str, namespace: str, key: str) -> str:
    live = kubectl.json("get", resource, "-n", namespace)
    return str((live["metadata"].get("annotations") or {}).get(key, ""))


@pytest.mark.parametrize(
    ("source", "remote", "repo_url"),
    [
        ("file", None, ""),
        ("https", None, "https://git.example.com/shop/manifests"),
        ("https", "git@git.example.com:shop/manifests.git", ""),
    ],
    ids=["file-url", "repo-url-setting", "origin-remote"],
)
def test_sync_defers_to_an_argo_cd_application_and_follows_it(
    manifests: Path,
    sandbox: Sandbox,
    kubectl: Kubectl,
    source: str,
    remote: str | None,
    repo_url: str,
) -> None:
    if remote:
        git(manifests, "remote", "add", "origin", remote)
    install(kubectl, ARGO_CRDS, "argocd")
    url = (
        f"file://{manifests}" if source == "file" else "https://git.example.com/shop/manifests.git"
    )
    create(kubectl, application("other", {"source": {"repoURL": "https://example.com/x.git"}}))
    create(kubectl, application("shop", {"sources": [{"repoURL": url, "path": "apps"}]}))
    commit = git(manifests, "rev-parse", "main").strip()
    settings = GitopsSettings(
        repo=manifests,
        state_dir=manifests.parent / "state",
        kubeconfig=sandbox.kubeconfig,
        repo_url=repo_url,
    )
    server = build(settings)

    def argo() -> None:
        eventually(
            lambda: annotation(kubectl, "application/shop", "argocd", ARGO_REFRESH),
            timeout=20,
            what="sync asks Argo CD to refresh the application",
        )
        status = {"sync": {"status": "Synced", "revision": commit}, "health": {"status": "Healthy"}}
        kubectl(
            "patch",
            "application",
            "shop",
            "-n",
            "argocd",
            "--type=merge",
            "-p",
            json.dumps({"status": status}),
        )

    async def script(call: Call) -> None:
        planned = await call("sync")  # a dry run asks nothing of Argo CD
        assert planned["deferred_to"] == "argocd"
        assert planned["object"]["name"] == "shop" and planned["object"]["namespace"] == "argocd"
        assert not planned["synced"] and "wait_seconds" in planned["next"]
        assert annotation(kubectl, "application/shop", "argocd", ARGO_REFRESH) == ""
        with controller(argo):
            done = await call("sync", dry_run=False, wait_seconds=20)
        assert done["synced"], done
        assert (
            done["object"] | {"sync": "Synced", "revision": commit, "health": "Healthy"}
            == done["object"]
        )
        assert done["commit"] == commit

    session(server, script)
    kubectl.fails("get", "namespace", "shop")  # nothing was applied by sync itself


def test_sync_defers_to_a_flux_kustomization_and_follows_it(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    install(kubectl, FLUX_CRDS, "flux")
    create(
        kubectl,
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": "manifests", "namespace": "flux"},
            "spec": {"url": f"file://{manifests}/", "ref": {"branch": "main"}},
        },
    )
    create(
        kubectl,
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "shop", "namespace": "flux"},
            "spec": {"path": "./apps", "sourceRef": {"kind": "GitRepository", "name": "manifests"}},
        },
    )
    commit = git(manifests, "rev-parse", "main").strip()
    server = build(settings_for(manifests, sandbox.kubeconfig))

    def flux() -> None:
        eventually(
            lambda: annotation(kubectl, "kustomization/shop", "flux", FLUX_REQUESTED),
            timeout=20,
            what="sync asks Flux to reconcile the kustomization",
        )
        assert annotation(kubectl, "gitrepository/manifests", "flux", FLUX_REQUESTED)
        status = {
            "lastAppliedRevision": f"main@sha1:{commit}",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "ReconciliationSucceeded",
                    "message": f"Applied revision: main@sha1:{commit}",
                }
            ],
        }
        kubectl(
            "patch",
            "kustomization",
            "shop",
            "-n",
            "flux",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": status}),
        )

    async def script(call: Call) -> None:
        waited = await call("sync", dry_run=True, wait_seconds=1)
        assert waited["deferred_to"] == "flux" and not waited["synced"]
        assert waited["waited_seconds"] >= 1 and "not applied" in waited["next"]
        with controller(flux):
            done = await call("sync", dry_run=False, wait_seconds=20)
        assert done["synced"], done
        assert done["object"]["source"] == "flux/manifests"
        assert done["object"]["revision"] == f"main@sha1:{commit}"
        assert done["object"]["ready"] == "True"

    session(server, script)
    kubectl.fails("get", "namespace", "shop")


def test_sync_applies_when_no_controller_deploys_this_repository_to_this_cluster(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    install(kubectl, ARGO_CRDS + FLUX_CRDS, "argocd")
    create(kubectl, application("other", {"source": {"repoURL": "https://example.com/x.git"}}))
    elsewhere = application("prod", {"source": {"repoURL": f"file://{manifests}"}})
    elsewhere["spec"]["destination"]["server"] = "https://prod.example.com:6443"
    create(kubectl, elsewhere)
    server = build(settings_for(manifests, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        done = await call("sync", dry_run=False)
        assert "deferred_to" not in done and done["ok"], done

    session(server, script)
    assert kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 1
