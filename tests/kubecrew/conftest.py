"""The worlds the front doors are tested in, for every test of the command line and the channels:
the loop's team (tests/support/team.py: the shop's GitOps repository synced to a sandbox, one
policy store) with, for `guarded`, the team's ChangePolicy that gives every pull-request change
of web to shop-admins; and, for the PR channel, `policy`: the issue's escalated downscale in a
SQLite store with the people file beside it (tests/support/pr_channel.py). The crew options
that point a front door at a team are tests/support/crew.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.settings import SHIPPED
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.pr_channel import Policy, escalated
from tests.support.team import WEB_REVIEWS, Team, make_team


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    return make_team(sandbox, kubectl, tmp_path)


@pytest.fixture
def guarded(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    mine = tmp_path / "team-policies"
    mine.mkdir()
    (mine / "web-reviews.yaml").write_text(WEB_REVIEWS)
    return make_team(sandbox, kubectl, tmp_path, (SHIPPED, mine))


@pytest.fixture
def policy(tmp_path: Path) -> Iterator[Policy]:
    with escalated(tmp_path) as world:
        yield world
