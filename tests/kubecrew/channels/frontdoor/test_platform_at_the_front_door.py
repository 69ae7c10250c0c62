"""The Platform agent at the front door: "any escalations to settle?" in a Slack thread reaches
it, not the other two; it denies the Cluster Operator's refused downscale under org policy and
says why, and a follow-up in the thread stays with it. A message naming nothing asks which
agent, and "platform" sends the waiting question there."""

from __future__ import annotations

from pathlib import Path

import anyio

from agents.runtime.brain import Deterministic
from core.policy.proposals import Identity
from core.policy.store import open_store
from kubecrew.channels.frontdoor import FrontDoor, route
from kubecrew.crew import resolve
from tests.support.crew import crew_of
from tests.support.team import Team, escalate, mutations, state_of

ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))


def door_for(team: Team, home: Path) -> FrontDoor:
    crew = resolve(crew_of(team), {"KUBECREW_HOME": str(home)})
    return FrontDoor(
        servers=crew.servers("platform"),
        planner=Deterministic(),
        home=home,
        open_store=lambda: open_store(str(team.store)),
        via="slack",
        agent_servers=crew.servers,
    )


def test_escalations_reach_the_platform_which_settles_them(team: Team, tmp_path: Path) -> None:
    request = escalate(team)
    door = door_for(team, tmp_path / "home")
    thread = "C0123:1765000200.000100"

    reply = anyio.run(lambda: door.handle(thread, "<@U0BOT> any escalations to settle?", ALICE))
    assert (reply.kind, reply.agent) == ("answer", "platform"), reply.text
    assert request in reply.text and "CapacityPolicy shop-min-capacity" in reply.text
    assert "propose scale to 3" in reply.text
    assert state_of(team, request) == "denied"
    assert mutations(team) == []  # it answered the request; it changed nothing on the cluster

    again = anyio.run(lambda: door.handle(thread, "and now?", ALICE))
    assert again.agent == "platform", again.text  # the thread keeps its agent


def test_a_question_naming_no_agent_is_sent_to_the_platform_when_asked(
    team: Team, tmp_path: Path
) -> None:
    door = door_for(team, tmp_path / "home")
    thread = "C0123:1765000200.000200"
    asked = anyio.run(lambda: door.handle(thread, "hello there", ALICE))
    assert asked.kind == "clarify" and "the Platform agent" in asked.text, asked.text
    request = escalate(team)
    answered = anyio.run(lambda: door.handle(thread, "platform", ALICE))
    assert answered.agent == "platform", answered.text
    # "hello there" is not a platform question: it answers with what it can do, settling nothing.
    assert state_of(team, request) == "pending"


def test_routing_words() -> None:
    assert route("is the shop compliant with the egress policy?") == "platform"
    assert route("audit the fleet for over-grants") == "platform"
    assert route("why is web failing?") == "dev_team"
    assert route("which nodes are unhealthy?") == "cluster_operator"
    assert route("is node-1 healthy?") == "cluster_operator"  # health is no "heal"
    assert route("is web healthy in shop?") == route("why is web unhealthy?") == "dev_team"
    assert route("heal web") == "dev_team"
