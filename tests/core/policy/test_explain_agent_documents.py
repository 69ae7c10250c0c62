"""The kinds one agent reads are explained too: a NamespaceBlueprint by the objects it
renders, an ImagePolicy by the audit's checks and the gate's rules, a NodeReadinessPolicy by its
rules; listings summarise them. The shipped documents through `kubecrew policy`, and a variant
of each read by the policy server's own tools (`list_policies`, `explain_policy`) over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import PolicySettings
from mcp_servers.policy.server import build
from tests.support.policy_command import kubecrew

VARIANTS = """\
apiVersion: kubecrew.io/v1alpha1
kind: NamespaceBlueprint
metadata: {name: locked}
spec:
  namespaces: [vault]
  limitRange: {min: {cpu: 50m}, max: {memory: 1Gi}}
  networkPolicy: {ingress: deny-all}
---
apiVersion: kubecrew.io/v1alpha1
kind: ImagePolicy
metadata: {name: team-registry}
spec:
  namespaceSelector: {matchLabels: {kubecrew.io/class: team}}
  allowedRegistries: [registry.example.com/team]
---
apiVersion: kubecrew.io/v1alpha1
kind: NodeReadinessPolicy
metadata: {name: any-node}
spec:
  rules:
    - name: cni
      condition: {type: NetworkReady}
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "team-namespace",
            [
                "NamespaceBlueprint team-namespace, by team platform (policies/blueprint.yaml:4)",
                "Selects namespace shop, or namespaces labelled kubecrew.io/class=team",
                "required labels: each namespace carries kubecrew.io/team (reported when "
                "missing, not fixed: it belongs in the Namespace's own manifest)",
                "ResourceQuota team-namespace: the namespace may use at most requests.cpu 8, "
                "requests.memory 16Gi, limits.cpu 16, limits.memory 32Gi, pods 100",
                "LimitRange team-namespace, per container: default requests (if it sets none) "
                "cpu 100m, memory 128Mi; default limits (if it sets none) cpu 500m, memory "
                "512Mi; at most cpu 4, memory 8Gi",
                "NetworkPolicy team-namespace: the namespace's pods accept traffic only from "
                "pods of the same namespace",
                "RoleBinding team-namespace: ClusterRole edit for the owning team's groups and "
                "users (from its Ownership; not rendered while no Ownership names them)",
                "The Platform agent renders these objects in each selected namespace, fixes "
                "drift by pull request and confirms from live state",
            ],
        ),
        (
            "org-registries",
            [
                "ImagePolicy org-registries, by team platform (policies/images.yaml:4)",
                "Selects the containers of pods in every namespace",
                "check image-registry: an image pulled from outside docker.io/library, "
                "registry.k8s.io, ghcr.io/kubecrew, docker.io/curlimages is a high-severity "
                "audit finding (a host, or a host/path prefix; `nginx` is pulled from "
                "docker.io/library)",
                "check image-digest: an image not pinned by digest (@sha256:...) is a "
                "medium-severity finding (requireDigest)",
                "The Platform agent's audit reports these with evidence, and the policy gate "
                "judges every write that brings in an image: rule allowed-registries refuses "
                "one from elsewhere, rule require-digest warns of one not pinned",
            ],
        ),
        (
            "gpu-nodes",
            [
                "NodeReadinessPolicy gpu-nodes, by team cluster-ops (policies/readiness.yaml:2)",
                "Selects nodes labelled accelerator=nvidia",
                "taint kubecrew.io/not-ready:NoSchedule: held on a selected node until every "
                "rule below holds there, put back when one breaks",
                "rule kubelet-ready: the kubelet reports the node Ready (always required, never "
                "enough)",
                "rule device-plugin: a Ready pod of DaemonSet kube-system/nvidia-device-plugin on "
                "the node: the GPUs are advertised to the scheduler",
                "rule net-agent: a Ready pod in kube-system with labels app=net-agent on the "
                "node: the node's network agent programs its routes",
                "rule network: node condition NetworkReady=True: the network agent reports the "
                "node's network ready",
                "The Cluster Operator checks these on live state and removes the taint",
            ],
        ),
    ],
    ids=["blueprint", "images", "readiness"],
)
def test_explain_says_what_a_shipped_agent_document_means(name: str, expected: list[str]) -> None:
    done = kubecrew("explain", name)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


def test_the_listing_summarises_every_kind() -> None:
    done = kubecrew("list")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[1]: line for line in done.stdout.splitlines()[1:]}
    assert (
        "quota, limit range, network policy, team access, 1 required label(s)"
        in (rows["team-namespace"])
    )
    assert (
        "images from docker.io/library, registry.k8s.io, ghcr.io/kubecrew, "
        "docker.io/curlimages, digests " in (rows["org-registries"])
    )
    assert (
        "nodes labelled accelerator=nvidia tainted kubecrew.io/not-ready:NoSchedule until "
        "device-plugin, net-agent, network"
    ) in rows["gpu-nodes"]


def test_the_policy_server_explains_and_lists_the_variants(tmp_path: Path) -> None:
    (tmp_path / "variants.yaml").write_text(VARIANTS)
    settings = PolicySettings(policies=(tmp_path,), store=str(tmp_path / "store.sqlite"))
    answers: dict[str, Any] = {}

    async def main() -> None:
        async with create_connected_server_and_client_session(build(settings)) as client:
            for name in ("locked", "team-registry", "any-node"):
                done = await client.call_tool("explain_policy", {"name": name})
                assert not done.isError, done.content
                answers[name] = (done.structuredContent or {})["explanation"]
            listed = await client.call_tool("list_policies", {})
            answers["list"] = (listed.structuredContent or {})["policies"]

    anyio.run(main)
    assert answers["locked"][1:] == [
        "Selects namespace vault",
        "LimitRange locked, per container: at least cpu 50m; at most memory 1Gi",
        "NetworkPolicy locked: the namespace's pods accept traffic from nowhere (all ingress "
        "denied)",
        "The Platform agent renders these objects in each selected namespace, fixes drift by "
        "pull request and confirms from live state",
    ]
    assert answers["team-registry"][1:3] == [
        "Selects the containers of pods in namespaces labelled kubecrew.io/class=team",
        "check image-registry: an image pulled from outside registry.example.com/team is a "
        "high-severity audit finding (a host, or a host/path prefix; `nginx` is pulled from "
        "docker.io/library)",
    ]
    assert answers["team-registry"][3].endswith("is a low-severity finding")
    assert answers["any-node"][1:4] == [
        "Selects every node",
        "taint kubecrew.io/not-ready:NoSchedule: held on a selected node until every rule "
        "below holds there, put back when one breaks",
        "rule kubelet-ready: the kubelet reports the node Ready (always required, never enough)",
    ]
    summaries = {row["name"]: row["summary"] for row in answers["list"]}
    assert summaries == {
        "locked": "limit range, network policy",
        "team-registry": "images from registry.example.com/team",
        "any-node": "every node tainted kubecrew.io/not-ready:NoSchedule until cni",
    }
