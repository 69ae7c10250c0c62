""" "probe web" asked in a Dev Team conversation: the agent derives checks from web's Service and
readiness probe, writes a prober Job through the kube server's policy-gated `apply` (dry run
first, the shipped policies judging it), waits for it on the cluster's clock and reports each
check. A healthy web passes every check; a Service whose targetPort nothing listens on, and a
readiness path the app does not serve, fail the prober and the answer names the port and path.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from core.policy.audit import AuditRecord
from core.policy.settings import SHIPPED
from core.policy.store import open_store
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


def shop(target_port: str = "http", readiness: str = "/") -> str:
    return f"""\
apiVersion: v1
kind: Namespace
metadata: {{name: shop}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{{name: http, containerPort: 80}}]
        readinessProbe: {{httpGet: {{path: "{readiness}", port: http}}, periodSeconds: 2}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: shop}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: {target_port}}}]
"""


class Crew:
    """The Dev Team on the sandbox with every kube write judged by the shipped policies."""

    def __init__(self, sandbox: Sandbox, tmp_path: Path) -> None:
        self.store = tmp_path / "policy-store.sqlite"
        kube = KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=(SHIPPED,),
            policy_store=str(self.store),
            agent="dev_team",
        )
        self.servers = Servers(kube=kube)
        self.home = tmp_path / "agent-home"
        self.calls: list[tuple[str, dict[str, object]]] = []

    def ask(self, question: str) -> Outcome:
        async def go() -> Outcome:
            async with conversation(self.servers, Deterministic(), home=self.home) as talk:
                outcome = await talk.ask(question)
                self.calls = [(c.tool, c.arguments) for c in talk.toolbox.calls]
                return outcome

        return anyio.run(go)

    def audit(self) -> list[AuditRecord]:
        store = open_store(str(self.store))
        try:
            return list(store.audit(after=0, limit=1000))
        finally:
            store.close()


@pytest.fixture
def crew(sandbox: Sandbox, tmp_path: Path) -> Crew:
    return Crew(sandbox, tmp_path)


def running(kubectl: Kubectl, *, ready: bool) -> None:
    def check() -> bool:
        pods = kubectl.json("get", "pods", "-n", "shop", "-l", "app=web")["items"]
        states = [
            any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in p["status"].get("conditions", [])
            )
            for p in pods
            if p.get("status", {}).get("podIP")
            and all("running" in s["state"] for s in p["status"].get("containerStatuses", []))
        ]
        return len(states) == 2 and all(s == ready for s in states)

    eventually(check, what=f"web's two pods running, ready={ready}")


def test_a_healthy_web_passes_every_check_and_the_gate_let_the_job_through(
    crew: Crew, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=shop())
    running(kubectl, ready=True)

    outcome = crew.ask("probe web in shop")

    assert outcome.nodes == ["understand", "task"], outcome.answer
    report = outcome.data
    assert report["outcome"] == "passed", outcome.answer
    urls = [c["url"] for c in report["checks"]]
    assert urls[0] == "http://web.shop.svc.cluster.local:80/"
    assert len(urls) == 2 and urls[1].startswith("http://10.244.") and urls[1].endswith(":80/")
    assert all(c["got"] == "HTTP 200" for c in report["checks"])
    job = report["job"]
    assert job.startswith("web-prober-") and f"Job {job} in shop" in outcome.answer
    assert "all 2 checks passed" in outcome.answer
    # dry run first, then the real write; the job ran with the prober's label and finished
    applies = [a for tool, a in crew.calls if tool == "apply"]
    assert [a.get("dry_run", False) for a in applies] == [True, False]
    live = kubectl.json("get", "job", job, "-n", "shop")
    assert live["metadata"]["labels"]["kubecrew.io/prober"] == "web"
    assert live["spec"]["backoffLimit"] == 0 and live["spec"]["ttlSecondsAfterFinished"] > 0
    pod = live["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["containers"][0]["resources"]["limits"]
    [record] = [r for r in crew.audit() if r.kind == "mutation"]
    assert job in record.subject + record.summary and record.result == "applied"
    assert (
        kubectl("get", "deployment", "web", "-n", "shop", "-o", "jsonpath={.metadata.generation}")
        == "1"
    )


def test_a_target_port_nobody_listens_on_fails_the_prober_naming_the_port(
    crew: Crew, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=shop(target_port="8080"))
    running(kubectl, ready=True)

    outcome = crew.ask("probe web in shop")

    assert outcome.data["outcome"] == "failed", outcome.answer
    service, direct = outcome.data["checks"]
    assert not service["passed"] and direct["passed"]
    assert "Could not connect to server" in service["got"]
    assert "port 8080 is the Service's targetPort but no container listens there" in outcome.answer
    assert "(the containers declare 80)" in outcome.answer
    assert "1 of 2 checks failed" in outcome.answer


def test_a_readiness_path_the_app_does_not_serve_fails_the_prober_naming_the_path(
    crew: Crew, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=shop(readiness="/healthz"))
    running(kubectl, ready=False)

    outcome = crew.ask("probe web in shop")

    assert outcome.data["outcome"] == "failed", outcome.answer
    service, direct = outcome.data["checks"]
    assert service["url"] == "http://web.shop.svc.cluster.local:80/healthz"
    assert "Service web has no ready endpoint" in service["meaning"]
    assert direct["got"] == "HTTP 404 (curl exit 22)"
    assert "the app answers 404 for /healthz" in outcome.answer
    assert "the readiness probe asks for it" in outcome.answer


def test_probing_a_service_by_name_reads_its_pods_probes(crew: Crew, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=shop())
    kubectl("create", "service", "clusterip", "frontend", "--tcp=8000:80", "-n", "shop")
    kubectl(
        "patch", "service", "frontend", "-n", "shop", "-p", '{"spec":{"selector":{"app":"web"}}}'
    )
    running(kubectl, ready=True)

    outcome = crew.ask("probe frontend in shop")

    assert outcome.data["outcome"] == "passed", outcome.answer
    urls = [c["url"] for c in outcome.data["checks"]]
    assert "http://frontend.shop.svc.cluster.local:8000/" in urls
    assert "http://web.shop.svc.cluster.local:80/" in urls
