"""Building a scenario's world: a fresh sandbox, its faults, a GitOps repository synced to it, the
policy store every write is gated and audited in, the people file the PR channel reads, the
sandbox's registries as the crew's mirrors, and the states to reach before the trigger. A fleet
(`world.clusters`) adds a sandbox per other cluster (`kubecrew.evals.fleet`): the crew's kube
server then reads one kubeconfig naming them all, the main one current, and the GitOps
repository syncs to the main one.

The sandbox runs in-process (as the demo's does) but everything else reaches it as a client
would: faults through its admin endpoint with the admin kubeconfig (as `kubecrew sandbox fault
add` does), manifests from git through the gitops server's `sync`, hand edits as `kubectl edit`
writes them (under its field manager, so drift says who), readiness through the kube
server's `diagnose`. The harness's own calls go through sessions of their own, so they never
show among the agent's tool calls.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

from agents.runtime.toolbox import Servers
from core.policy.people import Person
from core.policy.settings import SHIPPED, PolicySettings
from kubecrew.evals import fleet
from kubecrew.evals.checks import Settle
from kubecrew.evals.format import Edit, Scenario
from kubecrew.evals.observe import Cluster, set_at
from kubecrew.practice.probe import FAULTS_PATH, SandboxUnreachable
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.server import build as build_kube
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Options, Sandbox

# An agent's role (agents/<role>/AGENTS.md: its allow-list) -> the name the policies know it by
# (Ownership `agent:`, PriorityPolicy, proposers) and the audit log records it under. The one
# place the harness turns one into the other.
IDENTITIES = {
    "dev_team": "dev-team",
    "cluster_operator": "cluster-operator",
    "platform": "platform",
}
# The sandbox serves every registry of its world's image catalog at /registries/<host>/v2/ on
# its own API server (sandbox/registryapi.py); the crew asks them as `kubecrew sandbox up` points
# it there (crew.yaml's `registries`), so a heal can find the tag an image typo meant. A path:
# it follows the kubeconfig's server and is trusted with its CA.
REGISTRIES = {"*": "/registries/{host}"}
SETTLE_SECONDS = 90.0  # real seconds a settle state may take before the world counts as broken
ROOT = Path(__file__).resolve().parents[2]


class WorldFailed(RuntimeError):
    """The world could not be built as the scenario says (not the crew's fault: an error)."""


@dataclass(frozen=True)
class Built:
    sandbox: Sandbox
    cluster: Cluster
    servers: Servers
    store: Path  # the policy store's SQLite file (audit log, proposals)
    repo: Path | None
    prs: Path | None
    home: Path  # the agent's home: checkpoints and memory
    role: str = "dev_team"  # the role whose allow-list the trigger's agent works under
    rate: float = 10.0  # sandbox seconds per real second
    people: Path | None = None  # the people file (forge logins -> people), when it has one

    @property
    def others(self) -> Mapping[str, Cluster]:
        """The fleet's other clusters' readers, by kubeconfig context name (none: one cluster)."""
        return self.cluster.fleet

    @property
    def incidents(self) -> Path:
        """The watcher's incident store, for the alert and Dev Team patrol triggers."""
        return self.home.parent / "incidents.sqlite"

    def clock(self) -> float:
        return self.sandbox.call(lambda cluster: cluster.clock.seconds())

    def acting_as(self, role: str) -> Built:
        """The same world for another of the crew (a scenario's `then`): the same cluster,
        store and repository; that agent's name on the servers, so the store and the gate judge
        it as itself, and a home of its own, as each agent has."""
        if role == self.role:
            return self
        agent = IDENTITIES[role]
        kube, policy = self.servers.kube, self.servers.policy
        servers = replace(
            self.servers,
            kube=replace(kube, agent=agent) if kube is not None else None,
            policy=replace(policy, agent=agent) if policy is not None else None,
        )
        return replace(self, servers=servers, home=self.home.parent / f"{role}-home", role=role)


@contextmanager
def build(scenario: Scenario, workdir: Path) -> Iterator[Built]:
    world = scenario.world
    workdir.mkdir(parents=True, exist_ok=True)
    document = workdir / "world.yaml"
    document.write_text(yaml.safe_dump(world.sandbox_document(scenario.name)))
    nodes = world.nodes if isinstance(world.nodes, int) else 3
    options = Options(home=workdir / "sandbox", nodes=nodes, rate=world.rate, scenario=document)
    with ExitStack() as sandboxes:  # every sandbox closed on the way out, whatever happens
        sandbox = _started(sandboxes, options, "the world's cluster")
        members = _start_fleet(sandboxes, scenario, workdir)
        names = world.fleet  # () for a world of one cluster: no contexts, no fleet
        main = names[0] if names else ""
        others = {n: Cluster.from_kubeconfig(m.kubeconfig, name=n) for n, m in members.items()}
        cluster = Cluster.from_kubeconfig(sandbox.kubeconfig, name=main, fleet=others)
        kubeconfig = sandbox.kubeconfig  # the crew's: in a fleet, every cluster's context
        if names:
            paths = {main: sandbox.kubeconfig} | {n: m.kubeconfig for n, m in members.items()}
            kubeconfig = fleet.kubeconfig(workdir / "fleet.kubeconfig", paths)
        for fault in world.faults:
            _add_fault(cluster, fault)
        policies = ((ROOT / world.policies) if world.policies else SHIPPED,)
        role = scenario.trigger.agent
        agent = IDENTITIES[role]
        store = workdir / "policy-store.sqlite"
        repo = prs = None
        gitops = None
        if world.gitops is not None:
            repo, prs = workdir / "gitops", workdir / "prs"
            gitops = GitopsSettings(
                repo=repo, state_dir=prs, kubeconfig=kubeconfig, context=main or None
            )  # in a fleet, the repository syncs to the main cluster
        kube = KubeSettings(
            kubeconfig=kubeconfig,
            policies=policies,
            policy_store=str(store),
            agent=agent,
            registries=REGISTRIES,
            fleet=names,
        )
        servers = Servers(
            kube=kube,
            gitops=gitops,
            policy=PolicySettings(policies=policies, store=str(store), agent=agent),
        )
        home = workdir / "agent-home"
        people = _people_file(workdir, world.people) if world.people else None
        built = Built(
            sandbox, cluster, servers, store, repo, prs, home, role, world.rate, people=people
        )
        if world.gitops is not None and gitops is not None and repo is not None:
            _git(repo.parent, "init", "-q", "-b", "main", str(repo))
            for commit in world.gitops.commits:
                for name, text in commit.files.items():
                    (repo / name).parent.mkdir(parents=True, exist_ok=True)
                    (repo / name).write_text(text)
                _git(repo, "add", "-A")
                _git(repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qm",
                     commit.message)  # fmt: skip
                _call(build_gitops(gitops), "sync", {"dry_run": False})
                _settle(built, commit.settle)
                for fault in commit.faults:
                    _add_fault(cluster, fault)
                for edit in commit.edits:
                    _edit(cluster, edit)
        _settle(built, world.settle)
        for member in world.clusters:
            _settle(built, member.settle, member.name)
        yield built


def _start_fleet(stack: ExitStack, scenario: Scenario, workdir: Path) -> dict[str, Sandbox]:
    """The fleet's other clusters, a sandbox each with its own scenario document (its nodes
    and manifests, applied as the main world's are), by context name; `stack` closes them."""
    world, started = scenario.world, {}
    for member in world.clusters:
        home = workdir / "clusters" / member.name
        home.mkdir(parents=True, exist_ok=True)
        document = home / "world.yaml"
        document.write_text(yaml.safe_dump(world.sandbox_document(scenario.name, member)))
        rate = member.rate if member.rate is not None else world.rate
        options = Options(home=home / "sandbox", nodes=member.nodes, rate=rate, scenario=document)
        started[member.name] = _started(stack, options, f"cluster {member.name}")
    return started


def _started(stack: ExitStack, options: Options, what: str) -> Sandbox:
    """A sandbox running until `stack` closes; WorldFailed when it refuses its scenario."""
    try:
        return stack.enter_context(Sandbox(options))
    except SystemExit as exc:  # how the sandbox's start refuses (its CLI's way): a world error
        raise WorldFailed(f"{what} could not start: {exc}") from exc


def _people_file(workdir: Path, people: list[Person]) -> Path:
    """The scenario's people as the people file an operator keeps (`kind: People`)."""
    path = workdir / "people.yaml"
    entries = [person.model_dump(exclude_none=True) for person in people]
    document = {"apiVersion": "kubecrew.io/v1alpha1", "kind": "People", "people": entries}
    path.write_text(yaml.safe_dump(document))
    return path


def _git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(where), *args], check=True, capture_output=True)


