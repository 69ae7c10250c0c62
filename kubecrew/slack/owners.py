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

from mcp_servers.common.errors import InvalidArgument
from mcp_servers.policy.actions import EvaluationRequest
from mcp_servers.policy.approvals import ApprovalRequest
from mcp_servers.policy.catalog import PolicySet
from mcp_servers.policy.documents.priority import Ownership
from mcp_servers.policy.evaluation import stakeholders
from mcp_servers.policy.loading import load_report

POLICIES_ENV = "KUBECREW_POLICIES"
# The defaults kubecrew ships, for runs outside a checkout's root (as `kubecrew policy` reads).
SHIPPED = Path(__file__).resolve().parents[2] / "policies"


def load_policies(given: Iterable[Path] = (), environ: Mapping[str, str] = os.environ) -> PolicySet:
    """The policies `--policies` names, else ./policies or the shipped ones plus $KUBECREW_POLICIES;
    InvalidArgument with the first problem when a file is invalid."""
    paths = list(given)
    if not paths:
        local = Path("policies")
        paths = [local if local.is_dir() else SHIPPED]
        paths += [Path(p) for p in environ.get(POLICIES_ENV, "").split(os.pathsep) if p]
    report = load_report(paths)
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
