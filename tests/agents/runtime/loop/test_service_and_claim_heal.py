"""The loop heals what no revision can: a Service that routes nowhere and a claim for a missing
StorageClass, with no human where policy allows, each validated on the cluster; where policy
gives a step to a person, the run waits naming the approval request it made and who answers it,
and carries on once it is granted. An escalation for any other reason says so plainly.

The world here has no git: every write is the kube server's gated, audited one, judged by the
shipped policies (a patch in the shop is allowed directly; deleting anything there is
shop-admins' call) or, in namespace `data`, by no policy at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from agents.dev_team.conversation import conversation
from agents.dev_team.heal import heal
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.loop.run import LoopResult
from agents.runtime.toolbox import Servers
from core.policy.audit import AuditRecord
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.policy.server import build as build_policy
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.team import FAST
from tests.support.waiting import eventually

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
      containers:
      - {name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %(ns)s}
spec:
  selector: {app: %(app)s}
  ports: [{port: 80, targetPort: %(port)s}]
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %(ns)s}
spec:
  storageClassName: fast-ssd
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: %(ns)s}
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: "nginx:1.27", volumeMounts: [{name: data, mountPath: /data}]}
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: data}}
"""


@dataclass
class World:
    kubectl: Kubectl
    servers: Servers
    home: Path
    store: Path

    def heal(self, target: str, **extra: Any) -> LoopResult:
        return anyio.run(
            lambda: heal(target, servers=self.servers, home=self.home, settings=FAST, **extra)
        )

    def ask(self, question: str) -> Outcome:
        async def go() -> Outcome:
            async with conversation(self.servers, Deterministic(), home=self.home) as talk:
                return await talk.ask(question)

        return anyio.run(go)

    def mutations(self) -> list[AuditRecord]:
        store = open_store(str(self.store))
        try:
            return list(store.audit(kind="mutation"))
        finally:
            store.close()

    def pending_approvals(self) -> list[Any]:
        store = open_store(str(self.store))
        try:
            return list(store.approvals(state="pending"))
        finally:
            store.close()

    def grant(self, request: str) -> None:
        """alice of shop-admins grants it through the policy server, as from any MCP host."""
        settings = PolicySettings(
            policies=(SHIPPED,), store=str(self.store), person="alice", groups=("shop-admins",)
        )

        async def go() -> None:
            async with create_connected_server_and_client_session(build_policy(settings)) as client:
                done = await client.call_tool(
                    "answer_approval", {"request_id": request, "verdict": "grant"}
                )
                assert not done.isError, done.content

        anyio.run(go)

    def ready_endpoints(self, namespace: str) -> int:
        endpoints = self.kubectl.json("get", "endpoints", "web", "-n", namespace)
        return sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or [])


@pytest.fixture
def world(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> World:
    store = tmp_path / "policy-store.sqlite"
    servers = Servers(
        kube=KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=(SHIPPED,),
            policy_store=str(store),
            agent="dev_team",
        ),
        policy=PolicySettings(policies=(SHIPPED,), store=str(store), agent="dev_team"),
    )
    for namespace in ("shop", "data"):
        kubectl("create", "namespace", namespace)
    return World(kubectl, servers, tmp_path / "agent-home", store)


def broken_service(world: World, namespace: str, *, app: str = "wbe", port: int = 80) -> None:
    world.kubectl("apply", "-f", "-", input=WEB % {"ns": namespace})
    world.kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=60s")
    world.kubectl("apply", "-f", "-", input=SERVICE % {"ns": namespace, "app": app, "port": port})
    # the endpoints controller writes the Service's Endpoints on its own time, as on a cluster
    eventually(
        lambda: (
            world.kubectl.run("get", "endpoints", "web", "-n", namespace, check=False).returncode
            == 0
        ),
        what=f"Endpoints web in {namespace} written",
    )


def selector(world: World) -> dict[str, str]:
    return dict(world.kubectl.json("get", "service", "web", "-n", "shop")["spec"]["selector"])


