"""A question the Dev Team asks back ("web in shop or staging?") and the person's pick ("shop")
are one conversation: the pick answers the waiting question about that namespace's workload,
and the answer is an answer, not the old question asked again."""

from __future__ import annotations

from pathlib import Path

import anyio

from agents.runtime.brain import Deterministic
from core.policy.proposals import Identity
from core.policy.store import open_store
from kubecrew.channels.frontdoor import FrontDoor
from kubecrew.crew import resolve
from tests.support.crew import crew_of
from tests.support.team import Team

ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
STAGING_WEB = """\
apiVersion: v1
kind: Namespace
metadata: {name: staging}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: staging}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
"""


def test_the_picked_namespace_answers_the_question_that_waited(team: Team, tmp_path: Path) -> None:
    team.kubectl("apply", "-f", "-", input=STAGING_WEB)
    crew = resolve(crew_of(team), {"KUBECREW_HOME": str(tmp_path / "home")})
    door = FrontDoor(
        servers=crew.servers("dev_team"),
        planner=Deterministic(),
        home=tmp_path / "home",
        open_store=lambda: open_store(str(team.store)),
        via="slack",
        agent_servers=crew.servers,
    )
    thread = "C0123:1765000300.000100"

    asked = anyio.run(lambda: door.handle(thread, "why is web failing?", ALICE))
    assert asked.kind == "clarify", asked.text
    assert "shop" in asked.text and "staging" in asked.text

    picked = anyio.run(lambda: door.handle(thread, "shop", ALICE))
    assert (picked.kind, picked.agent) == ("answer", "dev_team"), picked.text
    assert "web in shop" in picked.text and "staging" not in picked.text, picked.text
