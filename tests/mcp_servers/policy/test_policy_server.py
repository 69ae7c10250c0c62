"""The policy MCP server as hosts run it: `kubecrew mcp policy ...` spawned over stdio and called
with the official MCP client, several servers (an agent's, people's) sharing one SQLite store.

The issue's acceptance runs here end to end: the Cluster Operator's server proposes the
downscale 5 -> 1 and gets "approved as countered (3)"; when it refuses the counter, the store
escalates to the shop's admins, and a person's server (`--as alice --group shop-admins`) grants
it through `answer_approval`, after which the proposal reads "approved" by person alice, and the
audit log shows the answer. Identity is configuration: an agent's server has no answer tool, a
read-only one neither propose nor answer, and a person who is no approver gets PermissionDenied.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent

from sandbox.server import Sandbox
from tests.support.mcp_hosts import KUBECREW, answer, child_env, run, stdio_session

POLICIES = Path(__file__).parents[3] / "policies"
DOWNSCALE = {
    "action": "scale",
    "target": "deployment/web",
    "namespace": "shop",
    "from_replicas": 5,
    "replicas": 1,
    "metrics": {"cpu_utilization": 0.1},
    "rationale": "web has used under 10% CPU for an hour",
    "savings_per_month": 120,
}
MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
READS = {
    "list_policies",
    "get_policy",
    "explain_policy",
    "evaluate_action",
    "get_proposal",
    "list_proposals",
    "evaluate_proposal",
    "list_approvals",
    "audit_query",
    "audit_verify",
}


def command(store: Path | str, *identity: str) -> list[str]:
    """`kubecrew mcp policy` as a host's configuration spells it."""
    policy = [KUBECREW, "mcp", "policy", "--policies", str(POLICIES)]
    return [*policy, "--store", str(store), *identity]


class Policy:
    """One server's session: call a tool and get its JSON, or its error text."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def tools(self) -> set[str]:
        return {tool.name for tool in (await self.session.list_tools()).tools}

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return answer(await self.session.call_tool(tool, arguments))

    async def error(self, tool: str, **arguments: Any) -> str:
        result: CallToolResult = await self.session.call_tool(tool, arguments)
        text = "".join(block.text for block in result.content if isinstance(block, TextContent))
        assert result.isError, f"{tool} should have failed, answered {text}"
        return text


@asynccontextmanager
async def server(
    store: Path | str, log: Path, *identity: str, env: dict[str, str] | None = None
) -> AsyncIterator[Policy]:
    async with stdio_session(command(store, *identity), log, env) as session:
        yield Policy(session)


def test_policies_are_listed_explained_and_dry_run(tmp_path: Path) -> None:
    async def go() -> None:
        async with server(tmp_path / "store.sqlite", tmp_path / "log", "--read-only") as policy:
            listed = await policy("list_policies", kind="CapacityPolicy")
            assert {(p["name"], p["team"]) for p in listed["policies"]} == {
                ("shop-min-capacity", "shop"),
                ("cluster-dns-capacity", "cluster-ops"),
            }
            sources = {p["name"]: p["source"] for p in listed["policies"]}
            assert sources["shop-min-capacity"] == f"{POLICIES}/capacity.yaml:2"
            got = await policy("get_policy", name="shop-min-capacity")
            assert "minReplicas: 3" in got["yaml"]
            explained = await policy("explain_policy", name="shop-min-capacity")
            assert any(line.startswith("rule min-replicas:") for line in explained["explanation"])
            dry = await policy(
                "evaluate_action", **_without(DOWNSCALE, "rationale", "savings_per_month")
            )
            assert dry["verdict"] == "counter" and dry["counter"] == {"replicas": 3}
            assert MIN_REPLICAS in [fired["citation"] for fired in dry["fired"]]
            assert [h["team"] for h in dry["stakeholders"]] == ["shop"]
            assert "Verdict: counter replicas=3" in dry["text"]
            missing = await policy.error("get_policy", name="shop-max-capacity")
            assert "no policy named 'shop-max-capacity'" in missing
            wrong = await policy.error("evaluate_action", action="scale", target="web", replicas=1)
            assert "is not KIND/NAME" in wrong

    run(go)


def test_the_operator_downscale_is_approved_as_countered(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        async with server(store, tmp_path / "log", "--agent", "cluster-operator") as operator:
            assert await operator.tools() == READS | {"propose", "claim_approval"}
            proposed = await operator("propose", **DOWNSCALE)
            decision = proposed["decision"]
            assert decision["outcome"] == "approved-as-countered"
            assert decision["action"]["replicas"] == {"from": 5, "to": 3}
            assert proposed["proposer"] == "agent cluster-operator"
            assert proposed["approval"] is None
            assert "not the one proposed" in proposed["next"]
            shop = await operator(
                "evaluate_proposal", proposal_id=proposed["proposal"], team="shop"
            )
            assert shop["verdict"] == "accept", shop
            nobody = await operator.error(
                "evaluate_proposal", proposal_id=proposed["proposal"], team="payments"
            )
            assert "team 'payments' has no say" in nobody
            shown = await operator("get_proposal", proposal_id=proposed["proposal"])
            texts = [event["text"] for event in shown["transcript"]]
            assert any("shop (dev-team) counters" in t and MIN_REPLICAS in t for t in texts)
            listed = await operator("list_proposals", state="decided")
            assert [p["id"] for p in listed["proposals"]] == [proposed["proposal"]]

    run(go)


def test_a_refused_counter_is_granted_by_a_shop_admin_over_mcp(tmp_path: Path) -> None:
    """The issue's inverse case: escalated to a person, who approves it through an MCP call."""
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        async with server(
            store, tmp_path / "operator.log", "--agent", "cluster-operator"
        ) as operator:
            proposed = await operator("propose", **DOWNSCALE, counters="refuse")
            assert proposed["state"] == "escalated"
            request = proposed["approval"]
            assert request["approvers"] == "group shop-admins, agent platform"
            assert request["state"] == "pending" and request["expires_at"]
            assert request["id"] in proposed["next"]
        async with server(store, tmp_path / "bob.log", "--as", "bob", "--group", "dev") as bob:
            pending = await bob("list_approvals")
            assert [(r["id"], r["may_answer"]) for r in pending["approvals"]] == [
                (request["id"], False)
            ]
            refused = await bob.error("answer_approval", request_id=request["id"], verdict="grant")
            assert "person bob may not answer" in refused and "shop-admins" in refused
        alice_options = ("--as", "alice", "--group", "shop-admins")
        async with server(store, tmp_path / "alice.log", *alice_options) as alice:
            assert "answer_approval" in await alice.tools()
            granted = await alice(
                "answer_approval", request_id=request["id"], verdict="grant", reason="sale is over"
            )
            assert granted["state"] == "granted"
            assert [(a["by"], a["via"]) for a in granted["answers"]] == [("person alice", "mcp")]
            shown = await alice("get_proposal", proposal_id=proposed["proposal"])
            assert shown["decision"]["outcome"] == "approved"
            assert shown["decision"]["decided_by"] == "person alice"
            assert shown["decision"]["action"]["replicas"]["to"] == 1
            again = await alice.error("answer_approval", request_id=request["id"], verdict="deny")
            assert "person alice already answered" in again
            answers = await alice("audit_query", subject=request["id"], kind="answer")
            assert [(r["actor"], r["result"]) for r in answers["records"]] == [
                ("person alice", "granted")
            ]
            assert "via mcp: sale is over" in answers["records"][0]["summary"]
            verified = await alice("audit_verify")
            assert verified["intact"] and verified["records"] > 0, verified
        carol_options = ("--as", "carol", "--group", "shop-admins")
        async with server(store, tmp_path / "carol.log", *carol_options) as carol:
            late = await carol.error("answer_approval", request_id=request["id"], verdict="deny")
            assert f"{request['id']} is already granted" in late

    run(go)


