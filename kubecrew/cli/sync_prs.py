"""`kubecrew approvals sync-prs`: reviews on the crew's pull requests answer approval requests,
and `@kubecrew` comments on them amend them.

The terminal end of the PR channel (`kubecrew.channels.pr.approvals` for reviews,
`kubecrew.channels.pr.comments` for comments): it opens the repository's PR
provider the way `kubecrew mcp gitops` does (local records beside the repository, or GitHub with
a token in `$GITHUB_TOKEN`), the policy store and the people file, runs one sync, prints what it
did, and with `--watch` keeps doing so. `kubecrew.cli.main` attaches it to the `approvals` app. The
engine is imported when the command runs, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

import time
from contextlib import closing
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubecrew.cli.options import StoreOption, fail, out, policy_store


class ForgeChoice(StrEnum):
    local = "local"
    github = "github"


def sync_prs(
    repo: Annotated[
        Path,
        typer.Option(
            help="The git repository of manifests the crew opens PRs on (a clone of the "
            "GitHub repository with --provider github)."
        ),
    ],
    provider: Annotated[
        ForgeChoice,
        typer.Option(help="Where the pull requests live, as for `kubecrew mcp gitops`."),
    ] = ForgeChoice.local,
    github_repo: Annotated[
        str, typer.Option(help="github: the repository, `owner/name`.", show_default=False)
    ] = "",
    github_api_url: Annotated[
        str, typer.Option(help="github: REST API base; GitHub Enterprise is `https://HOST/api/v3`.")
    ] = "https://api.github.com",
    state_dir: Annotated[
        Path | None,
        typer.Option(
            help="local: the PR records. [default: the repository path + .kubecrew]",
            show_default=False,
        ),
    ] = None,
    author: Annotated[
        str,
        typer.Option(
            help="The crew's PR author: only PRs it opened can carry a request, and its own "
            "reviews and comments (like those of every login the crew's agents write as) never "
            "count as a person's. With GitHub, the login of the account whose token opens them."
        ),
    ] = "kubecrew",
    people: Annotated[
        Path | None,
        typer.Option(
            help="Who each forge login is. [default: $KUBECREW_PEOPLE, else "
            "$KUBECREW_HOME/people.yaml, else ~/.kubecrew/people.yaml]",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
    policies: Annotated[
        list[Path] | None,
        typer.Option(
            "--policies",
            "-p",
            help="Policy files or directories: who owns each workload (Ownership), so who may "
            "amend its PR by comment. [default: as for `kubecrew policy`]",
            show_default=False,
        ),
    ] = None,
    watch: Annotated[
        float | None,
        typer.Option(help="Sync again every SECONDS until interrupted.", show_default=False),
    ] = None,
) -> None:
    """Apply the reviews on the crew's PRs that carry an approval request (`kubecrew-approval:`
    line in the body): approve grants, request changes denies, as the reviewer's person in the
    people file (`github: LOGIN`). Reviews and comments by the crew itself (`--author`, and the
    login every agent's gitops server writes as) are never a person's. Strangers and
    non-approvers get a PR comment saying who may answer, and each PR gets one comment when its
    request ends, from whichever channel. An approval counts only when the PR makes exactly the
    request's change; otherwise a comment names the difference.

    A comment addressed to the crew (`@kubecrew use 4 replicas instead`; replicas, image tag
    and resource requests) by one of the workload's owners or the request's approvers amends
    the PR with a new commit on its branch, recorded in the audit log and answered on the PR;
    a pending request the PR carries is superseded by one for the amended change. Anyone else
    is told who may. Comments never merge or approve. Each review and comment is
    handled once, however often this runs.

    **Example**

    ```
    kubecrew approvals sync-prs --repo ./deploy --people people.yaml
    GITHUB_TOKEN=... kubecrew approvals sync-prs --repo ./deploy --provider github \\
        --github-repo acme/deploy --author kubecrew-bot --watch 30
    ```
    """
    from core.policy.people import load_people
    from kubecrew.channels.pr import comments as pr_comments
    from kubecrew.channels.pr.approvals import Ledger, ledger_path, sync
    from kubecrew.channels.slack.owners import load_policies
    from kubecrew.crew import gitops_authors
    from mcp_servers.gitops.providers import provider_for
    from mcp_servers.gitops.repo import Repository
    from mcp_servers.gitops.settings import GitopsSettings

    if watch is not None and watch <= 0:
        fail("--watch takes a positive number of seconds")
    root = repo.resolve()
    settings = GitopsSettings(
        repo=root,
        state_dir=state_dir or GitopsSettings.default_state_dir(root),
        provider="github" if provider is ForgeChoice.github else "local",
        github_repo=github_repo,
        github_api_url=github_api_url,
        author_name=author,
    )
    with policy_store(store) as opened, closing(Ledger(ledger_path(store))) as ledger:
        clone = Repository(root, author_name=author, author_email=settings.author_email)
        forge = provider_for(settings, clone)
        who = load_people(people)
        owners = load_policies(policies or ())
        crew = gitops_authors(root)  # the agents' own logins: never a person's answer
        try:
            while True:
                now = datetime.now(UTC)
                # Comments first: a review read in the same pass as an amendment saw the old
                # content, so it must be judged against the request the amendment leaves.
                for handled in pr_comments.sync(
                    forge, clone, opened, who, owners, now, crew_author=author, ledger=ledger,
                    crew_identities=crew,
                ):  # fmt: skip
                    out(handled.describe())
                for outcome in sync(
                    forge, opened, who, now, crew_author=author, ledger=ledger,
                    crew_identities=crew,
                ):  # fmt: skip
                    out(outcome.describe())
                if watch is None:
                    break
                time.sleep(watch)
        except KeyboardInterrupt:
            pass  # --watch ends on Ctrl-C: what was applied is in the ledger
