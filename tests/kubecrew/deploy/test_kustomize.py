"""The crew's kustomize base and overlays (deploy/): rendered by the kustomize built into real
kubectl, dry-run and applied on a sandbox, and judged by the crew's own fleet audit.

The sandbox runs each crew container from its image's profile (the catalog's
ghcr.io/kubecrew/kubecrew answers /healthz and /readyz on 8081), never the crew's code: what the
processes themselves answer is tests/kubecrew/cli/test_health_endpoints.py's.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from agents.platform.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.toolbox import Servers
from core.policy.settings import SHIPPED, PolicySettings
from kubecrew.install.footprint import AGENTS, FOLDERS, documents
from mcp_servers.kube.settings import KubeSettings
from sandbox.kubelet.images import ImageCatalog
from sandbox.server import Sandbox
from tests.support.kubectl import KUBECTL, Kubectl

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
SANDBOX = DEPLOY / "overlays" / "sandbox"
NAMESPACE = "kubecrew-system"
HEALTH = 8081
PROBES = ("startup", "liveness", "readiness")
PARTS = {  # each Deployment and the ServiceAccount it runs as
    "kubecrew-watcher": "dev-team",
    "kubecrew-runner-cluster-operator": "cluster-operator",
    "kubecrew-runner-platform": "platform",
    "kubecrew-slack": "dev-team",
    "kubecrew-mcp-kube": "dev-team",
    "kubecrew-mcp-metrics": "dev-team",
    "kubecrew-mcp-gitops": "dev-team",
    "kubecrew-mcp-policy": "policy-store",
}
Json = dict[str, Any]


def render(directory: Path) -> list[Json]:
    done = subprocess.run(
        [KUBECTL, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"kubectl kustomize {directory} failed:\n{done.stderr}"
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def of(objects: list[Json], kind: str) -> dict[str, Json]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


@pytest.fixture(scope="module")
def rendered() -> list[Json]:
    return render(SANDBOX)


def test_the_sandbox_overlay_runs_every_part_as_its_agent_with_two_replicas(
    rendered: list[Json],
) -> None:
    deployments = of(rendered, "Deployment")
    pods = {name: d["spec"]["template"]["spec"] for name, d in deployments.items()}
    assert {name: pod["serviceAccountName"] for name, pod in pods.items()} == PARTS
    assert {n: d["spec"]["replicas"] for n, d in deployments.items()} == dict.fromkeys(PARTS, 2)
    assert {d["metadata"]["namespace"] for d in deployments.values()} == {NAMESPACE}


@pytest.mark.parametrize("name", sorted(PARTS))
def test_each_part_is_probed_bounded_unprivileged_and_budgeted(
    rendered: list[Json], name: str
) -> None:
    deployment = of(rendered, "Deployment")[name]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    health = {p["name"]: p["containerPort"] for p in container["ports"]}["health"]
    assert health == HEALTH
    probes = {kind: container[f"{kind}Probe"]["httpGet"] for kind in PROBES}
    assert probes == {
        "startup": {"path": "/healthz", "port": "health"},
        "liveness": {"path": "/healthz", "port": "health"},
        "readiness": {"path": "/readyz", "port": "health"},
    }
    for box in (container, *pod.get("initContainers", [])):
        assert {"cpu", "memory"} <= set(box["resources"]["requests"]), box["name"]
        assert {"cpu", "memory"} <= set(box["resources"]["limits"]), box["name"]
        assert box["securityContext"] == {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }, box["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001  # the image's USER
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/var/lib/kubecrew", "/tmp"}  # $KUBECREW_HOME and scratch: emptyDirs
    budget = of(rendered, "PodDisruptionBudget")[name]
    assert budget["spec"]["maxUnavailable"] == 1
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_only_health_the_receiver_and_the_crews_own_mcp_clients_reach_the_crew(
    rendered: list[Json],
) -> None:
    policies = of(rendered, "NetworkPolicy")
    deny = policies["kubecrew-default-deny-ingress"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}
    opened = {
        (_source(rule), port["port"])
        for policy in policies.values()
        for rule in policy["spec"].get("ingress", [])
        for port in rule["ports"]
    }
    assert opened == {("anywhere", HEALTH), ("the cluster", 9095), ("kubecrew", 8000)}


def _source(rule: Json) -> str:
    """Who an ingress rule lets in, in words."""
    if "from" not in rule:
        return "anywhere"
    [peer] = rule["from"]
    if peer == {"namespaceSelector": {}}:
        return "the cluster"
    return str(peer["podSelector"]["matchLabels"]["app.kubernetes.io/part-of"])


def test_the_sandbox_overlay_runs_the_projects_version_which_the_sandbox_knows(
    rendered: list[Json],
) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    images = {
        box["image"]
        for d in of(rendered, "Deployment").values()
        for box in (*d["spec"]["template"]["spec"]["containers"],
                    *d["spec"]["template"]["spec"].get("initContainers", []))
    }  # fmt: skip
    [image] = images
    known = ImageCatalog.default().resolve(image)
    assert known is not None, f"the sandbox's image catalog does not know {image}"
    assert (known.repository, known.tag, known.profile) == (
        "ghcr.io/kubecrew/kubecrew",
        version,
        "kubecrew",
    )
    assert image.endswith(f"@{known.digest}")  # pinned by the digest the sandbox serves


def test_the_cluster_overlay_renders_once_its_secrets_are_written(tmp_path: Path) -> None:
    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy)
    overlay = copy / "overlays" / "cluster"
    example = (overlay / "secrets.env.example").read_text()
    keys = [line.split("=")[0] for line in example.splitlines() if line[:1].isalpha()]
    (overlay / "secrets.env").write_text("".join(f"{key}=value-of-{key}\n" for key in keys))
    objects = render(overlay)
    tokens = {f"kubecrew-{sa}-token" for sa in ("policy-store", *AGENTS)}
    [secret] = of(objects, "Secret").keys() - tokens
    assert secret.startswith("kubecrew-secrets-")
    wanted = {
        (env["valueFrom"]["secretKeyRef"]["name"], env["valueFrom"]["secretKeyRef"]["key"])
        for d in of(objects, "Deployment").values()
        for env in d["spec"]["template"]["spec"]["containers"][0]["env"]
        if "secretKeyRef" in env.get("valueFrom", {})
    }
    assert wanted == {(secret, key) for key in keys}  # every key the pods read, and only those
    images = {d["spec"]["template"]["spec"]["containers"][0]["image"]
              for d in of(objects, "Deployment").values()}  # fmt: skip
    assert images == {"registry.example.com/platform/kubecrew:0.1.0"}


@pytest.mark.parametrize("folder", FOLDERS)
def test_kubecrew_install_and_kustomize_read_the_same_objects(folder: str) -> None:
    def named(objects: list[Json]) -> list[tuple[str, str]]:
        return sorted((o["kind"], o["metadata"]["name"]) for o in objects)

    assert named(render(DEPLOY / folder)) == named(documents(folder))


@pytest.mark.kubectl
def test_the_sandbox_overlay_passes_a_server_side_dry_run(kubectl: Kubectl) -> None:
    # A dry run cannot stand in for the namespace its objects go in: a real API server refuses
    # them as "namespaces kubecrew-system not found" too. It is the one object made first.
    kubectl("create", "namespace", NAMESPACE)
    said = kubectl("apply", "-k", str(SANDBOX), "--dry-run=server")
    for name in PARTS:
        assert f"deployment.apps/{name} created (server dry run)" in said, said
    assert kubectl.json("get", "deployments", "-n", NAMESPACE)["items"] == []


@pytest.fixture(scope="module")
def installed(
    shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kubectl]:
    """The sandbox overlay applied to the module's sandbox, every part Available."""
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("kube-cache"))
    kubectl("apply", "-k", str(SANDBOX))
    kubectl.run("wait", "--for=condition=Available", "deployment", "--all", "-n", NAMESPACE,
                "--timeout=150s", timeout=180)  # fmt: skip
    yield kubectl


