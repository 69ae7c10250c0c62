"""Asking the questions package on a sandbox, as an agent would: `Asker.ask(text)` reads the
text (`questions.read`) and answers it (`questions.answer`) through the agent's own toolbox,
over the kube server (with the shipped policies and a policy store, so any write would be
gated and audited) and the policy server acting as the agent.

`Asked.writes` lists the calls of tools that are not annotated read-only (none, for a
question); `Asker.mutations()` is what the kube server's gate recorded in the audit log.
`shop` builds the namespace the inventory and policy questions are asked about.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agents.runtime import questions
from agents.runtime.roles import load_role
from agents.runtime.toolbox import CallRecord, Servers, open_toolbox
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.kube.settings import KubeSettings
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


@dataclass(frozen=True)
class Asked:
    question: questions.Question | None
    answered: questions.Answered | None
    calls: list[CallRecord] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        assert self.answered is not None, f"not read as a question: {self.question}"
        return self.answered.text

    @property
    def data(self) -> dict[str, Any]:
        assert self.answered is not None, f"not read as a question: {self.question}"
        return self.answered.data


def writing_nothing(asker: Asker) -> Iterator[Asker]:
    """A module fixture's asker that, once its questions are asked, finds no audited write."""
    yield asker
    assert asker.mutations() == []


class Asker:
    def __init__(self, kubeconfig: Path, home: Path, *, agent: str = "dev_team") -> None:
        self.agent = agent
        self.store = str(home / "policy-store.sqlite")
        self.servers = Servers(
            kube=KubeSettings(
                kubeconfig=kubeconfig, policies=(SHIPPED,), policy_store=self.store, agent=agent
            ),
            policy=PolicySettings(policies=(SHIPPED,), store=self.store, agent=agent),
        )

    def ask(self, text: str, *, namespace: str | None = None) -> Asked:
        async def go() -> Asked:
            question = questions.read(text, namespace=namespace)
            if question is None:
                return Asked(None, None)
            async with open_toolbox(load_role(self.agent), self.servers) as toolbox:
                answered = await questions.answer(toolbox, question)
                calls = list(toolbox.calls)
                writes = [
                    c.tool
                    for c in calls
                    if not (toolbox.tools[c.tool].metadata or {}).get("readOnlyHint")
                ]
            return Asked(question, answered, calls, writes)

        return anyio.run(go)

    def mutations(self) -> list[str]:
        return [summary for kind, summary in self.audit() if kind == "mutation"]

    def audit(self) -> list[tuple[str, str]]:
        """(kind, summary) of every audit record: proposals, decisions, mutations."""
        store = open_store(self.store)
        try:
            return [(r.kind, r.summary) for r in store.audit(after=0, limit=1000)]
        finally:
            store.close()


# The shop the inventory and policy questions are asked about: web is careful (limits,
# probes, a PodDisruptionBudget, not root, a pinned image, two revisions), api is careless
# (nginx:latest, root, no limits, no probes), cache is in between (requests but no limits, a
# readiness probe only, nothing said about root), and stuck never leaves Pending.
SHOP = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext: {runAsNonRoot: true, runAsUser: 101}
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}
        readinessProbe: {httpGet: {path: /, port: 80}}
        livenessProbe: {httpGet: {path: /, port: 80}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: api
        image: nginx:latest
        securityContext: {runAsUser: 0}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache, namespace: shop}
spec:
  replicas: 1
  serviceName: cache
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: redis
        image: redis:7
        resources: {requests: {cpu: 50m, memory: 64Mi}}
        readinessProbe: {tcpSocket: {port: 6379}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: v1
kind: Pod
metadata: {name: stuck, namespace: shop}
spec:
  schedulerName: no-scheduler
  containers: [{name: stuck, image: "nginx:1.27"}]
"""


def shop(kubectl: Kubectl) -> None:
    """The shop above, rolled out, web on its second revision (nginx:1.28)."""
    kubectl("create", "namespace", "shop")
    kubectl("apply", "-f", "-", input=SHOP)
    kubectl("set", "image", "deployment/web", "web=nginx:1.28", "-n", "shop")
    for workload in ("deployment/web", "deployment/api", "statefulset/cache"):
        kubectl("rollout", "status", workload, "-n", "shop", "--timeout=60s")
    eventually(lambda: len(running(kubectl, "shop")) == 4, what="web, api and cache running")


def running(kubectl: Kubectl, namespace: str) -> list[str]:
    """The pods of `namespace` that run (not being deleted)."""
    items = kubectl.json("get", "pods", "-n", namespace)["items"]
    return [
        p["metadata"]["name"]
        for p in items
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]


def objects(answered: Asked) -> set[str]:
    """The objects an answer's evidence rows cite ("Deployment shop/api")."""
    rows = answered.data.get("rows") or []
    assert isinstance(rows, list)
    cited = set()
    for row in rows:
        if "object" in row:
            cited.add(str(row["object"]))
        elif "name" in row:
            where = f"{row['namespace']}/" if row.get("namespace") else ""
            cited.add(f"{row.get('kind', 'Pod')} {where}{row['name']}")
    return cited
