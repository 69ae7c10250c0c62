"""The agents' turns in a demo scene: one conversation each, on the world's servers and the
agent's own home, with the deterministic brain, its tool calls told in one line; and `check`,
which turns a claim the narration makes into a failed step when it does not hold.

Scenes (`kubecrew.demo.scenes`, `kubecrew.demo.governance`) share these so that every agent
speaks as the same identity and remembers across turns the same way in every story.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio

from agents.cluster_operator.conversation import Conversation
from agents.cluster_operator.conversation import conversation as operator_conversation
from agents.platform.conversation import conversation as platform_conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from kubecrew.demo.tour import StepFailed
from kubecrew.demo.world import World

OPERATOR = "Cluster Operator"
PLATFORM = "Platform"


def check(holds: bool, claim: str) -> None:
    if not holds:
        raise StepFailed(claim)


VERBS = {"patrol": "patrols with", "capacity": "reviews capacity with"}


def operator_turn(
    world: World, task: str, *, counters: Literal["accept", "refuse"] = "accept"
) -> Outcome:
    """One Cluster Operator turn (`patrol` or `capacity`), its tool calls told in one line;
    `counters="refuse"` is an operator that leaves every counter-offer to someone else."""
    return _operator(world, VERBS[task], lambda talk: talk.perform(task), counters=counters)


def operator_ask(world: World, question: str, *, thread: str | None = None) -> Outcome:
    """One message to the Cluster Operator; the same `thread` carries on a conversation."""
    return _operator(world, "reads and acts with", lambda talk: talk.ask(question), thread=thread)


def _operator(
    world: World,
    verb: str,
    turn: Callable[[Conversation], Awaitable[Outcome]],
    *,
    counters: Literal["accept", "refuse"] = "accept",
    thread: str | None = None,
) -> Outcome:
    called: Counter[str] = Counter()

    async def go() -> Outcome:
        async with operator_conversation(
            world.servers("cluster-operator"),
            Deterministic(),
            home=world.root / "agents" / "cluster_operator",
            on_call=lambda tool, _arguments: called.update([tool]),
            counters=counters,
            thread=thread,
        ) as talk:
            return await turn(talk)

    outcome = anyio.run(go)
    world.narrator.say(OPERATOR, verb, _told(called))
    return outcome


def _told(called: Counter[str]) -> str:
    return ", ".join(f"{tool} x{n}" if n > 1 else tool for tool, n in called.items())


def platform_turn(world: World) -> Outcome:
    """One Platform turn on its schedule: the escalations org policy settles, answered."""
    called: Counter[str] = Counter()

    async def go() -> Outcome:
        async with platform_conversation(
            world.servers("platform"),
            Deterministic(),
            home=world.root / "agents" / "platform",
            on_call=lambda tool, _arguments: called.update([tool]),
        ) as talk:
            return await talk.answer_escalations()

    outcome = anyio.run(go)
    world.narrator.say(PLATFORM, "answers escalations with", _told(called))
    return outcome
