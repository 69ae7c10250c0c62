"""What people ask to put beside a workload, each in three phrasings (terse, chatty, a typo in
the name), carried out through policy, a dry run, the gated write and validation, and checked on
the objects the API server holds afterwards: a Service, a disruption budget, an autoscaler, a
network policy, an Ingress route."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.changes import Crew

Check = Callable[[Crew, int], None]


def _get(crew: Crew, kind: str, name: str, namespace: str = "staging") -> dict[str, Any]:
    return dict(crew.kubectl.json("get", kind, name, "-n", namespace))


def _service(crew: Crew, number: int) -> None:
    name, port = [("web", 80), ("web-public", 8080), ("web-np", 9090)][number]
    service = _get(crew, "service", name)
    assert service["spec"]["selector"] == {"app": "web"}
    assert service["spec"]["ports"][0]["port"] == port
    assert service["spec"]["type"] == ["ClusterIP", "LoadBalancer", "NodePort"][number]
    endpoints = _get(crew, "endpoints", name)
    assert sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or []) == 2


def _budget(crew: Crew, number: int) -> None:
    spec = _get(crew, "pdb", ["web-pdb", "web-pdb", "web-pdb"][number])["spec"]
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert [{"minAvailable": 1}, {"maxUnavailable": 1}, {"maxUnavailable": "50%"}][number] == {
        k: v for k, v in spec.items() if k in ("minAvailable", "maxUnavailable")
    }


def _autoscaler(crew: Crew, number: int) -> None:
    spec = _get(crew, "hpa", "web")["spec"]
    wanted = [(2, 5, 70), (2, 8, 80), (3, 6, 60)][number]
    assert (spec["minReplicas"], spec["maxReplicas"]) == wanted[:2]
    assert spec["metrics"][0]["resource"]["target"]["averageUtilization"] == wanted[2]
    assert spec["scaleTargetRef"]["name"] == "web"


CASES = [
    pytest.param(
        ["expose web on port 80",
         "hey, could you make the web deployment reachable from outside as web-public on port "
         "8080?",
         "expose wbe as a NodePort service called web-np on port 9090"],
        _service, id="expose",
    ),
    pytest.param(
        ["add a pdb to web with min available 1",
         "please make sure web may lose at most one pod at a time during maintenance",
         "web should keep at most 50% unavailable during drains"],
        _budget, id="disruption-budget",
    ),
    pytest.param(
        ["autoscale web between 2 and 5 at 70% cpu",
         "could you please add an HPA to the web deployment, max 8 replicas, target 80% CPU?",
         "kubectl autoscale deploy wbe --min=3 --max=6 --cpu-percent=60"],
        _autoscaler, id="autoscaler",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("asked", "check"), CASES)
def test_what_is_put_beside_a_workload_is_there_as_asked(
    crew: Crew, asked: list[str], check: Check
) -> None:
    for number, text in enumerate(asked):
        outcome = crew.ask(text, thread=f"t{number}")
        assert outcome.data.get("outcome") == "done", (text, outcome.answer)
        check(crew, number)
    assert all(m.startswith("applied: ") for m in crew.mutations()), crew.mutations()


def _apply_api(crew: Crew) -> None:
    crew.kubectl("apply", "-f", "-", input=API)
    crew.kubectl("rollout", "status", "deploy/api", "-n", "staging", "--timeout=60s")


API = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: staging}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: api, image: nginx:1.27, ports: [{containerPort: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: front, namespace: staging}
spec:
  selector: {app: nothing}
  ports: [{port: 80, targetPort: 80}]
"""


def test_network_policies_between_workloads(crew: Crew) -> None:
    _apply_api(crew)
    done = crew.ask("only web may reach api in staging")
    assert done.data["outcome"] == "done", done.answer
    spec = _get(crew, "networkpolicy", "api-allow-ingress")["spec"]
    assert spec["podSelector"] == {"matchLabels": {"app": "api"}}
    assert spec["policyTypes"] == ["Ingress"]
    assert spec["ingress"] == [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}]

    done = crew.ask("please block all incoming traffic in staging", thread="2")
    assert done.data["outcome"] == "done", done.answer
    spec = _get(crew, "networkpolicy", "default-deny-ingress")["spec"]
    assert spec["podSelector"] == {} and spec["policyTypes"] == ["Ingress"]
    assert not spec.get("ingress")

    done = crew.ask("wbe may only talk to api and DNS in staging", thread="3")
    assert done.data["outcome"] == "done", done.answer
    spec = _get(crew, "networkpolicy", "web-allow-egress")["spec"]
    assert spec["podSelector"] == {"matchLabels": {"app": "web"}}
    assert spec["policyTypes"] == ["Egress"]
    assert {"to": [{"podSelector": {"matchLabels": {"app": "api"}}}]} in spec["egress"]
    assert {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]} in spec[
        "egress"
    ]


def test_a_service_is_pointed_at_other_pods_and_routed_to(crew: Crew) -> None:
    _apply_api(crew)
    done = crew.ask("point the front service at the web deployment")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "service", "front")["spec"]["selector"] == {"app": "web"}
    assert "routes to 2 ready pod(s)" in done.answer

    done = crew.ask("could you switch the front service over to the api pods?", thread="2")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "service", "front")["spec"]["selector"] == {"app": "api"}

    done = crew.ask("create an ingress for the frnt service at shop.example.com/app", thread="3")
    assert done.data["outcome"] == "done", done.answer
    rule = _get(crew, "ingress", "front")["spec"]["rules"][0]
    assert rule["host"] == "shop.example.com"
    assert rule["http"]["paths"][0]["path"] == "/app"
    assert rule["http"]["paths"][0]["backend"]["service"] == {"name": "front",
                                                              "port": {"number": 80}}  # fmt: skip


def test_a_services_type_is_changed_in_words(crew: Crew) -> None:
    _apply_api(crew)
    crew.kubectl("patch", "service", "front", "-n", "staging", "-p",
                 '{"spec": {"selector": {"app": "api"}}}')  # fmt: skip
    done = crew.ask("set the service type of front to NodePort")
    assert done.data["outcome"] == "done", done.answer
    service = _get(crew, "service", "front")
    assert service["spec"]["type"] == "NodePort"
    assert 30000 <= service["spec"]["ports"][0]["nodePort"] <= 32767
    assert service["spec"]["selector"] == {"app": "api"}  # nothing else moved

    done = crew.ask("make the front service a ClusterIP again", thread="2")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "service", "front")["spec"]["type"] == "ClusterIP"


def test_a_new_object_beside_no_workload_asks_instead_of_guessing(crew: Crew) -> None:
    outcome = crew.ask("only frontend may reach web in staging")
    assert outcome.clarifying and "frontend" in outcome.answer, outcome.answer
    assert crew.mutations() == []
    outcome = crew.ask("expose web", thread="2")  # web declares no container port
    assert outcome.clarifying and "on which port" in outcome.answer, outcome.answer
    assert crew.mutations() == []