def test_read_only_and_agent_servers_cannot_answer(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"

    async def go() -> None:
        options = ("--as", "alice", "--group", "shop-admins", "--read-only")
        async with server(store, tmp_path / "ro.log", *options) as read_only:
            assert await read_only.tools() == READS
        async with server(store, tmp_path / "agent.log", "--agent", "dev-team") as agent:
            assert "answer_approval" not in await agent.tools()

    run(go)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--agent", "dev-team", "--as", "alice"], "give one or the other"),
        (["--policies", "nowhere"], "nowhere: no such file or directory"),
    ],
    ids=["agent-and-person", "missing-policies"],
)
def test_an_unusable_configuration_stops_the_start(
    tmp_path: Path, options: list[str], says: str
) -> None:
    started = subprocess.run(
        [KUBECREW, "mcp", "policy", "--store", str(tmp_path / "s.sqlite"), *options],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert started.returncode == 1
    assert says in started.stderr + started.stdout


def test_on_the_kubernetes_store_the_api_server_says_who_answers(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The sandbox's kubeconfig user is kubecrew-admin, in no shop group: a claim to be alice or a
    shop admin stops the start, and the admin's server may not grant the shop's request."""
    env = child_env(KUBECONFIG=str(sandbox.kubeconfig))
    for claim, says in [
        (["--as", "alice"], "the store's API server says you are kubecrew-admin"),
        (["--group", "shop-admins"], "does not put kubecrew-admin in it"),
    ]:
        started = subprocess.run(
            command("kubernetes", *claim), capture_output=True, text=True, timeout=60, env=env
        )
        assert started.returncode == 1 and says in started.stderr, started.stderr

    async def go() -> None:
        agent = ("--agent", "cluster-operator")
        async with server("kubernetes", tmp_path / "op.log", *agent, env=env) as operator:
            proposed = await operator("propose", **DOWNSCALE, counters="refuse")
            request = proposed["approval"]["id"]
        async with server("kubernetes", tmp_path / "admin.log", env=env) as admin:
            pending = await admin("list_approvals")
            assert pending["you"] == "person kubecrew-admin"
            assert [(r["id"], r["may_answer"]) for r in pending["approvals"]] == [(request, False)]
            refused = await admin.error("answer_approval", request_id=request, verdict="grant")
            assert "person kubecrew-admin may not answer" in refused

    run(go)


def _without(arguments: dict[str, Any], *names: str) -> dict[str, Any]:
    return {key: value for key, value in arguments.items() if key not in names}
