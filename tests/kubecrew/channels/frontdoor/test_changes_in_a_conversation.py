"""Changes asked in a chat go to the agent that owns what they change and are confirmed in the
conversation when destructive: "scale web to 3" is the Dev Team's and done; "take web down"
is asked back, "yes" in the same conversation does it; "cordon node-2" is the Cluster
Operator's. Checked on the cluster."""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path

import anyio

from agents.runtime.brain import Deterministic
from core.policy.proposals import Identity
from core.policy.store import open_store
from kubecrew.channels.frontdoor import FrontDoor
from kubecrew.crew import resolve
from tests.support.crew import crew_of
from tests.support.team import Team
from tests.support.team import prs as prs_of

ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))


def replicas(team: Team) -> int:
    return int(team.kubectl.json("get", "deploy", "web", "-n", "shop")["spec"]["replicas"])


def test_changes_are_routed_and_confirmed_in_the_conversation(team: Team, tmp_path: Path) -> None:
    crew = resolve(crew_of(team), {"KUBECREW_HOME": str(tmp_path / "home")})
    door = FrontDoor(
        servers=crew.servers("dev_team"), planner=Deterministic(), home=tmp_path / "home",
        open_store=lambda: open_store(str(team.store)), via="terminal",
        agent_servers=crew.servers,
    )  # fmt: skip
    chat = "terminal:changes"

    def say(text: str) -> tuple[str, str | None, str]:
        reply = anyio.run(lambda: door.handle(chat, text, ALICE))
        return reply.kind, reply.agent, reply.text

    kind, agent, text = say("please restart web")
    assert (kind, agent) == ("answer", "dev_team") and text.startswith("Done"), text

    kind, agent, text = say("take web down")
    assert (kind, agent) == ("clarify", "dev_team") and "reply 'yes'" in text, text
    assert replicas(team) == 1
    kind, agent, text = say("yes")  # the shipped policies give the shop's scale to zero to a person
    assert agent == "dev_team" and text.startswith("Not done yet"), text
    [request] = re.findall(r"Approval request (a-[0-9a-f]+)", text)
    assert "shop-admins" in text and replicas(team) == 1
    with closing(open_store(str(team.store))) as store:
        assert store.approval(request).state == "pending"

    kind, agent, text = say("cordon node-2")
    assert agent == "cluster_operator" and text.startswith("Done"), text
    assert team.kubectl.json("get", "node", "node-2")["spec"]["unschedulable"] is True


def test_fix_in_a_chat_is_confirmed_first_and_is_web_healthy_never_heals(
    team: Team, tmp_path: Path
) -> None:
    crew = resolve(crew_of(team), {"KUBECREW_HOME": str(tmp_path / "home")})
    door = FrontDoor(
        servers=crew.servers("dev_team"), planner=Deterministic(), home=tmp_path / "home",
        open_store=lambda: open_store(str(team.store)), via="slack", agent_servers=crew.servers,
    )  # fmt: skip
    before = team.kubectl.json("get", "deploy", "web", "-n", "shop")["metadata"]["generation"]

    healthy = anyio.run(lambda: door.handle("C1:1.1", "is web healthy?", ALICE))
    assert healthy.kind == "answer" and healthy.report.get("outcome") is None, healthy.text
    asked = anyio.run(lambda: door.handle("C1:1.1", "fix web", ALICE))
    assert asked.kind == "clarify" and "Reply 'yes'" in asked.text, asked.text
    other = anyio.run(lambda: door.handle("C1:1.1", "no, not now", ALICE))
    assert other.kind != "approval"
    after = team.kubectl.json("get", "deploy", "web", "-n", "shop")["metadata"]["generation"]
    assert after == before and prs_of(team) == []