@pytest.mark.kubectl
@pytest.mark.timeout(240)
def test_kubectl_apply_k_runs_every_part_with_two_available_replicas(installed: Kubectl) -> None:
    listed = installed.json("get", "deployments", "-n", NAMESPACE)["items"]
    available = {d["metadata"]["name"]: d["status"].get("availableReplicas") for d in listed}
    assert available == dict.fromkeys(PARTS, 2)
    pods = installed.json("get", "pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/name=kubecrew")
    ready = [p["status"]["containerStatuses"][0]["ready"] for p in pods["items"]]
    assert ready == [True] * 2 * len(PARTS)
    endpoints = installed.json("get", "endpoints", "kubecrew-watcher", "-n", NAMESPACE)
    [subset] = endpoints["subsets"]
    assert len(subset["addresses"]) == 2 and subset["ports"][0]["port"] == 9095


@pytest.mark.kubectl
@pytest.mark.timeout(240)
def test_the_platform_audit_finds_nothing_to_fix_in_the_crews_namespace(
    installed: Kubectl, shared_sandbox: Sandbox, tmp_path: Path
) -> None:
    # The audit skips only kube-system, kube-public and kube-node-lease, so the crew's own
    # namespace is audited like a team's: here alone, reporting (no fix tried).
    store = str(tmp_path / "store.sqlite")
    kube = KubeSettings(kubeconfig=shared_sandbox.kubeconfig, policies=(SHIPPED,),
                        policy_store=store, agent="platform")  # fmt: skip
    policy = PolicySettings(policies=(SHIPPED,), store=store, agent="platform")

    async def audit() -> Json:
        async with conversation(
            Servers(kube=kube, policy=policy), Deterministic(), repos={}, home=tmp_path / "home"
        ) as talk:
            outcome = await talk.audit(NAMESPACE, fix=False)
        return dict(outcome.data or {})

    # A bare pod of the installer's with no probe, no limits and no security context: the
    # audit must find it, so finding nothing on the crew's parts means they were judged.
    nowhere = '{"spec": {"nodeName": "ghost-node"}}'  # no kubelet runs it
    installed("run", "control", "-n", NAMESPACE, "--image=busybox:1.36", "--restart=Never",
              "--overrides", nowhere, "--", "sleep", "3600")  # fmt: skip
    try:
        result = anyio.run(audit)
    finally:
        installed("delete", "pod", "control", "-n", NAMESPACE, "--wait=false")
    assert result["scope"] == NAMESPACE and result["namespaces"] == [NAMESPACE]
    found = {(f["object"], f["check"]) for f in result["findings"]}
    assert {(f"Pod {NAMESPACE}/control", check) for check in
            ("no-readiness-probe", "no-limits", "run-as-root")} <= found  # fmt: skip
    assert {obj for obj, _ in found} == {f"Pod {NAMESPACE}/control"}, found