def test_a_service_selecting_nothing_is_pointed_at_its_workload_and_validated(
    world: World,
) -> None:
    broken_service(world, "shop")
    assert world.ready_endpoints("shop") == 0

    healed = world.heal("service/web", namespace="shop")

    assert healed.outcome == "fixed", healed.summary
    assert healed.summary.startswith("Healed Service web in shop:"), healed.summary
    [attempt] = healed.attempts
    assert attempt["fix"] == "select the pods labelled {'app': 'web'}"
    assert "Service web has 2 ready endpoint(s)" in attempt["evidence"], attempt["evidence"]
    assert "diagnose no longer finds ServiceSelectorNoMatch" in attempt["evidence"]
    assert selector(world) == {"app": "web"} and world.ready_endpoints("shop") == 2
    [write] = world.mutations()
    assert write.subject == "Service shop/web" and write.result == "applied", write
    assert write.summary.startswith("patch: "), write.summary
    assert world.pending_approvals() == []


def test_fix_the_web_service_in_chat_heals_the_service_of_the_healthy_workload(
    world: World,
) -> None:
    broken_service(world, "shop")

    outcome = world.ask("fix the web service in shop")

    assert outcome.answer.startswith("Healed Service web in shop:"), outcome.answer
    assert outcome.data["outcome"] == "fixed"
    assert selector(world) == {"app": "web"} and world.ready_endpoints("shop") == 2
    assert [r.subject for r in world.mutations()] == ["Service shop/web"]


def test_a_wrong_target_port_is_sent_to_the_port_the_pods_declare(world: World) -> None:
    broken_service(world, "shop", app="web", port=8080)

    healed = world.heal("svc/web", namespace="shop")

    assert healed.outcome == "fixed", healed.summary
    [attempt] = healed.attempts
    assert attempt["fix"] == "send port 80 to container port 80", attempt
    assert "diagnose no longer finds ServiceTargetPortMismatch" in attempt["evidence"]
    ports = world.kubectl.json("get", "service", "web", "-n", "shop")["spec"]["ports"]
    assert [p["targetPort"] for p in ports] == [80]
    assert world.ready_endpoints("shop") == 2
    assert [(r.subject, r.result) for r in world.mutations()] == [("Service shop/web", "applied")]


