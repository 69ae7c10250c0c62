"""The Dev Team asked for everyday changes, as a person in a conversation: a sandbox with a
Deployment `web` (one container, nginx:1.27, 2 replicas) in `staging`, where the shipped
policies leave changes to the agent, and in `shop`, where they keep 3 replicas; the kube server
and the policy server share one policy store, so every write is judged and audited.

`Crew.ask(text, thread=...)` is one message of a conversation; `Crew.web(namespace)` is the
Deployment as the API server has it now, read with kubectl; `Crew.mutations()` is what the
kube server's gate recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic, Planner
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.kube.settings import KubeSettings
from tests.support.kubectl import Kubectl

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %(ns)s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 32Mi}}
"""


class Crew:
    def __init__(self, kubeconfig: Path, kubectl: Kubectl, home: Path) -> None:
        self.kubectl = kubectl
        self.home = home
        self.store = str(home / "policy-store.sqlite")
        self.servers = Servers(
            kube=KubeSettings(
                kubeconfig=kubeconfig, policies=(SHIPPED,), policy_store=self.store,
                agent="dev_team",
            ),
            policy=PolicySettings(policies=(SHIPPED,), store=self.store, agent="dev_team"),
        )  # fmt: skip

    def deploy_web(self, namespace: str) -> None:
        self.kubectl("create", "namespace", namespace)
        self.kubectl("apply", "-f", "-", input=WEB % {"ns": namespace})
        self.kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=60s")

    def ask(self, text: str, *, thread: str = "t", planner: Planner | None = None) -> Outcome:
        async def go() -> Outcome:
            async with conversation(
                self.servers, planner or Deterministic(), home=self.home / "agent", thread=thread
            ) as talk:
                return await talk.ask(text)

        return anyio.run(go)

    def web(self, namespace: str = "staging") -> dict[str, Any]:
        return dict(self.kubectl.json("get", "deployment", "web", "-n", namespace))

    def container(self, namespace: str = "staging") -> dict[str, Any]:
        return dict(self.web(namespace)["spec"]["template"]["spec"]["containers"][0])

    def mutations(self) -> list[str]:
        store = open_store(self.store)
        try:
            return [f"{r.result}: {r.summary}" for r in store.audit(after=0, limit=1000)
                    if r.kind == "mutation"]  # fmt: skip
        finally:
            store.close()
