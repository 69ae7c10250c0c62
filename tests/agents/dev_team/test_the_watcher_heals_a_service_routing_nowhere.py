"""The watcher's patrol finds what raises no event, a Service whose selector matches no pod, and
its healer (`kubecrew watch --heal`) heals it with no human: the Service points at web's pods,
its Endpoints list them, the incident is resolved and the write is audited."""

from __future__ import annotations

from pathlib import Path

import anyio
from anyio.from_thread import start_blocking_portal

from agents.dev_team.incidents import Healer
from agents.runtime.notify.incidents import Incident, Incidents
from agents.runtime.notify.watcher import WatchPlan, watch
from agents.runtime.toolbox import Servers
from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.team import FAST
from tests.support.waiting import eventually

WORLD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: storefront, namespace: shop}
spec:
  selector: {app: webb}
  ports: [{port: 80, targetPort: 80}]
"""
FINGERPRINT = "Service/shop/storefront"


def test_the_patrol_heals_a_service_whose_selector_matches_no_pod(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "shop")
    kubectl("apply", "-f", "-", input=WORLD)
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")
    kubectl("apply", "-f", "-", input=SERVICE)
    store = tmp_path / "store.sqlite"
    kube = KubeSettings(
        kubeconfig=sandbox.kubeconfig, policies=(SHIPPED,), policy_store=str(store),
        agent="dev_team",
    )  # fmt: skip
    servers = Servers(
        kube=kube, policy=PolicySettings(policies=(SHIPPED,), store=str(store), agent="dev_team")
    )
    plan = WatchPlan(
        servers=Servers(kube=kube), namespaces=("shop",), every_s=1.0, wait_s=2,
        incidents=tmp_path / "incidents.sqlite",
    )  # fmt: skip
    lines: list[str] = []
    healer = Healer(
        servers, incidents=plan.incidents, home=tmp_path / "home", settings=FAST, say=lines.append
    )

    def incident() -> Incident | None:
        book = Incidents(plan.incidents)
        try:
            return book.get(FINGERPRINT)
        finally:
            book.close()

    with start_blocking_portal() as portal:
        stop = portal.call(anyio.Event)
        done = portal.start_task_soon(lambda: watch(plan, healer, say=lines.append, stop=stop))
        try:
            eventually(
                lambda: (found := incident()) is not None and found.state == "resolved",
                timeout=90,
                what="the Service's incident healed and resolved",
            )
        finally:
            portal.call(stop.set)
            done.result(timeout=30)

    found = incident()
    assert found is not None and found.source == "patrol", found
    assert found.finding == "ServiceSelectorNoMatch", found
    [handled] = [line for line in lines if line.startswith(f"handled {found.subject}")]
    assert "Healed Service storefront in shop" in handled, handled
    selector = kubectl.json("get", "service", "storefront", "-n", "shop")["spec"]["selector"]
    assert selector == {"app": "web"}
    endpoints = kubectl.json("get", "endpoints", "storefront", "-n", "shop")
    assert sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or []) == 2
    book = open_store(str(store))
    try:
        writes = [(r.subject, r.result) for r in book.audit(kind="mutation")]
    finally:
        book.close()
    assert writes == [("Service shop/storefront", "applied")]
