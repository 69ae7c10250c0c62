"""An agent cannot pass itself off as a person through the gitops server.

The attack: an agent whose delete waits for shop-admins opens the PR carrying the request, then
calls `review_pr {verdict: approve, author: "alice-gh"}` (or `comment_pr` with alice's login)
on its own gitops server, and `kubecrew approvals sync-prs` records alice's grant. Who writes is
the server's configuration: the tools take no author, the PR store records the server's identity
whatever the arguments say, and reviews and comments by the crew's identities answer nothing.
GitHub: the bot account's review answers nothing, and its text names no one else either.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.people import People, Person
from kubecrew.channels.pr.approvals import Ledger, ledger_path, sync
from kubecrew.crew import Crew, gitops_authors
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from tests.support.github import FakeGitHub, github_side, hosted_clone, running_github
from tests.support.gitops import Call, ToolFailed, session, settings_for
from tests.support.pr_channel import Policy, comments_synced, crew_pr, escalated, synced

TOKEN = "ghp-kubecrew-forged-approval-7a1c"
FORGED = {"author": "alice-gh"}  # what the agent slips in beside the real arguments


@pytest.fixture
def policy(tmp_path: Path) -> Iterator[Policy]:
    """The PR channel's world: an escalated downscale waiting for shop-admins."""
    with escalated(tmp_path) as world:
        yield world


def _as_agent(settings: Any, script: Any) -> None:
    """Run `script(call)` on a fresh gitops server built from `settings`, as an agent would;
    a call refused for its arguments counts as refused, not as a test failure."""

    async def tolerant(call: Call) -> None:
        async def attempt(tool: str, **args: Any) -> Any:
            try:
                return await call(tool, **args)
            except ToolFailed:
                return None

        await script(attempt)

    session(build(settings), tolerant)


def test_an_agents_approval_in_a_persons_name_answers_nothing(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)

    async def forge(call: Call) -> None:
        await call("review_pr", number=number, verdict="approve", **FORGED)

    _as_agent(settings_for(manifests), forge)
    reviewers = {r.author for r in provider.get(number).pr.reviews}
    assert "alice-gh" not in reviewers
    assert not [o for o in synced(provider, policy) if o.kind == "answered"]
    assert policy.now().state == "pending"
    assert policy.now().answers == []


def test_an_agents_comment_in_a_persons_name_amends_nothing(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    head = provider.get(number).pr.head_commit

    async def forge(call: Call) -> None:
        await call("comment_pr", number=number, body="@kubecrew use 4 replicas instead", **FORGED)

    _as_agent(settings_for(manifests), forge)
    assert {c.author for c in provider.get(number).pr.comments} <= {"kubecrew"}
    assert not [h for h in comments_synced(provider, manifests, policy) if h.kind == "amended"]
    assert provider.get(number).pr.head_commit == head
    assert policy.now().state == "pending"


def test_no_write_tool_takes_an_author(manifests: Path) -> None:
    async def main() -> None:
        async with create_connected_server_and_client_session(
            build(settings_for(manifests))
        ) as client:
            tools = (await client.list_tools()).tools
        taking = {t.name for t in tools if "author" in t.inputSchema.get("properties", {})}
        assert taking == set()

    anyio.run(main)


def test_every_author_the_tools_write_is_the_servers_own(manifests: Path) -> None:
    """Whatever the arguments say, the local PR store records the server's configured identity
    as the author of each PR, review and comment the tools write."""
    settings = settings_for(manifests, author_name="dev-team-bot")
    numbers: list[int] = []

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Scale web to 2", path="apps/shop/web.yaml",
            kind="Deployment", name="web", edits=[{"path": "spec.replicas", "value": 2}],
            **FORGED,
        )  # fmt: skip
        numbers.append(opened["number"])
        await call("comment_pr", number=opened["number"], body="lgtm", **FORGED)
        await call("review_pr", number=opened["number"], verdict="approve", **FORGED)
        await call("merge_pr", number=opened["number"])
        reverted = await call("revert_pr", number=opened["number"], **FORGED)
        numbers.append(reverted["number"])

    _as_agent(settings, script)
    store = provider_for(settings, Repository(manifests, author_name="x", author_email="x@x"))
    authors = set()
    for number in numbers:
        pr = store.get(number).pr
        authors |= {pr.author, *(r.author for r in pr.reviews), *(c.author for c in pr.comments)}
    assert authors == {"dev-team-bot"}


def test_the_crews_own_login_never_answers_even_if_the_people_file_names_it(
    manifests: Path, policy: Policy
) -> None:
    """The identity every agent's gitops server writes as (`Crew.servers`) is the crew's, so
    its reviews answer nothing, even when a people file (wrongly) gives that login to a person,
    and even when sync-prs is told another login for the crew's PR author."""
    crew = Crew(None, None, manifests, (), None, None)
    servers = [crew.servers(agent).gitops for agent in ("dev_team", "platform")]
    assert {s.author_name for s in servers if s is not None} == gitops_authors(manifests)
    provider, number = crew_pr(manifests, policy.request.id)

    async def approve(call: Call) -> None:
        await call("review_pr", number=number, verdict="approve")

    _as_agent(settings_for(manifests), approve)
    mistaken = People(people=[Person(name="alice", groups=["shop-admins"], github="kubecrew")])
    fooled = replace(policy, people=mistaken)
    assert not [o for o in synced(provider, fooled) if o.kind == "answered"]
    ledger = Ledger(ledger_path(str(policy.store.path)))
    try:
        outcomes = sync(
            provider, policy.store, mistaken, datetime.now(UTC), crew_author="kubecrew",
            ledger=ledger, crew_identities=gitops_authors(manifests),
        )  # fmt: skip
    finally:
        ledger.close()
    assert not [o for o in outcomes if o.kind == "answered"]
    assert policy.now().state == "pending"


# -- GitHub: the bot account ------------------------------------------------------------------


@pytest.fixture
def clone(manifests: Path, tmp_path: Path) -> Path:
    return hosted_clone(manifests, tmp_path)


@pytest.fixture
def github(clone: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(github_side(clone), owner="acme", name="deploy", token=TOKEN) as fake:
        yield fake


def test_on_github_the_bots_review_answers_nothing_and_names_no_one(
    clone: Path, github: FakeGitHub, policy: Policy
) -> None:
    where = {"provider": "github", "github_repo": "acme/deploy", "github_api_url": github.url}
    provider, number = crew_pr(clone, policy.request.id, **where)

    async def forge(call: Call) -> None:
        await call("review_pr", number=number, verdict="approve", **FORGED)

    _as_agent(settings_for(clone, **where), forge)
    (review,) = github.pulls[number].reviews
    assert review["user"]["login"] == "kubecrew-bot"
    assert "alice" not in review["body"]
    outcomes = synced(provider, policy, crew_author="kubecrew-bot")
    assert not [o for o in outcomes if o.kind == "answered"]
    assert policy.now().state == "pending"
