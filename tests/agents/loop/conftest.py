"""A team's GitOps world for the remediation loop: a sandbox, a real git repository of the
shop's manifests synced to it, the policy store the kube server and the policy server share
(every kube write gated and audited), and the Dev Team agent's home (checkpoints, memory).

`Team.commit` changes a manifest on main as a person merging their own change would, and
`Team.sync` applies main through the gitops server over MCP, as a CD pipeline does.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from agents.dev_team.heal import heal
from agents.runtime.brain import Planner
from agents.runtime.loop.run import LoopResult
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Servers
from core.policy.audit import AuditRecord
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.mcp.gitops.conftest import DEPLOYMENT, NAMESPACE, git
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

FAST = LoopSettings(soak_seconds=20, deadline_seconds=240, poll_seconds=0.2)
WEB = "apps/shop/web.yaml"


@dataclass
class Team:
    sandbox: Sandbox
    kubectl: Kubectl
    repo: Path
    servers: Servers
    home: Path
    store: Path

    def commit(self, message: str, image: str) -> None:
        """Set web's image on main, as a person merging their own change does."""
        git(self.repo, "reset", "-q", "--hard", "main")  # merges moved main under the work tree
        file = self.repo / WEB
        file.write_text(re.sub(r"image: \S+", f"image: {image}", file.read_text(), count=1))
        git(
            self.repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qam", message
        )

    def sync(self) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            assert self.servers.gitops is not None
            async with create_connected_server_and_client_session(
                build_gitops(self.servers.gitops)
            ) as client:
                done = await client.call_tool("sync", {"dry_run": False})
                assert not done.isError, done.content
                return dict(done.structuredContent or {})

        return anyio.run(go)

    def heal(
        self,
        target: str = "web",
        *,
        planner: Planner | None = None,
        thread: str | None = None,
        **extra: Any,
    ) -> LoopResult:
        return anyio.run(
            lambda: heal(
                target,
                servers=self.servers,
                planner=planner,
                home=self.home,
                settings=FAST,
                thread=thread,
                **extra,
            )
        )

    def image(self) -> str:
        live = self.kubectl.json("get", "deployment", "web", "-n", "shop")
        return str(live["spec"]["template"]["spec"]["containers"][0]["image"])

    def rolled_out(self) -> None:
        def done() -> bool:
            live = self.kubectl.json("get", "deployment", "web", "-n", "shop")
            status = live.get("status") or {}  # none yet, just after the sync created it
            ready: bool = status.get("availableReplicas") == status.get("replicas") == 1
            return ready

        eventually(done, what="web rolled out")

    def audit(self) -> list[AuditRecord]:
        store = open_store(str(self.store))
        try:
            return list(store.audit(after=0, limit=1000))
        finally:
            store.close()


Script = Callable[[], Awaitable[None]]


def make_team(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, policies: tuple[Path, ...] = (SHIPPED,)
) -> Team:
    """The shop's repository synced to the sandbox; every server judged by `policies`."""
    repo = tmp_path / "shop-gitops"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "apps" / "shop").mkdir(parents=True)
    (repo / WEB).write_text(DEPLOYMENT)
    (repo / "namespaces.yaml").write_text(NAMESPACE)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-q", "-m", "the shop")
    store = tmp_path / "policy-store.sqlite"
    servers = Servers(
        kube=KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=policies,
            policy_store=str(store),
            agent="dev_team",
        ),
        gitops=GitopsSettings(repo=repo, state_dir=tmp_path / "prs", kubeconfig=sandbox.kubeconfig),
        policy=PolicySettings(policies=policies, store=str(store), agent="dev_team"),
    )
    made = Team(sandbox, kubectl, repo, servers, tmp_path / "agent-home", store)
    made.sync()
    made.rolled_out()
    return made


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    return make_team(sandbox, kubectl, tmp_path)
