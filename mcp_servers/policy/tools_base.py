"""What the policy server's tool modules share: its settings, who it acts as, the store on a
thread of its own, and the typed action every evaluating tool takes.

Identity is server configuration, never a tool argument: the model calling `propose` or
`answer_approval` cannot say who it is. A server is either an agent (`--agent NAME`: it proposes
and evaluates, and does not even list `answer_approval`) or a person (`--as NAME` with `--group`s;
default `$KUBECREW_USER` / `$KUBECREW_GROUPS`, else the OS login name). With a store that can ask
its backend who the caller is (`identity()`, the Kubernetes store's SelfSubjectReview), that
answer is the person, and a `--as` or `--group` it does not vouch for is refused at start.

The SQLite store's connection belongs to the thread that opened it, and the Kubernetes store
waits on HTTP; so the store is opened, used and closed on one worker thread (`StoreThread`), and
tools await it without blocking the event loop. Calls are serialised there, which the store's
own transactions would do anyway.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from mcp.types import ToolAnnotations
from pydantic import ValidationError

from mcp_servers.common import arguments
from mcp_servers.common.errors import InvalidArgument, PermissionDenied
from mcp_servers.policy.actions import Action, ReplicaChange, parse_target
from mcp_servers.policy.catalog import PolicySet
from mcp_servers.policy.documents.common import ActionType
from mcp_servers.policy.proposals import Identity
from mcp_servers.policy.store.base import Store

T = TypeVar("T")
POLICIES_ENV = "KUBECREW_POLICIES"
USER_ENV = "KUBECREW_USER"
GROUPS_ENV = "KUBECREW_GROUPS"
# The defaults kubecrew ships (the project's policies/), for a server started anywhere.
SHIPPED = Path(__file__).resolve().parents[2] / "policies"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")

Via = Literal["direct", "pull-request"]


def write_hints(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """The store is the server's one world (openWorldHint False); nothing here touches a cluster."""
    return ToolAnnotations(
        readOnlyHint=False,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=False,
    )


@dataclass(frozen=True)
class PolicySettings:
    policies: tuple[Path, ...] = ()  # empty: ./policies, else SHIPPED, plus $KUBECREW_POLICIES
    store: str | None = None  # open_store's spec: a path, or kubernetes[:CONTEXT]
    person: str | None = None  # --as
    groups: tuple[str, ...] = ()  # --group
    agent: str | None = None  # --agent: the server acts as this agent, not as a person
    read_only: bool = False

    def policy_paths(self, environ: Mapping[str, str] = os.environ) -> list[Path]:
        """The given paths, or the defaults `kubecrew policy` reads, plus $KUBECREW_POLICIES."""
        if self.policies:
            return list(self.policies)
        local = Path("policies")
        paths = [local if local.is_dir() else SHIPPED]
        return paths + [Path(p) for p in environ.get(POLICIES_ENV, "").split(os.pathsep) if p]


def claimed_identity(settings: PolicySettings, environ: Mapping[str, str] = os.environ) -> Identity:
    """Who the options say the server acts as, before any backend is asked."""
    if settings.agent is not None:
        if settings.person is not None or settings.groups:
            raise InvalidArgument(
                "--agent names an agent; --as and --group name a person: give one or the other"
            )
        return Identity(kind="agent", name=settings.agent)
    name = settings.person or environ.get(USER_ENV) or getpass.getuser()
    groups = settings.groups or tuple(
        g.strip() for g in environ.get(GROUPS_ENV, "").split(",") if g.strip()
    )
    return Identity(kind="person", name=name, groups=groups)


def vouched_identity(claimed: Identity, settings: PolicySettings, store: Store) -> Identity:
    """The person the store's backend says the caller is, when it can say; else `claimed`.

    An agent keeps its name (the backend's RBAC governs what its credentials may write).
    """
    ask: Callable[[], Identity] | None = getattr(store, "identity", None)
    if ask is None or claimed.kind == "agent":
        return claimed
    known = ask()
    if settings.person is not None and settings.person != known.name:
        raise PermissionDenied(
            f"--as {settings.person}, but the store's API server says you are {known.name}; "
            f"drop --as, or use a kubeconfig whose user is {settings.person}"
        )
    unvouched = [g for g in settings.groups if g not in known.groups]
    if unvouched:
        raise PermissionDenied(
            f"--group {', '.join(unvouched)}: the store's API server does not put {known.name} "
            f"in it (it says: {', '.join(known.groups) or 'no groups'}); drop those --group options"
        )
    return known


class StoreThread:
    """The store, opened, used and closed on one worker thread of its own."""

    def __init__(self, opener: Callable[[], Store]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-store")
        try:
            self._store = self._pool.submit(opener).result()
        except BaseException:
            self._pool.shutdown()
            raise

    def call(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)`, waited for: for start-up, before any event loop runs."""
        return self._pool.submit(fn, self._store).result()

    async def run(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread, awaited without blocking the event loop."""
        return await asyncio.wrap_future(self._pool.submit(fn, self._store))

    def close(self) -> None:
        self.call(lambda store: store.close())
        self._pool.shutdown()


@dataclass
class Deps:
    settings: PolicySettings
    policies: PolicySet
    identity: Identity
    store: StoreThread
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def now(self) -> datetime:
        return self.clock()


def record_id(value: str, *, argument: str) -> str:
    """A proposal or approval id as the store makes them (`p-1a2b3c4d`), nothing else."""
    if not _ID.match(value):
        raise InvalidArgument(
            f"{argument} {value!r} is not an id such as p-1a2b3c4d; list_proposals and "
            "list_approvals show the ids"
        )
    return value


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
) -> Action:
    """The typed Action the tool arguments describe, or InvalidArgument naming what is wrong."""
    if namespace:
        arguments.namespace(namespace)
    ref = parse_target(target, namespace=namespace or None)
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
