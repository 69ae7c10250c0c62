"""The Platform agent on a sandbox with two team namespaces of one class and one outside it.

team-a is git-managed: its Namespace comes from the team's GitOps repository, synced, so it
carries the repository's `kubecrew.io/gitops-repo` label and its NetworkPolicies go there by PR.
team-b is labelled into the class by hand (no repository): it gets the gated apply. scratch has
no class label, so no EgressPolicy covers it. The kube server's gate and the policy server share
one SQLite store and the test's own policy documents (written per test).

`Platform` opens one conversation per call on the same agent home, as a schedule would.
`EGRESS` and `BLUEPRINT` are the org's EgressPolicy and NamespaceBlueprint for the team class.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from agents.platform.conversation import Conversation, conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from core.policy.audit import AuditRecord
from core.policy.proposals import ProposalRecord
from core.policy.settings import PolicySettings
from core.policy.store.sqlite import SqliteStore
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.gitops import git
from tests.support.kubectl import Kubectl

T = TypeVar("T")
AGENT = "platform"
REPO = "team-a-gitops"
CLASS = "kubecrew.io/class"
OWNERSHIP = """\
apiVersion: kubecrew.io/v1alpha1
kind: Ownership
metadata: {name: platform}
spec:
  team: platform
  agent: platform
  humans: {groups: [platform-team]}
  owns: [{kinds: [NetworkPolicy, Namespace]}]
---
apiVersion: kubecrew.io/v1alpha1
kind: Ownership
metadata: {name: team-a}
spec:
  team: team-a
  agent: dev-team
  humans: {groups: [team-a-admins]}
  owns: [{namespaces: [team-a]}]
---
apiVersion: kubecrew.io/v1alpha1
kind: Ownership
metadata: {name: team-b}
spec:
  team: team-b
  agent: dev-team
  humans: {groups: [team-b-admins]}
  owns: [{namespaces: [team-b]}]
---
apiVersion: kubecrew.io/v1alpha1
kind: PriorityPolicy
metadata: {name: org-priorities}
spec:
  order: [security, reliability, cost]
  tieBreaks: [owner, most-conservative]
"""
EGRESS = """\
apiVersion: kubecrew.io/v1alpha1
kind: EgressPolicy
metadata: {name: team-egress, labels: {kubecrew.io/team: platform}}
spec:
  namespaceSelector: {matchLabels: {kubecrew.io/class: team}}
  destinations:
    - name: cluster-dns
      inCluster: {namespaces: [kube-system], podSelector: {matchLabels: {k8s-app: kube-dns}}}
      ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
    - name: payments-api
      dnsNames: [api.payments.example.com]
      cidrs: [203.0.113.0/24]
      ports: [{protocol: TCP, port: 443}]
"""
BLUEPRINT = """\
apiVersion: kubecrew.io/v1alpha1
kind: NamespaceBlueprint
metadata: {name: team-namespace}
spec:
  namespaceSelector: {matchLabels: {kubecrew.io/class: team}}
  requiredLabels: [kubecrew.io/class]
  resourceQuota: {hard: {requests.cpu: "4", requests.memory: 8Gi, pods: "50"}}
  limitRange:
    defaultRequest: {cpu: 100m, memory: 128Mi}
    default: {cpu: 500m, memory: 512Mi}
  networkPolicy: {ingress: same-namespace}
  teamAccess: {clusterRole: edit}
"""
NAMESPACE_A = f"""\
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {{{CLASS}: team}}
"""


class Platform:
    def __init__(self, sandbox: Sandbox, kubectl: Kubectl, root: Path) -> None:
        self.kubectl = kubectl
        self.policies = root / "policies"
        self.policies.mkdir()
        (self.policies / "ownership.yaml").write_text(OWNERSHIP)
        self.policy("egress", EGRESS)
        self.store = root / "store.sqlite"
        self.home = root / "agent-home"
        self.kubeconfig = sandbox.kubeconfig
        self.repo = root / REPO
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "namespaces.yaml").write_text(NAMESPACE_A)
        self.commit("team-a's namespace")
        self.gitops = GitopsSettings(
            repo=self.repo, state_dir=root / "prs", kubeconfig=sandbox.kubeconfig
        )
        self.sync()
        kubectl("create", "namespace", "team-b")
        kubectl("label", "namespace", "team-b", f"{CLASS}=team")
        kubectl("create", "namespace", "scratch")
        self.last: Conversation | None = None

    def policy(self, name: str, text: str) -> None:
        (self.policies / f"{name}.yaml").write_text(text)

    def commit(self, message: str) -> None:
        """Commit the work tree on main, as a person merging their own change does."""
        git(self.repo, "add", ".")
        git(self.repo, "-c", "user.name=dev", "-c", "user.email=dev@a", "commit", "-qm", message)

    def edit_in_git(self, path: str, old: str, new: str) -> None:
        git(self.repo, "reset", "-q", "--hard", "main")  # merges moved main under the work tree
        file = self.repo / path
        file.write_text(file.read_text().replace(old, new))
        self.commit("widen egress by hand")

    def sync(self) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            async with create_connected_server_and_client_session(
                build_gitops(self.gitops)
            ) as client:
                done = await client.call_tool("sync", {"dry_run": False})
                assert not done.isError, done.content
                return dict(done.structuredContent or {})

        return anyio.run(go)

    def servers(self) -> Servers:
        paths = (self.policies,)
        return Servers(
            kube=KubeSettings(
                kubeconfig=self.kubeconfig, policies=paths, policy_store=str(self.store),
                agent=AGENT,
            ),
            policy=PolicySettings(policies=paths, store=str(self.store), agent=AGENT),
        )  # fmt: skip

    def _run(self, call: str, *args: Any, thread: str | None = None) -> Outcome:
        async def go() -> Outcome:
            async with conversation(
                self.servers(), Deterministic(), repos={REPO: self.gitops}, home=self.home,
                thread=thread,
            ) as talk:  # fmt: skip
                self.last = talk
                outcome: Outcome = await getattr(talk, call)(*args)
                return outcome

        return anyio.run(go)

    def propagate(self) -> Outcome:
        return self._run("propagate")

    def ask(self, question: str, *, thread: str | None = None) -> Outcome:
        """One message; the same `thread` carries on a conversation (a delete, then "yes")."""
        return self._run("ask", question, thread=thread)

    def audit(self, namespace: str = "") -> Outcome:
        return self._run("audit", namespace)

    def sync_blueprints(self) -> Outcome:
        return self._run("sync_blueprints")

    def add_to_git(self, path: str, text: str) -> None:
        """A team's own change merged on main and synced, as the team does it."""
        git(self.repo, "reset", "-q", "--hard", "main")  # merges moved main under the work tree
        (self.repo / path).write_text(text)
        self.commit(f"add {path}")
        self.sync()

    def called(self) -> list[str]:
        assert self.last is not None
        return [c.tool for c in self.last.toolbox.calls]

    def netpols(self, namespace: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.kubectl.json("get", "networkpolicies", "-n", namespace)[
            "items"
        ]
        return items

    def mutations(self) -> list[AuditRecord]:
        return self.read_store(lambda s: s.audit(kind="mutation"))

    def proposal(self, proposal: str) -> ProposalRecord:
        return self.read_store(lambda s: s.get(proposal))

    def read_store(self, fn: Callable[[SqliteStore], T]) -> T:
        opened = SqliteStore(self.store)
        try:
            return fn(opened)
        finally:
            opened.close()
