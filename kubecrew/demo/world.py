"""The world a demo scene plays in: a fresh sandbox, the shop's GitOps repository, the policies
and the policy store the agents share, and a narrator that says who sees, decides and does what.

Scenes (`kubecrew.cli.demo`) describe the story; this module builds the stage so that the
story reads as one. It is product code so that tests may build the same world without the demo
importing `tests/`. The sandbox is reached as a cluster is: kubectl and the MCP servers read its
kubeconfig, and faults go to its admin endpoint over HTTPS. The person's actions (commits,
kubectl) are printed as commands; the agents' through the narrator.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from rich.console import Console
from rich.markup import escape

from agents.runtime.identity import service_account
from agents.runtime.toolbox import Servers
from core.policy.proposals import ApprovalRequest, ProposalRecord
from core.policy.settings import PolicySettings
from core.policy.store.sqlite import SqliteStore
from kubecrew.demo.shop import NAMESPACE, WEB
from kubecrew.demo.tour import DEMO_RATE, StepFailed, Tour, kubectl_env
from kubecrew.install.footprint import InstallError, Request, install
from kubecrew.practice.probe import FAULTS_PATH, ApiClient
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.server import build as build_kube
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Options, Sandbox

T = TypeVar("T")
WAIT_SECONDS = 60.0
WEB_MANIFEST = "apps/shop/web.yaml"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@shop", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise StepFailed(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def shop_repository(root: Path) -> Path:
    """The shop's GitOps repository: the web Deployment and Service, and the namespace."""
    repo = root / "shop-gitops"
    (repo / "apps" / "shop").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / WEB_MANIFEST).write_text(WEB)
    (repo / "namespaces.yaml").write_text(NAMESPACE)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the shop")
    return repo


def commit_image(repo: Path, image: str, message: str) -> str:
    """Set web's image on main as a person merging their own change does; the new commit."""
    git(repo, "reset", "-q", "--hard", "main")  # merged PRs moved main under the work tree
    manifest = repo / WEB_MANIFEST
    manifest.write_text(re.sub(r"image: \S+", f"image: {image}", manifest.read_text(), count=1))
    git(repo, "commit", "-qam", message)
    return git(repo, "rev-parse", "--short", "HEAD").strip()


