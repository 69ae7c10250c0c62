"""The triggers that speak as a person: a chat message through the front door, and comments on
the crew's pull request read by the PR channel's sync.

Both go through the code production runs, not a shortcut to the agents: `chat` hands the text to
`kubecrew.channels.frontdoor.FrontDoor.handle` with the person the channel vouches for (the door
decides whether it is an approval answer, which agent it is for, or a refusal), each agent behind it
on its own servers as `kubecrew slack` builds them; `pr_comment` posts the comments on the crew's
open PR with the world's forge, then runs one pass of `kubecrew approvals sync-prs` (comments
first, then reviews) with the scenario's people file. What a person reads comes back as the
run's answers: the door's reply, one line per comment or review handled.

Who is speaking is the scenario's word here, as it is the channel's in production; the point of
these scenarios is what the crew does with a person it must not obey.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.runtime.brain import Planner
from core.policy.people import People, load_people
from core.policy.proposals import Identity
from core.policy.store import open_store
from kubecrew.channels.frontdoor import FrontDoor
from kubecrew.channels.pr import comments as pr_comments
from kubecrew.channels.pr.approvals import Ledger, ledger_path
from kubecrew.channels.pr.approvals import sync as sync_reviews
from kubecrew.channels.slack.owners import load_policies
from kubecrew.evals.format import Chat, PrComment
from kubecrew.evals.world import Built, WorldFailed
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import GitopsSettings

OnCall = Callable[[str, dict[str, Any]], None]
PENDING = "{pending}"


async def chat(world: Built, said: Chat, planner: Planner, *, on_call: OnCall) -> str:
    """The front door's reply to `said`, spoken by its person; each tool an agent behind the
    door calls is reported to `on_call` as it starts (the door shows tools, never arguments)."""
    door = FrontDoor(
        servers=world.servers,
        planner=planner,
        home=world.home.parent / "frontdoor-home",
        open_store=lambda: open_store(str(world.store)),
        via=said.via,
        agent_servers=lambda agent: world.acting_as(agent).servers,
    )
    person = Identity(kind="person", name=said.speaker.name, groups=tuple(said.speaker.groups))

    def progress(step: str) -> None:
        if step.startswith("tool "):
            on_call(step.removeprefix("tool "), {})

    text = _with_pending(said.text, world.store)
    reply = await door.handle(said.thread, text, person, progress=progress)
    return reply.text


def _with_pending(text: str, store: Path) -> str:
    """`text` with `{pending}` replaced by the id of the one pending approval request."""
    if PENDING not in text:
        return text
    with closing(open_store(str(store))) as opened:
        pending = [r.id for r in opened.approvals(state="pending")]
    if len(pending) != 1:
        raise WorldFailed(
            f"the chat text names {PENDING}, and {len(pending)} approval requests are pending "
            f"({', '.join(pending) or 'none'}): the triggers before it must leave exactly one"
        )
    return text.replace(PENDING, pending[0])


def pr_comment(world: Built, said: PrComment) -> list[str]:
    """The comments posted on the crew's open PR, then one sync as `kubecrew approvals sync-prs`
    runs it with the world's people file; a line per comment or review handled."""
    gitops = world.servers.gitops
    policy = world.servers.policy
    if gitops is None or policy is None:
        raise WorldFailed("pr_comment needs a world with a gitops repository (world.gitops)")
    repo = Repository(gitops.repo, author_name=gitops.author_name, author_email=gitops.author_email)
    forge = LocalProvider(repo, gitops.state_dir)
    number = _crew_pr(forge, gitops)
    for comment in said.comments:
        forge.comment(number, author=comment.login, body=comment.body)
    # an unset people file is nobody, as the command finds when none exists
    people = load_people(world.people, environ={}) if world.people else People()
    ledger = Ledger(ledger_path(str(world.store)))
    try:
        with closing(open_store(str(world.store))) as store:
            now = datetime.now(UTC)
            policies = load_policies(policy.policies, environ={})
            author = gitops.author_name
            handled = pr_comments.sync(
                forge, repo, store, people, policies, now, crew_author=author, ledger=ledger
            )
            reviewed = sync_reviews(forge, store, people, now, crew_author=author, ledger=ledger)
    finally:
        ledger.close()
    return [h.describe() for h in handled] + [o.describe() for o in reviewed]


def _crew_pr(forge: LocalProvider, gitops: GitopsSettings) -> int:
    opened = [pr.number for pr in forge.list_prs(state="open") if pr.author == gitops.author_name]
    if len(opened) != 1:
        raise WorldFailed(
            f"pr_comment comments on the crew's one open PR, and {gitops.author_name} has "
            f"{len(opened)} open: the triggers before it must leave exactly one"
        )
    return opened[0]
