"""A team's GitOps world for the remediation loop: a sandbox, a real git repository of the
shop's manifests synced to it, the policy store the kube server and the policy server share
(every kube write gated and audited), and the Dev Team agent's home (checkpoints, memory).

`make_team` builds it (the `team` fixtures of the loop's, the Dev Team's and the front doors'
tests); `Team.commit` changes a manifest on main as a person merging their own change would,
and `Team.sync` applies main through the gitops server over MCP, as a CD pipeline does.
`WEB_REVIEWS` is the team's own ChangePolicy that gives every pull-request change of web to
shop-admins (the `guarded` team); `prs` and `proposals` read what the crew opened and proposed.
`escalate` plays the Cluster Operator's refused downscale into the team's store, where
`state_of` and `mutations` read what became of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from agents.dev_team.heal import heal
from agents.runtime.brain import Planner
from agents.runtime.loop.run import LoopResult
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Servers
from core.policy.audit import AuditRecord
from core.policy.negotiation import negotiate
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from kubecrew.demo.shop import NAMESPACE as SHOP_NAMESPACE
from kubecrew.demo.shop import WEB as SHOP_WEB
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.gitops import git
from tests.support.kubectl import Kubectl
from tests.support.policies import defaults, downscale
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
        """The last sync's template runs alone, as `kubectl rollout status` decides: the
        controller has seen this generation (until then the status is the rollout before's,
        complete), and its one pod is updated and available."""

        def done() -> bool:
            live = self.kubectl.json("get", "deployment", "web", "-n", "shop")
            status = live.get("status") or {}  # none yet, just after the sync created it
            seen = status.get("observedGeneration", 0) >= live["metadata"]["generation"]
            counts = ("replicas", "updatedReplicas", "availableReplicas")
            return seen and all(status.get(count) == 1 for count in counts)

        eventually(done, what="web rolled out")

    def audit(self) -> list[AuditRecord]:
        store = open_store(str(self.store))
        try:
            return list(store.audit(after=0, limit=1000))
        finally:
            store.close()


def make_team(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, policies: tuple[Path, ...] = (SHIPPED,)
) -> Team:
    """The shop's repository synced to the sandbox; every server judged by `policies`."""
    repo = tmp_path / "shop-gitops"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "apps" / "shop").mkdir(parents=True)
    (repo / WEB).write_text(SHOP_WEB)
    (repo / "namespaces.yaml").write_text(SHOP_NAMESPACE)
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


WEB_REVIEWS = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata:
  name: web-reviews
  labels:
    kubecrew.io/team: shop
spec:
  selector:
    namespaces: [shop]
    kinds: [Deployment]
  approvals:
    - name: web-by-pull-request
      description: every change of web by pull request is approved by a shop admin
      actions: [patch, apply]
      when: 'action.via == "pull-request" && action.target.name == "web"'
      approvers:
        groups: [shop-admins]
      expiresAfter: 1h
"""


def prs(team: Team) -> list[Any]:
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    return LocalProvider(repo, team.repo.parent / "prs").list_prs(state="all")


def proposals(team: Team) -> int:
    store = open_store(str(team.store))
    try:
        return len(store.list())
    finally:
        store.close()


def escalate(team: Team) -> str:
    """The Cluster Operator's 5 -> 1 of web, its counter-offer refused: escalated."""
    store = open_store(str(team.store))
    try:
        now = datetime.now(UTC)
        proposal = downscale(created=now, counters="refuse")
        store.propose(proposal)
        negotiate(store, defaults(), proposal.id, now=now)
        (request,) = store.approvals(state="pending")
        assert request.approvers.describe() == "group shop-admins, agent platform"
        return request.id
    finally:
        store.close()


def state_of(team: Team, request: str) -> str:
    store = open_store(str(team.store))
    try:
        return store.approval(request).state
    finally:
        store.close()


def mutations(team: Team) -> list[str]:
    store = open_store(str(team.store))
    try:
        return [record.subject for record in store.audit(kind="mutation")]
    finally:
        store.close()