UNREADY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: "nginx:1.27"
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 8081}, periodSeconds: 2}
"""


def test_a_service_fix_that_brings_no_ready_endpoint_is_put_back(world: World) -> None:
    world.kubectl("apply", "-f", "-", input=UNREADY)
    world.kubectl("apply", "-f", "-", input=SERVICE % {"ns": "shop", "app": "wbe", "port": 80})
    eventually(
        lambda: world.kubectl.json("get", "pods", "-n", "shop", "-l", "app=web")["items"],
        what="web's pod",
    )

    ended = world.heal("service/web", namespace="shop")

    assert ended.outcome == "escalated" and ended.escalation == "failed", ended.summary
    [attempt] = ended.attempts
    assert attempt["fix"] == "select the pods labelled {'app': 'web'}"
    assert attempt["verdict"] == "failed" and "no ready endpoint" in " ".join(attempt["evidence"])
    assert attempt["undone"] == "put back spec.selector of Service web as they were", attempt
    assert selector(world) == {"app": "wbe"}
    assert [r.result for r in world.mutations()] == ["applied", "applied"]  # the fix, and back
    assert "no approval request waits" in ended.summary.lower()


def claim_for_a_missing_class(world: World, namespace: str) -> None:
    world.kubectl("apply", "-f", "-", input=CLAIM % {"ns": namespace})


def claim(world: World, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = world.kubectl.json("get", "pvc", "data", "-n", namespace)
    return found


def db_running(world: World, namespace: str) -> bool:
    pods = world.kubectl.json("get", "pods", "-n", namespace, "-l", "app=db")["items"]
    return bool(pods) and all(p["status"].get("phase") == "Running" for p in pods)


def default_class(world: World) -> str:
    classes = world.kubectl.json("get", "storageclass")["items"]
    annotation = "storageclass.kubernetes.io/is-default-class"
    [name] = [
        c["metadata"]["name"]
        for c in classes
        if (c["metadata"].get("annotations") or {}).get(annotation) == "true"
    ]
    return str(name)


def test_a_claim_for_a_missing_class_is_recreated_on_the_default_where_policy_allows(
    world: World,
) -> None:
    claim_for_a_missing_class(world, "data")

    healed = world.heal("db", namespace="data")

    assert healed.outcome == "fixed", healed.summary
    [attempt] = healed.attempts
    standard = default_class(world)
    assert attempt["fix"] == f"recreate the claim with the default StorageClass {standard}"
    assert attempt["applied"] is not None
    notes = attempt["applied"]["notes"]
    assert "claim data was Pending and never bound (no volume): it held no data" in notes, notes
    assert "diagnose no longer finds StorageClassNotFound" in attempt["evidence"]
    now = claim(world, "data")
    assert now["status"]["phase"] == "Bound", now
    assert now["spec"]["storageClassName"] == standard
    assert db_running(world, "data")
    writes = [(r.summary.split(":")[0], r.subject, r.result) for r in world.mutations()]
    assert writes == [
        ("delete", "PersistentVolumeClaim data/data", "applied"),
        ("apply", "PersistentVolumeClaim data/data", "applied"),
    ], writes


def test_a_claim_delete_policy_gives_to_a_person_waits_for_the_request_it_made(
    world: World,
) -> None:
    claim_for_a_missing_class(world, "shop")

    waiting = world.heal("pvc/data", namespace="shop", thread="claim")

    assert not waiting.finished and waiting.outcome == "", waiting.summary
    [request] = world.pending_approvals()
    assert waiting.waiting_for == request.id
    assert request.approvers.describe() == "group shop-admins"
    assert f"group shop-admins answer {request.id}" in waiting.asked, waiting.asked
    assert claim(world, "shop")["spec"]["storageClassName"] == "fast-ssd"
    assert [r.result for r in world.mutations()] == []

    world.grant(request.id)
    healed = world.heal("pvc/data", namespace="shop", thread="claim", resume="answered")

    assert healed.outcome == "fixed", healed.summary
    assert healed.nodes[:3] == ["approval", "decide", "mutate"], healed.nodes
    assert claim(world, "shop")["status"]["phase"] == "Bound"
    eventually(lambda: db_running(world, "shop"), what="db running on its new claim")
    [delete, apply] = world.mutations()
    assert delete.summary.startswith("delete: ") and delete.result == "applied"
    assert f"under proposal {request.proposal}" in delete.summary, delete.summary
    assert apply.summary.startswith("apply: ") and apply.result == "applied"
    [attempt] = healed.attempts
    assert "claim data is Bound" in " ".join(attempt["evidence"]), attempt["evidence"]


def test_fixing_the_claim_in_chat_recreates_it_as_a_heal_run_does(world: World) -> None:
    claim_for_a_missing_class(world, "data")

    outcome = world.ask("fix db in data")

    assert outcome.data["outcome"] == "fixed", outcome.answer
    now = claim(world, "data")
    assert now["spec"]["storageClassName"] == default_class(world)
    assert now["status"]["phase"] == "Bound", now
    writes = [(r.summary.split(":")[0], r.result) for r in world.mutations()]
    assert writes == [("delete", "applied"), ("apply", "applied")], writes


def test_an_escalation_with_no_fix_says_so_and_asks_no_one_to_approve(world: World) -> None:
    crashing = json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "shop"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "api"}},
                "template": {
                    "metadata": {"labels": {"app": "api"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "api",
                                "image": "busybox:1.36",
                                "command": ["sh", "-c", "echo config is broken; exit 3"],
                            }
                        ]
                    },
                },
            },
        }
    )
    world.kubectl("apply", "-f", "-", input=crashing)
    eventually(
        lambda: "CrashLoopBackOff" in world.kubectl("get", "pods", "-n", "shop", "-l", "app=api"),
        what="api crash-looping",
    )

    ended = world.heal("api", namespace="shop")

    assert ended.outcome == "escalated" and ended.escalation == "no-fix", ended.summary
    assert "no approval request waits" in ended.summary, ended.summary
    assert "approve" not in ended.summary and "A person needs to decide" not in ended.summary
    assert world.pending_approvals() == [] and world.mutations() == []
