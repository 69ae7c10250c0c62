"""The kube server's policy gate as a host runs it: `kubecrew mcp kube --policies policies
--policy-store <sqlite>` over stdio with the official MCP client, on a sandbox running the shop.

The shipped policies keep the shop's workloads at 3 replicas or more and make a delete a shop
admin's call. So scaling web 5 -> 1 is refused citing the rule and its counter-offer (3), 5 -> 3
goes through, and deleting web is refused; a person-approved proposal (made and granted on the
policy server sharing the store) carries 5 -> 1 through once, and no other call. A dry run is
judged and never refused. Every real write and refusal lands in the audit log, which stays intact.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent

from core.policy.store.sqlite import SqliteStore
from sandbox.server import Sandbox
from tests.support.audit import mutation_records, mutations
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW, answer, run, stdio_session
from tests.support.policies import POLICIES
from tests.support.shop import WEB

MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
WEB_5_TO_1 = {
    "action": "scale",
    "target": "deployment/web",
    "namespace": "shop",
    "from_replicas": 5,
    "replicas": 1,
    "rationale": "the sale is over",
}


class Tools:
    """One server's session: a tool's JSON answer, or the text of its error."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return answer(await self.session.call_tool(tool, arguments))

    async def refused(self, tool: str, **arguments: Any) -> str:
        result: CallToolResult = await self.session.call_tool(tool, arguments)
        text = "".join(block.text for block in result.content if isinstance(block, TextContent))
        assert result.isError, f"{tool} {arguments} should have been refused, answered {text}"
        return text


def kube_command(sandbox: Sandbox, store: Path) -> list[str]:
    return [
        KUBECREW, "mcp", "kube", "--kubeconfig", str(sandbox.kubeconfig),
        "--policies", str(POLICIES), "--policy-store", str(store), "--as-agent", "dev-team",
    ]  # fmt: skip


def policy_command(store: Path, *identity: str) -> list[str]:
    return [
        KUBECREW,
        "mcp",
        "policy",
        "--policies",
        str(POLICIES),
        "--store",
        str(store),
        *identity,
    ]


def replicas(kubectl: Kubectl) -> int:
    return int(kubectl("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}"))


