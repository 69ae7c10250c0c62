"""How a policy store is reached and who acts on it: the policy paths, the store's spec, the
person or agent, and the identity a store's backend vouches for.

Identity is configuration, never a tool argument: whoever calls `propose` or `answer_approval`
through a server cannot say who they are. A caller is either an agent (`--agent NAME`) or a
person (`--as NAME` with `--group`s; default `$KUBECREW_USER` / `$KUBECREW_GROUPS`, else the OS
login name). With a store that can ask its backend who the caller is (`identity()`, the
Kubernetes store's SelfSubjectReview), that answer is the person, and a `--as` or `--group` it
does not vouch for is refused at start.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import InvalidArgument, PermissionDenied

if TYPE_CHECKING:  # the constants here are read by servers that load no policy code
    from core.policy.proposals import Identity
    from core.policy.store.base import Store

POLICIES_ENV = "KUBECREW_POLICIES"
USER_ENV = "KUBECREW_USER"
GROUPS_ENV = "KUBECREW_GROUPS"
# The defaults kubecrew ships (the project's policies/), for a server started anywhere.
SHIPPED = Path(__file__).resolve().parents[2] / "policies"


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
    from core.policy.proposals import Identity

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
