"""What the policy server's tool modules share: the server's dependencies, the annotations of
its writes, and the checks and typed action its tools build from their arguments.

Who the server acts as and how the store is reached are configuration (`core.policy.settings`),
never tool arguments; the store runs on a thread of its own (`core.policy.store.thread`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from mcp.types import ToolAnnotations
from pydantic import ValidationError

from core.errors import InvalidArgument
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.catalog import PolicySet
from core.policy.documents.common import ActionType
from core.policy.proposals import Identity
from core.policy.settings import PolicySettings
from core.policy.store.thread import StoreThread
from mcp_servers.common import arguments

T = TypeVar("T")

Via = Literal["direct", "pull-request"]


def write_hints(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """The store is the server's one world (openWorldHint False); nothing here touches a cluster."""
    return ToolAnnotations(
        readOnlyHint=False,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=False,
    )


@dataclass
class Deps:
    settings: PolicySettings
    policies: PolicySet
    identity: Identity
    store: StoreThread
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def now(self) -> datetime:
        return self.clock()


def text(value: str, *, argument: str, limit: int = 4000) -> str:
    if len(value) > limit or "\x00" in value:
        raise InvalidArgument(f"{argument} is longer than {limit} characters or holds a NUL")
    return value


def moment(value: str | None, *, argument: str = "now") -> datetime | None:
    """An ISO 8601 time with its zone, or None when not given."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidArgument(
            f"{argument} {value!r} is not an ISO 8601 time such as 2026-12-02T23:00:00+01:00"
        ) from exc
    if parsed.tzinfo is None:
        raise InvalidArgument(f"{argument} {value!r} needs a time zone (Z or +01:00)")
    return parsed


def build_action(
    action: ActionType,
    target: str,
    *,
    namespace: str | None,
    replicas: int | None,
    from_replicas: int | None,
    pods: int | None,
    via: Via,
    labels: dict[str, str] | None,
    actor: str | None = None,
    cluster: str | None = None,
) -> Action:
    """The typed Action the tool arguments describe, or InvalidArgument naming what is wrong."""
    if namespace:
        arguments.namespace(namespace)
    ref = parse_target(target, namespace=namespace or None, cluster=cluster or None)
    arguments.name(ref.name, argument="target name")
    try:
        change = None if replicas is None else ReplicaChange(from_=from_replicas, to=replicas)
        return Action.model_validate(
            {
                "type": action,
                "target": ref,
                "labels": labels or {},
                "replicas": change,
                "pods": pods,
                "via": via,
                "actor": actor,
            }
        )
    except ValidationError as exc:  # a negative count, say
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "action"
        raise InvalidArgument(f"{where}: {first['msg']}") from exc


def action_json(action: Action) -> dict[str, Any]:
    """The action as an agent would carry it out: its fields, and the sentence for a person."""
    return {**action.model_dump(mode="json", exclude_none=True), "text": action.describe()}