def _add_fault(cluster: Cluster, fault: dict[str, Any]) -> None:
    try:
        cluster.client.call("POST", FAULTS_PATH, fault)
    except SandboxUnreachable as exc:
        raise WorldFailed(f"the sandbox refused the fault {fault}: {exc}") from exc


def _edit(cluster: Cluster, edit: Edit) -> None:
    """A hand edit as `kubectl edit` makes it: read, change, write back under its manager."""
    found = cluster.get(edit.kind, edit.name, edit.namespace)
    if found is None:
        raise WorldFailed(f"{edit.kind} {edit.namespace}/{edit.name} is not there to edit")
    for path, value in edit.set.items():
        set_at(found, path, value)
    try:
        cluster.replace(found, manager=edit.by)
    except SandboxUnreachable as exc:
        raise WorldFailed(f"the edit of {edit.kind} {edit.name} was refused: {exc}") from exc


def _call(server: FastMCP, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(server) as client:
            done = await client.call_tool(tool, arguments)
            if done.isError:
                raise WorldFailed(f"{tool} failed while building the world: {done.content}")
            return dict(done.structuredContent or {})

    return anyio.run(go)


def _settle(built: Built, states: list[Settle], cluster: str | None = None) -> None:
    """Wait for each state in the main cluster, or in the fleet's `cluster`."""
    kube = built.servers.kube
    assert kube is not None
    where = f" in cluster {cluster}" if cluster is not None else ""
    for state in states:
        deadline = time.monotonic() + SETTLE_SECONDS
        while not _reached(built, kube, state, cluster):
            if time.monotonic() > deadline:
                if state.pool is not None:
                    raise WorldFailed(
                        f"pool {state.namespace}/{state.pool}{where} never came up whole"
                    )
                what = state.finding or "a complete rollout"
                what += ", measured" if state.measured else ""
                raise WorldFailed(
                    f"deployment {state.namespace}/{state.deployment}{where} never showed {what}"
                )
            time.sleep(0.25)


def _reached(built: Built, kube: KubeSettings, state: Settle, cluster: str | None) -> bool:
    reader = built.cluster.on(cluster)
    if state.pool is not None:
        pool = reader.get("MachineDeployment", state.pool, state.namespace) or {}
        want = (pool.get("spec") or {}).get("replicas")
        return want is not None and (pool.get("status") or {}).get("availableReplicas") == want
    assert state.deployment is not None
    if state.measured and not _measured(reader, state):
        return False
    if state.finding is None:
        return reader.rolled_out(state.namespace, state.deployment)
    scope = {"namespace": state.namespace, "kind": "deployment", "name": state.deployment}
    if cluster is not None:
        scope["context"] = cluster  # the kube server's own context of that cluster
    findings = _call(build_kube(kube), "diagnose", scope).get("findings", [])
    return any(f.get("code") == state.finding for f in findings)


def _measured(cluster: Cluster, state: Settle) -> bool:
    """Whether the metrics API reports usage for as many of the namespace's pods as the
    Deployment wants replicas."""
    deployment = cluster.get("Deployment", str(state.deployment), state.namespace) or {}
    want = int((deployment.get("spec") or {}).get("replicas", 1))
    path = f"/apis/metrics.k8s.io/v1beta1/namespaces/{state.namespace}/pods"
    return len(cluster.client.get_json(path).get("items", [])) >= want
