"""One conversation with the Platform agent, wired: tools, brain, role, skills, durable state.

The agent contract's conversation (`agents.runtime.contract`), plus the teams' GitOps
repositories: `repos` maps a repository id (the `kubecrew.io/gitops-repo` label the sync stamps
on what it applies) to that repository's gitops server settings, and each gets a toolbox of its
own, since one gitops server serves one repository. `clusters` names the kubeconfig contexts the
procedures read (by default the crew file's `clusters`, the kube server's fleet, as the Cluster
Operator's): egress propagation, audits and blueprints
each cover every one of them; a repository changes the cluster its settings' `context` names
(none: the kube server's default), and a cluster no repository syncs to is reported only.
The procedures: `propagate()` (on a schedule or when an EgressPolicy changes), `audit()` and
`sync_blueprints()` (scheduled); `answer_escalations()` (scheduled, and after a fleet audit)
answers the approval requests that name the Platform as the org's arbiter; `ask(question)`
answers compliance, audit, blueprint and escalation questions. The planner is the brain:
`Deterministic`, or a `ModelPlanner` whose model plans each procedure's reads (through the
kube and policy tools) before the procedure decides and acts (graph.py,
agents/runtime/modelsteps.py).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agents.platform.graph import AGENT, Context, compile_graph
from agents.runtime.brain import Planner
from agents.runtime.contract import Agent, OnNode, Outcome
from agents.runtime.conversation import GraphConversation
from agents.runtime.toolbox import OnCall, Servers, Toolbox, open_toolbox
from agents.runtime.wiring import agent_parts

if TYPE_CHECKING:
    from mcp_servers.gitops.settings import GitopsSettings


class Conversation(GraphConversation[Context]):
    defaults: ClassVar[Mapping[str, Any]] = {
        "task": "unsupported", "question": "", "namespace": "", "fix": True,
    }  # fmt: skip
    procedures = ("propagate", "audit", "blueprints", "escalations")

    def read(self, values: Mapping[str, Any]) -> dict[str, Any]:
        result = values.get("result") or {}
        return {**super().read(values), "clarifying": bool(result.get("clarification"))}

    async def propagate(self, *, on_node: OnNode | None = None) -> Outcome:
        return await self.perform("propagate", on_node=on_node)

    async def audit(
        self, namespace: str = "", *, fix: bool = True, on_node: OnNode | None = None
    ) -> Outcome:
        """The scheduled audit: the fleet, or one namespace."""
        return await self.perform("audit", namespace=namespace, fix=fix, on_node=on_node)

    async def sync_blueprints(
        self, namespace: str = "", *, fix: bool = True, on_node: OnNode | None = None
    ) -> Outcome:
        return await self.perform("blueprints", namespace=namespace, fix=fix, on_node=on_node)

    async def answer_escalations(self, *, on_node: OnNode | None = None) -> Outcome:
        """The escalations org policy settles: granted, denied or left to people, each why."""
        return await self.perform("escalations", on_node=on_node)


@asynccontextmanager
async def conversation(
    servers: Servers,
    planner: Planner,
    *,
    repos: Mapping[str, GitopsSettings] | None = None,
    home: Path | None = None,
    thread: str | None = None,
    on_call: OnCall | None = None,
    clusters: tuple[str, ...] = (),
) -> AsyncIterator[Conversation]:
    async with (
        agent_parts(AGENT, servers, home=home, on_call=on_call) as parts,
        AsyncExitStack() as stack,
    ):
        opened: dict[str, Toolbox] = {}
        for repo_id, settings in (repos or {}).items():
            opened[repo_id] = await stack.enter_async_context(
                open_toolbox(parts.role, Servers(gitops=settings), on_call=on_call)
            )
        thread_id = thread or uuid.uuid4().hex
        homes = {repo_id: s.context or "" for repo_id, s in (repos or {}).items()}
        context = Context(
            parts.toolbox, planner, parts.role, parts.skills, thread_id, opened,
            clusters=clusters or (servers.kube.fleet if servers.kube is not None else ()),
            homes=homes,
        )  # fmt: skip
        yield Conversation(compile_graph(parts.durable), context)


entry = Agent(name=AGENT, open=conversation)