def test_writes_are_judged_by_policy_and_audited(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        async with stdio_session(kube_command(sandbox, store), tmp_path / "kube.log") as session:
            kube = Tools(session)
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert "proposal" in listed["scale"].inputSchema["properties"]
            assert "proposal" not in listed["get_resource"].inputSchema["properties"]

            dry = await kube("scale", name="web", namespace="shop", replicas=1, dry_run=True)
            assert dry["policy"]["verdict"] == "counter replicas=3"
            assert MIN_REPLICAS in dry["policy"]["refused"]

            refused = await kube.refused("scale", name="web", namespace="shop", replicas=1)
            assert MIN_REPLICAS in refused and "Counter-offer: replicas=3" in refused
            assert "propose" in refused
            assert replicas(kubectl) == 5

            scaled = await kube("scale", name="web", namespace="shop", replicas=3)
            assert scaled["policy"]["verdict"] == "allow"
            assert replicas(kubectl) == 3

            patched = await kube.refused(
                "patch", kind="deployment", name="web", namespace="shop",
                patch={"spec": {"replicas": 1}},
            )  # fmt: skip
            assert MIN_REPLICAS in patched and "scale Deployment shop/web 3 -> 1" in patched
            assert replicas(kubectl) == 3

            deleted = await kube.refused("delete", kind="deployment", name="web", namespace="shop")
            assert MIN_REPLICAS in deleted
            assert "ChangePolicy shop-changes / rule deletes" in deleted
            assert "group shop-admins" in deleted
            kubectl("get", "deploy/web", "-n", "shop")  # still there

    run(go)
    assert mutations(store) == [
        ("Deployment shop/web", "scale: scale Deployment shop/web 5 -> 1 replicas directly",
         "refused: counter replicas=3"),
        ("Deployment shop/web", "scale: scale Deployment shop/web 5 -> 3 replicas directly",
         "applied"),
        ("Deployment shop/web",
         "patch: patch Deployment shop/web directly; scale Deployment shop/web 3 -> 1 replicas "
         "directly", "refused: counter replicas=3"),
        ("Deployment shop/web", "delete: delete Deployment shop/web directly", "refused: reject"),
    ]  # fmt: skip


def test_an_approved_proposal_carries_its_own_call_once(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        operator = policy_command(store, "--agent", "cluster-operator")
        async with stdio_session(operator, tmp_path / "operator.log") as session:
            proposed = await Tools(session)("propose", **WEB_5_TO_1, counters="refuse")
        alice = policy_command(store, "--as", "alice", "--group", "shop-admins")
        async with stdio_session(alice, tmp_path / "alice.log") as session:
            request = proposed["approval"]["id"]
            await Tools(session)("answer_approval", request_id=request, verdict="grant")
        approved = proposed["proposal"]
        async with stdio_session(kube_command(sandbox, store), tmp_path / "kube.log") as session:
            kube = Tools(session)
            other = await kube.refused(
                "scale", name="web", namespace="shop", replicas=2, proposal=approved
            )
            assert f"proposal {approved} approved scale Deployment shop/web" in other
            assert "2 replicas, not 1" in other
            assert replicas(kubectl) == 5

            scaled = await kube(
                "scale", name="web", namespace="shop", replicas=1, proposal=approved
            )
            assert scaled["policy"]["verdict"] == f"approved by person alice (proposal {approved})"
            assert replicas(kubectl) == 1

            again = await kube.refused(
                "scale", name="web", namespace="shop", replicas=1, proposal=approved
            )
            assert f"proposal {approved} was applied already" in again
            unknown = await kube.refused(
                "scale", name="web", namespace="shop", replicas=1, proposal="p-00000000"
            )
            assert "p-00000000" in unknown
            junk = await kube.refused(
                "scale", name="web", namespace="shop", replicas=1, proposal="../etc"
            )
            assert "is not an id such as p-1a2b3c4d" in junk

    run(go)
    applied = [m for m in mutations(store) if m[2] == "applied"]
    assert applied == [
        ("Deployment shop/web",
         f"scale: scale Deployment shop/web 5 -> 1 replicas directly under proposal "
         f"{proposed_id(store)}", "applied"),
    ]  # fmt: skip
    carried = [r.details for r in mutation_records(store) if r.result == "applied"]
    assert carried == [{"proposal": proposed_id(store)}]  # what the replay check matches on
    verified = subprocess.run(
        [KUBECREW, "audit", "verify", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0 and "intact" in verified.stdout, verified.stdout


def proposed_id(store: Path) -> str:
    opened = SqliteStore(store)
    try:
        [proposal] = opened.list()
        return proposal.id
    finally:
        opened.close()


EGRESS = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress, namespace: shop}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{ipBlock: {cidr: 203.0.113.0/24}}]
      ports: [{protocol: TCP, port: 443}]
"""
ANYWHERE = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"protocol": "TCP", "port": 443}]}
ALLOWED = "EgressPolicy shop-egress / rule allowed-destinations"


def test_a_write_is_judged_by_the_object_it_leaves_not_the_one_it_replaces(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    """A NetworkPolicy that is compliant live cannot be widened by an apply or a patch: the gate
    judges the server's dry run of the write, not the live object."""
    kubectl("create", "namespace", "shop")
    store = tmp_path / "store.sqlite"
    widened = yaml.safe_load(EGRESS)
    widened["spec"]["egress"].append(ANYWHERE)

    async def go() -> None:
        async with stdio_session(kube_command(sandbox, store), tmp_path / "kube.log") as session:
            kube = Tools(session)
            applied = await kube("apply", manifest=EGRESS)
            assert applied["policy"]["verdict"] == "allow"
            refused = await kube.refused("apply", manifest=yaml.safe_dump(widened))
            assert ALLOWED in refused and "0.0.0.0/0" in refused
            patched = await kube.refused(
                "patch", kind="networkpolicy", name="egress", namespace="shop",
                patch={"spec": {"egress": widened["spec"]["egress"]}}, patch_type="merge",
            )  # fmt: skip
            assert ALLOWED in patched

    run(go)
    live = kubectl.json("get", "networkpolicy/egress", "-n", "shop")
    assert live["spec"]["egress"] == yaml.safe_load(EGRESS)["spec"]["egress"]


def test_a_create_is_judged_as_replicas_from_none(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    """A new Deployment with 2 replicas in the shop, which keeps 3 at the least: refused, and said
    as the 0 -> 2 it is (the policy store used to take "from" off the new object: "2 -> 2")."""
    kubectl("create", "namespace", "shop")
    [api] = [d for d in yaml.safe_load_all(WEB) if d["kind"] == "Deployment"]
    api["metadata"]["name"] = "api"
    api["spec"]["replicas"] = 2
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        async with stdio_session(kube_command(sandbox, store), tmp_path / "kube.log") as session:
            refused = await Tools(session).refused("apply", manifest=yaml.safe_dump(api))
            assert MIN_REPLICAS in refused, refused
            assert "scale Deployment shop/api 0 -> 2 replicas" in refused, refused

    run(go)
    assert "api" not in kubectl("get", "deploy", "-n", "shop", "-o", "name")