async def call_tool(server: FastMCP, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call over a real MCP session, as any client makes it."""
    async with create_connected_server_and_client_session(server) as client:
        done = await client.call_tool(tool, arguments)
    if done.isError:
        text = " ".join(getattr(block, "text", "") for block in done.content)
        raise StepFailed(f"{tool} failed: {text}")
    return dict(done.structuredContent or {})


@dataclass
class Narrator:
    """Lines of the story: an agent (or the person) and what they see, decide or do."""

    console: Console

    def say(self, who: str, verb: str, text: str) -> None:
        colour = {
            "Dev Team": "green",
            "Cluster Operator": "magenta",
            "Platform": "blue",
            "policy store": "yellow",
        }
        style = colour.get(who, "cyan")
        self.console.print(
            f"[bold {style}]{escape(who)}[/] [dim]{verb}[/] {escape(text)}", soft_wrap=True
        )

    def step(self, text: str) -> None:
        self.console.print()
        self.console.print(f"[bold]>> {escape(text)}", soft_wrap=True)

    def detail(self, text: str) -> None:
        self.console.print(f"   [dim]{escape(text)}", soft_wrap=True)


@dataclass
class World:
    """One scene's stage: its sandbox's kubeconfig, a scratch directory, kubectl and a narrator."""

    root: Path
    kubeconfig: Path
    tour: Tour
    narrator: Narrator
    identities: Path | None = None  # the agents' kubeconfigs (`kubecrew install`), if installed

    @property
    def policies(self) -> Path:
        return self.root / "policies"

    @property
    def store(self) -> Path:
        return self.root / "policy-store.sqlite"

    def write_policies(self, **documents: str) -> None:
        self.policies.mkdir(exist_ok=True)
        for name, text in documents.items():
            (self.policies / f"{name}.yaml").write_text(text)

    def manifest(self, name: str, text: str) -> Path:
        path = self.root / f"{name}.yaml"
        path.write_text(text)
        return path

    def servers(
        self, agent: str, *, repo: Path | None = None, policies: Path | None = None
    ) -> Servers:
        """The MCP servers `agent` works through: every write gated by the shared store."""
        paths = (policies or self.policies,)
        store = str(self.store)
        gitops = None
        if repo is not None:
            gitops = GitopsSettings(
                repo=repo, state_dir=self.root / "prs", kubeconfig=self.kubeconfig
            )
        return Servers(
            kube=KubeSettings(
                kubeconfig=self.identity(agent), policies=paths, policy_store=store, agent=agent
            ),
            gitops=gitops,
            policy=PolicySettings(policies=paths, store=store, agent=agent),
        )

    def identity(self, agent: str) -> Path:
        """The kubeconfig `agent`'s kube server uses: its own ServiceAccount's when installed."""
        own = self.identities / f"{service_account(agent)}.yaml" if self.identities else None
        return own if own is not None and own.is_file() else self.kubeconfig

    def sync(self, repo: Path) -> dict[str, Any]:
        """Apply main to the cluster through the gitops server, as a CD pipeline does."""
        settings = GitopsSettings(
            repo=repo, state_dir=self.root / "prs", kubeconfig=self.kubeconfig
        )
        return anyio.run(call_tool, build_gitops(settings), "sync", {"dry_run": False})

    def diagnose(self, **scope: str) -> list[dict[str, Any]]:
        server = build_kube(KubeSettings(kubeconfig=self.kubeconfig))
        found: list[dict[str, Any]] = anyio.run(call_tool, server, "diagnose", scope)["findings"]
        return found

    def kubectl_json(self, *args: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.tour.quiet(*args, "-o", "json"))
        return loaded

    def add_fault(self, spec: dict[str, Any]) -> str:
        """Break the sandbox through its admin endpoint; the fault's id."""
        fault = ApiClient.from_kubeconfig(self.kubeconfig).call("POST", FAULTS_PATH, spec)
        return str(fault["id"])

    def proposal(self, proposal: str) -> ProposalRecord:
        store = SqliteStore(self.store)
        try:
            return store.get(proposal)
        finally:
            store.close()

    def approvals(self) -> list[ApprovalRequest]:
        store = SqliteStore(self.store)
        try:
            return store.approvals()
        finally:
            store.close()

    def wait(self, check: Callable[[], T], *, what: str, timeout: float = WAIT_SECONDS) -> T:
        """Poll `check` until it returns something truthy; a failed step after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result:
                return result
            if time.monotonic() > deadline:
                raise StepFailed(f"not reached within {timeout:.0f} s: {what}")
            time.sleep(0.2)


@contextmanager
def fresh_world(console: Console, *, nodes: int = 3) -> Iterator[World]:
    """A new sandbox of `nodes` nodes in a temporary home, stopped (and the home removed) when
    the scene ends."""
    with tempfile.TemporaryDirectory(prefix="kubecrew-demo-") as tmp:
        root = Path(tmp)
        sandbox = Sandbox(Options(home=root / "sandbox", nodes=nodes, rate=DEMO_RATE))
        try:
            sandbox.start()
        except Exception as exc:  # whatever breaks start-up, the scene fails with one line
            raise StepFailed(f"the sandbox did not start: {exc}") from exc
        try:
            identities = _install_agents(sandbox.kubeconfig, root, console)
            tour = Tour(console, kubectl_env(sandbox.kubeconfig, root))
            yield World(root, sandbox.kubeconfig, tour, Narrator(console), identities)
        finally:
            sandbox.stop()


def _install_agents(kubeconfig: Path, root: Path, console: Console) -> Path:
    """`kubecrew install` on the scene's sandbox: each agent acts as its own ServiceAccount."""
    try:
        report = install(Request(kubeconfig=kubeconfig, out=root / "kubeconfigs"))
    except InstallError as exc:
        raise StepFailed(f"the agents' identities were not installed: {exc}") from exc
    where = root / "kubeconfigs"
    names = ", ".join(k.path.name for k in report.kubeconfigs)
    console.print(
        f"[dim]Agent kubeconfigs (one ServiceAccount each): {escape(str(where))}/ {names}"
    )
    return where
