"""Which channel a request goes to: the owner's `spec.slack`, else `--channel`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.errors import InvalidArgument
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.documents.common import Principals
from core.policy.proposals import ApprovalRequest
from kubecrew.channels.slack.owners import channel_for, load_policies


def request_on(target: str, namespace: str | None) -> ApprovalRequest:
    now = datetime.now(UTC)
    action = Action(
        type="scale",
        target=parse_target(target, namespace=namespace),
        replicas=ReplicaChange(from_=5, to=1),
    )
    return ApprovalRequest(
        id="a-00000001",
        proposal="p-00000001",
        action=action,
        approvers=Principals(groups=["shop-admins"]),
        reasons=["test"],
        requested_at=now,
        expires_at=now + timedelta(hours=1),
    )


@pytest.mark.parametrize(
    ("target", "namespace", "channel"),
    [
        ("deployment/web", "shop", "C05H0PADM1"),  # Ownership shop
        ("node/worker-1", None, "C05C1USTER"),  # Ownership cluster
        ("deployment/api", "billing", "C0FALLBACK"),  # nobody owns it
    ],
    ids=["shop", "nodes", "unowned"],
)
def test_the_owners_channel_wins_and_unowned_targets_go_to_the_default(
    target: str, namespace: str | None, channel: str
) -> None:
    chosen = channel_for(request_on(target, namespace), load_policies(), default="C0FALLBACK")
    assert chosen == channel


def test_an_unowned_target_without_a_default_has_no_channel() -> None:
    assert (
        channel_for(request_on("deployment/api", "billing"), load_policies(), default=None) is None
    )


def test_a_channel_name_instead_of_an_id_is_refused_with_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "ownership.yaml"
    bad.write_text(
        "apiVersion: kubecrew.io/v1alpha1\nkind: Ownership\nmetadata: {name: shop}\n"
        "spec: {team: shop, slack: '#shop-ops', owns: [{namespaces: [shop]}]}\n"
    )
    with pytest.raises(InvalidArgument) as refused:
        load_policies([bad])
    assert str(bad) in refused.value.message and "spec.slack" in refused.value.message
