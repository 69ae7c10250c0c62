"""The Cluster Operator's fleet-move world, as two clusters see it: `BUSY` (west: 4 api
replicas of 1.2 CPU on a 4-CPU node, one left pending) and `IDLE` (east: the same api at one
replica), and what the tests read of api afterwards through a cluster's kubectl."""

from __future__ import annotations

from kubecrew.demo.shop import deployment, manifests, namespace
from tests.support.kubectl import Kubectl

BUSY = manifests(namespace(), deployment("api", replicas=4, cpu="1200m", memory="256Mi"))
IDLE = manifests(namespace(), deployment("api", replicas=1, cpu="1200m", memory="256Mi"))


def replicas(kubectl: Kubectl) -> int:
    return int(kubectl("get", "deploy/api", "-n", "shop", "-o", "jsonpath={.spec.replicas}"))


def ready(kubectl: Kubectl) -> int:
    status = kubectl.json("get", "deploy", "api", "-n", "shop")["status"]
    return int(status.get("readyReplicas") or 0)


def pending(kubectl: Kubectl) -> int:
    pods = kubectl.json("get", "pods", "-n", "shop")["items"]
    return sum(1 for p in pods if not p["spec"].get("nodeName"))
