"""A resize approved by the policy store carries exactly its values through the kube gate, once.

The Cluster Operator proposes resizing the shop's web container's CPU request 100m -> 50m on the
policy server (shipped policies: cost allows right-sizing, nothing objects), and the kube server
(same store, same policies, as the cluster-operator agent) then judges `set_resources` calls
carrying that proposal: other values, or a limit the approval never named, are refused naming
both; the approved values go through and land on the Deployment (its other request untouched);
the same call again is refused as applied already. Bad `propose` input says what is expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import PolicySettings
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.policy.server import build
from sandbox.server import Sandbox
from tests.support.audit import mutations
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer
from tests.support.policies import POLICIES
from tests.support.shop import WEB

AGENT = "cluster-operator"
RESIZE = {
    "action": "resize",
    "target": "deployment/web",
    "namespace": "shop",
    "rationale": "web uses 5m of the 100m it requests",
    "metrics": {"cpu_utilization": 0.05},
}


def on_policy_server(store: Path, tool: str, **arguments: Any) -> tuple[bool, Any]:
    settings = PolicySettings(policies=(POLICIES,), store=str(store), agent=AGENT)

    async def go() -> tuple[bool, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            result = await session.call_tool(tool, arguments)
            if result.isError:
                return True, "".join(getattr(c, "text", "") for c in result.content)
            return False, answer(result)

    return anyio.run(go)


def requests(kubectl: Kubectl) -> dict[str, str]:
    live = kubectl.json("get", "deploy/web", "-n", "shop")
    return dict(live["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"])


def test_an_approved_resize_carries_exactly_its_values_once(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    store = tmp_path / "store.sqlite"
    wanted = [{"container": "web", "cpu": "50m", "from_cpu": "100m"}]
    failed, proposed = on_policy_server(store, "propose", **RESIZE, resources=wanted)
    assert not failed, proposed
    assert proposed["decision"]["outcome"] == "approved", proposed
    assert proposed["action"]["text"] == "resize Deployment shop/web web cpu 100m -> 50m directly"
    approved = proposed["proposal"]
    kube = KubeTools(
        KubeSettings(
            kubeconfig=sandbox.kubeconfig, policies=(POLICIES,), policy_store=str(store),
            agent=AGENT,
        )
    )  # fmt: skip
    listed = {t.name: t for t in kube.tools()}
    assert listed["set_resources"].annotations.destructiveHint is True  # type: ignore[union-attr]
    web = {"name": "web", "container": "web", "namespace": "shop", "proposal": approved}

    other = kube.fails("set_resources", **web, cpu="60m")
    assert f"proposal {approved} approved resize Deployment shop/web web cpu 100m -> 50m" in other
    assert "web cpu 100m -> 60m, not web cpu 100m -> 50m" in other
    limited = kube.fails("set_resources", **web, cpu="50m", limit_memory="128Mi")
    assert "limit memory" in limited and "not web cpu 100m -> 50m" in limited
    assert requests(kubectl) == {"cpu": "100m", "memory": "32Mi"}

    dry = kube.ok("set_resources", **web, cpu="50m", dry_run=True)
    assert dry["policy"]["verdict"] == f"approved by agent policy-store (proposal {approved})"
    assert requests(kubectl) == {"cpu": "100m", "memory": "32Mi"}
    done = kube.ok("set_resources", **web, cpu="50m")
    assert any(c["new"] == "50m" for c in done["changes"]), done["changes"]
    assert requests(kubectl) == {"cpu": "50m", "memory": "32Mi"}
    again = kube.fails("set_resources", **web, cpu="50m")
    assert f"proposal {approved} was applied already" in again

    applied = [m for m in mutations(store) if m[2] == "applied"]
    assert applied == [
        ("Deployment shop/web", "set_resources: resize Deployment shop/web web cpu 100m -> 50m "
         f"directly under proposal {approved}", "applied"),
    ]  # fmt: skip


def test_set_resources_and_propose_say_what_they_expect(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    store = tmp_path / "store.sqlite"
    kube = KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig))
    web = {"name": "web", "namespace": "shop"}
    assert "give a quantity such as 100m" in kube.fails(
        "set_resources", **web, container="web", cpu="lots"
    )
    assert "give at least one of cpu" in kube.fails("set_resources", **web, container="web")
    assert "has no container 'app'" in kube.fails("set_resources", **web, container="app", cpu="1")

    failed, text = on_policy_server(
        store, "propose", **RESIZE, resources=[{"container": "web", "cpus": "50m"}]
    )
    assert failed and 'resources is a list of {"container": NAME, "cpu": "100m"' in text
    failed, text = on_policy_server(
        store, "propose", **RESIZE, resources=[{"container": "web", "cpu": "a lot"}]
    )
    assert failed and "not a Kubernetes quantity" in text
    scale = {**RESIZE, "action": "scale", "replicas": 1}
    failed, text = on_policy_server(store, "propose", **scale, resources=[{"container": "web"}])
    assert failed and "resources is for action resize, not scale" in text
