"""An image typo in a Deployment's first revision: no earlier revision to go back to and no
other pod running the image meant, so the fix comes from the registry. With the sandbox's
registries as the kube server's mirrors, the Dev Team's remediation loop asks which tags the
registry really has, sets the nearest existing image through the policy gate, and validates
it (every pod Ready), with no human. Without a registry the same workload gets no image fix
and escalates, as before."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agents.dev_team.heal import heal
from agents.runtime.loop.run import LoopResult
from agents.runtime.toolbox import Servers
from core.policy.settings import SHIPPED, PolicySettings
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment
from tests.support.kubectl import Kubectl
from tests.support.registries import mirrors
from tests.support.team import FAST

NS = "shop"


def servers(sandbox: Sandbox, tmp_path: Path, registries: dict[str, str]) -> Servers:
    """The Dev Team's kube server (gated by the shipped policies) and policy server; no git."""
    store = str(tmp_path / "policy-store.sqlite")
    return Servers(
        kube=KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=(SHIPPED,),
            policy_store=store,
            agent="dev_team",
            registries=registries,
        ),
        policy=PolicySettings(policies=(SHIPPED,), store=store, agent="dev_team"),
    )


def first_revision(kubectl: Kubectl, sandbox: Sandbox, image: str) -> None:
    kubectl("create", "namespace", NS)
    kubectl("apply", "-f", "-", input=deployment("web", {"image": image}, replicas=2))
    Doctor(sandbox).finding("ImagePullBackOff", namespace=NS, kind="deployment", name="web")


def healed(sandbox: Sandbox, tmp_path: Path, registries: dict[str, str]) -> LoopResult:
    return anyio.run(
        lambda: heal(
            "web",
            servers=servers(sandbox, tmp_path, registries),
            home=tmp_path / "agent-home",
            settings=FAST,
            namespace=NS,
        )
    )


def live(kubectl: Kubectl) -> tuple[str, str, list[str]]:
    deploy = kubectl.json("get", "deployment", "web", "-n", NS)
    pods = kubectl.json("get", "pods", "-n", NS, "-l", "app=web")["items"]
    ready = [
        c["status"]
        for p in pods
        for c in p["status"].get("conditions", [])
        if c["type"] == "Ready" and p["metadata"].get("deletionTimestamp") is None
    ]
    revision = deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
    return deploy["spec"]["template"]["spec"]["containers"][0]["image"], revision, ready


@pytest.mark.parametrize(
    ("typo", "meant", "evidence"),
    [
        pytest.param(
            "ngnix:1.27",
            "nginx:1.27",
            "'ngnix' is one transposition from 'nginx'",
            id="misspelt-repository",
        ),
        pytest.param(
            "nginx:1.277",
            "nginx:1.27",
            "'1.277' is one character longer than '1.27'",
            id="misspelt-tag",
        ),
    ],
)
def test_a_first_revision_typo_is_healed_to_an_image_the_registry_has(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, typo: str, meant: str, evidence: str
) -> None:
    first_revision(kubectl, sandbox, typo)

    result = healed(sandbox, tmp_path, mirrors(sandbox))

    assert result.outcome == "fixed", result.summary
    [attempt] = result.attempts
    assert attempt["fix"] == f"set image of container main to {meant}", result.summary
    assert attempt["verdict"] == "held"
    assert "diagnose no longer finds ImagePullBackOff" in attempt["evidence"]
    fix = result.state["fixes"][result.state["index"]]["fix"]
    assert evidence in fix["evidence"], fix["evidence"]
    assert any(
        line.startswith("the registry lists tags 1.27, 1.27-alpine, ")
        and " for docker.io/library/nginx (" in line
        for line in fix["evidence"]
    ), fix["evidence"]
    assert typo not in {f["fix"]["title"].rpartition(" ")[2] for f in result.state["fixes"]}
    image, revision, ready = live(kubectl)
    assert (image, revision) == (meant, "2")
    assert ready == ["True", "True"]


def test_without_a_registry_the_first_revision_typo_escalates_unchanged(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    first_revision(kubectl, sandbox, "ngnix:1.27")

    result = healed(sandbox, tmp_path, {})

    assert result.outcome == "escalated", result.summary
    assert not result.attempts
    assert live(kubectl)[:2] == ("ngnix:1.27", "1")
