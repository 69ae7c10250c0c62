"""Where a request is shown: the Slack channel of the people who own its target.

The owner is the policy store's own answer (`evaluation.stakeholders`: the most specific
Ownership selecting the target), so Slack and negotiation never disagree about who owns what.
Its `spec.slack` channel wins; an owner without one, or a target nobody owns, goes to the app's
`--channel`. None means nowhere: the caller says so instead of guessing a channel.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from core.errors import InvalidArgument
from core.policy.actions import EvaluationRequest
from core.policy.catalog import PolicySet
from core.policy.documents.priority import Ownership
from core.policy.evaluation import stakeholders
from core.policy.loading import load_report
from core.policy.proposals import ApprovalRequest
from core.policy.settings import PolicySettings


def load_policies(given: Iterable[Path] = (), environ: Mapping[str, str] = os.environ) -> PolicySet:
    """The policies `--policies` names, else ./policies or the shipped ones plus $KUBECREW_POLICIES;
    InvalidArgument with the first problem when a file is invalid."""
    report = load_report(PolicySettings(policies=tuple(given)).policy_paths(environ))
    if report.problems:
        raise InvalidArgument(f"{report.problems[0]}; `kubecrew policy validate` lists them all")
    return report.policy_set()


def channel_for(
    request: ApprovalRequest, policies: PolicySet, *, default: str | None
) -> str | None:
    """The owners' channel for `request`'s target, else `default`."""
    asked = EvaluationRequest(action=request.action, now=datetime.now(UTC))
    owner = next((s for s in stakeholders(policies, asked) if s.owner), None)
    if owner is not None:
        ownership = policies.get(owner.ownership, kind="Ownership").document
        if isinstance(ownership, Ownership) and ownership.spec.slack is not None:
            return ownership.spec.slack
    return default
