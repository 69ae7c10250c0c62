"""The gates hold whoever plans. A model that asks for writes, in the middle of a question,
gets none of them: `drain` is outside the Dev Team's allow-list, and the writes the role does
have (`set_image`, `scale`, `apply`, `delete`, approving and merging a person's pull request)
are the remediation loop's and a person's asked changes, never the model's: none is
offered, each is refused before any server sees it, the model is shown the refusal, and the
cluster, the repository and the audit log are unchanged. A fix the policy refuses is not made
when a model planned the run, by pull request or by a direct write, the refusal cited, as
when no model planned it.
(`test_validation_decides_whoever_says_fixed`: a model's "fixed" does not make the loop's.)
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from mcp.shared.memory import create_connected_server_and_client_session

from agents.dev_team.conversation import Conversation, conversation
from agents.runtime.brain import Deterministic, ModelPlanner
from agents.runtime.contract import Outcome
from agents.runtime.scripted import ScriptedChatModel, calls
from core.policy.settings import SHIPPED
from mcp_servers.gitops.server import build as build_gitops
from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam, model_team
from tests.agents.runtime.model_loop.scripts import investigator
from tests.support.diagnosis import Doctor, deployment, rollout
from tests.support.gitops import git
from tests.support.heals import TYPO, break_web
from tests.support.kubectl import Kubectl
from tests.support.team import WEB, make_team

SHOP = {"namespace": "shop", "kind": "deployment", "name": "web"}
NOT_ALLOWED: dict[str, dict[str, Any]] = {  # outside the Dev Team's allow-list
    "drain": {"node": "node-1"},
}
ZERO = json.loads(deployment("web", {"image": "nginx:1.27"}, replicas=0))
MODELS_OWN: dict[str, dict[str, Any]] = {  # the role's writes: the loop's, never a model's
    "scale": {"name": "web", "replicas": 0, "namespace": "shop"},
    "set_image": {"name": "web", "container": "web", "image": "nginx:1.27", "namespace": "shop"},
    "apply": {"manifest": json.dumps(ZERO), "namespace": "shop"},
    "review_pr": {"number": 1, "verdict": "approve", "body": "LGTM"},
    "merge_pr": {"number": 1},
    "delete": {"kind": "deployment", "name": "web", "namespace": "shop"},
}
FREEZE = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata:
  name: sale-freeze
  labels:
    kubecrew.io/team: shop
spec:
  selector:
    namespaces: [shop]
  rules:
    - name: no-changes-during-the-sale
      description: the shop is frozen for the sale
      actions: [patch, apply, rollback, restart, scale]
      when: 'true'
      message: the shop is frozen for the sale; changes wait until Monday
"""


def gitops(team: ModelTeam, tool: str, **arguments: Any) -> dict[str, Any]:
    """A person's call to the gitops server, over MCP."""
    assert team.servers.gitops is not None
    settings = team.servers.gitops

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build_gitops(settings)) as client:
            done = await client.call_tool(tool, arguments)
            assert not done.isError, done.content
            return dict(done.structuredContent or {})

    return anyio.run(go)


def ask(team: ModelTeam, model: ScriptedChatModel, question: str) -> tuple[Outcome, Conversation]:
    async def go() -> tuple[Outcome, Conversation]:
        async with conversation(team.servers, ModelPlanner(model), home=team.home) as talk:
            return await talk.ask(question), talk

    return anyio.run(go)


def test_writes_a_model_asks_for_are_refused_and_change_nothing(
    team: ModelTeam, sandbox: Sandbox
) -> None:
    break_web(team, sandbox)
    night = gitops(
        team,
        "propose_change",
        title="web: scale to zero for the night",
        path=WEB,
        kind="Deployment",
        name="web",
        edits=[{"path": "spec.replicas", "value": 0}],
        branch="night",
    )
    assert night["number"] == 1
    head, audit = git(team.repo, "rev-parse", "main"), len(team.audit())
    model = ScriptedChatModel(
        turns=[
            calls(("diagnose", SHOP)),
            calls(*NOT_ALLOWED.items(), *MODELS_OWN.items()),
            AIMessage("Fixed: I set the image back, scaled web and merged PR #1."),
        ]
    )

    outcome, talk = ask(team, model, "why is web failing?")

    refused = {
        c.tool: c.error or "" for c in talk.toolbox.calls if c.tool in {*NOT_ALLOWED, *MODELS_OWN}
    }
    assert set(refused) == {*NOT_ALLOWED, *MODELS_OWN}
    assert all("allow-list" in refused[tool] for tool in NOT_ALLOWED), refused
    assert all("a model plans reads only" in refused[tool] for tool in MODELS_OWN), refused
    shown = [m for m in model.seen[-1] if isinstance(m, ToolMessage) and m.name in refused]
    assert len(shown) == len(refused) and all(m.status == "error" for m in shown)
    assert not ({*NOT_ALLOWED, *MODELS_OWN, "propose", "sync"} & set(model.offered))

    assert team.image() == TYPO  # nothing changed: the cluster, the repository, the PR, the audit
    assert team.kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 1
    assert git(team.repo, "rev-parse", "main") == head
    pr = gitops(team, "get_pr", number=1)["pr"]
    assert pr["state"] == "open" and not pr.get("reviews"), pr
    assert len(team.audit()) == audit
    assert outcome.answer.startswith("Deployment web in shop is failing: ")
    assert "I changed nothing" in outcome.answer


@pytest.fixture
def frozen(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> ModelTeam:
    mine = tmp_path / "team-policies"
    mine.mkdir()
    (mine / "sale-freeze.yaml").write_text(FREEZE)
    return model_team(make_team(sandbox, kubectl, tmp_path, (SHIPPED, mine)))


def test_a_fix_the_policy_refuses_is_not_made_whoever_plans(
    frozen: ModelTeam, sandbox: Sandbox
) -> None:
    break_web(frozen, sandbox)  # git-managed: the loop would open a PR
    frozen.kubectl("apply", "-f", "-", input=deployment("api", {"image": "nginx:1.27"}))
    rollout(frozen.kubectl, "api")  # not in git: the loop would write directly
    frozen.kubectl("set", "image", "deployment/api", "main=nginx:1.27-alpinee", "-n", "shop")
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="deployment", name="api")
    head = git(frozen.repo, "rev-parse", "main")

    for app in ("web", "api"):
        frozen.script = partial(investigator, app)
        healed = frozen.heal(app)
        assert healed.outcome == "escalated", healed.summary
        assert healed.attempts and all(a["verdict"] == "refused" for a in healed.attempts)
        assert "no-changes-during-the-sale" in healed.summary, healed.summary
        plain = frozen.heal(app, planner=Deterministic())
        assert [a["fix"] for a in plain.attempts] == [a["fix"] for a in healed.attempts]

    assert frozen.image() == TYPO and git(frozen.repo, "rev-parse", "main") == head
    assert gitops(frozen, "list_prs", state="all")["prs"] == []
    live = frozen.kubectl.json("get", "deployment", "api", "-n", "shop")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27-alpinee"
    refused = [r for r in frozen.audit() if r.kind == "mutation"]
    assert refused and all(r.result.startswith("refused") for r in refused)
