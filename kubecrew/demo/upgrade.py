"""Scene 5, the upgrade: a person asks the Cluster Operator to take the cluster one Kubernetes
minor version up, on node pools the sandbox runs through Cluster API.

The stage has no node of its own: a control plane (KubeadmControlPlane) at v1.37.0, a `workers`
pool of two machines running web (three replicas, a budget of two) and a `gpu` pool of one
machine running a training Job. The person asks whether the cluster is ready, then for the
upgrade; the crew plans it and asks back; on "yes" it moves the control plane, then the canary
pool (gpu), where the training Job holds its node until the trainer checkpoints; "continue the
upgrade" takes the workers pool. A sampler reads the web budget the whole time, and the scene
checks what the crew says against the cluster: every node at v1.38, `kubectl version` too, and
never fewer healthy web pods than the budget requires.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kubecrew.demo.shop import OWNERSHIP
from kubecrew.demo.turns import OPERATOR, check, operator_ask
from kubecrew.demo.world import World

PERSON = "You"
THREAD = "upgrade"
POOLS = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: prod, namespace: default}
spec:
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    name: prod-control-plane
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: prod-control-plane, namespace: default}
spec:
  replicas: 1
  version: v1.37.0
  machineTemplate:
    infrastructureRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: SandboxMachineTemplate
      name: standard
  kubeadmConfigSpec: {}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: SandboxMachineTemplate
metadata: {name: standard, namespace: default}
spec: {template: {spec: {provisionSeconds: 20, cpu: "4", memory: 16Gi}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: SandboxMachineTemplate
metadata: {name: gpu, namespace: default}
spec:
  template:
    spec:
      provisionSeconds: 20
      cpu: "8"
      memory: 32Gi
      gpus: 1
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
"""
POOL = """\
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: %(name)s, namespace: default}
spec:
  clusterName: prod
  replicas: %(replicas)d
  template:
    spec:
      clusterName: prod
      version: v1.37.0
      bootstrap: {dataSecretName: %(name)s-bootstrap}
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: SandboxMachineTemplate
        name: %(template)s
"""
WORKLOADS = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubecrew.io/team: shop}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {node.cluster.x-k8s.io/pool: workers}
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ml, labels: {kubecrew.io/team: ml}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: train
        image: "busybox:1.36"
        command: [sleep, "100000"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def upgrade(world: World) -> None:
    say, tour, narrator = world.narrator.say, world.tour, world.narrator
    narrator.step("A cluster of two Cluster API node pools at v1.37.0: workers (2) and gpu (1)")
    world.write_policies(ownership=OWNERSHIP)
    pools = POOLS + POOL % {"name": "workers", "replicas": 2, "template": "standard"}
    pools += POOL % {"name": "gpu", "replicas": 1, "template": "gpu"}
    tour.run("apply", "-f", str(world.manifest("pools", pools)))
    world.wait(lambda: len(_ready_nodes(world)) == 3, what="the pools' three nodes Ready")
    tour.run("apply", "-f", str(world.manifest("workloads", WORKLOADS)))
    world.wait(lambda: _healthy_web(world) == 3, what="web's three pods healthy")
    world.wait(lambda: _training_node(world), what="the training pod running")
    old_gpu = _training_node(world)
    tour.run("get", "nodes", "-L", "node.cluster.x-k8s.io/pool")

    narrator.step("Are we ready? (a reading: nothing changes)")
    ready = operator_ask(world, "are we ready to upgrade to 1.38?")
    say(OPERATOR, "says", ready.answer)
    check(ready.answer.startswith("Ready to upgrade v1.37.0 to v1.38"), "it found a blocker")

    narrator.step("The upgrade, asked for: planned and asked back")
    say(PERSON, "asks", "upgrade the cluster to 1.38")
    planned = operator_ask(world, "upgrade the cluster to 1.38", thread=THREAD)
    say(OPERATOR, "says", planned.answer)
    check("Reply 'yes' to start" in planned.answer, "the upgrade was not asked back")

    def web_budget() -> dict[str, Any]:
        return world.kubectl_json("get", "pdb", "web", "-n", "shop").get("status") or {}

    with budget_samples(web_budget) as seen:
        narrator.step("Yes: the control plane, then the canary pool (gpu)")
        say(PERSON, "says", "yes")
        held = operator_ask(world, "yes", thread=THREAD)
        say(OPERATOR, "says", held.answer)
        check(_served_minor(world) == "38", "the control plane is not at v1.38")
        check(_training_node(world) == old_gpu, "the training pod was moved mid-run")
        check("to checkpoint" in held.answer, "the upgrade did not wait for the checkpoint")

        narrator.step("The trainer writes its checkpoint (the demo sets the annotation it would)")
        stamp = datetime.now(UTC).isoformat()
        tour.run("annotate", "job", "train", "-n", "ml", f"kubecrew.io/checkpointed-at={stamp}")

        narrator.step("Continue: the gpu pool finishes, then the workers pool")
        say(PERSON, "asks", "continue the upgrade")
        done = operator_ask(world, "continue the upgrade")
        say(OPERATOR, "says", done.answer)
    check(done.answer.startswith("The cluster is upgraded to v1.38.0"), "not upgraded")
    kubelets = {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"]
                for n in world.kubectl_json("get", "nodes")["items"]}  # fmt: skip
    check(set(kubelets.values()) == {"v1.38.0"}, f"kubelets: {kubelets}")
    lowest = min(seen, default=(0, 0))
    check(bool(seen) and all(h >= d for h, d in seen), f"web budget broken: {lowest}")
    narrator.detail(
        f"the web budget was read {len(seen)} times: never fewer than {lowest[0]} healthy "
        f"pods ({lowest[1]} required)"
    )
    tour.run("get", "nodes", "-L", "node.cluster.x-k8s.io/pool")
    tour.run("get", "machinedeployments,kubeadmcontrolplanes")
    tour.run("version")


@contextmanager
def budget_samples(read: Callable[[], dict[str, Any]]) -> Iterator[list[tuple[int, int]]]:
    """A budget's (healthy, required), from `read` (its status) every half second until the
    block ends; shared with the upgrade's tests, which sample the same way."""
    seen: list[tuple[int, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.5):
            status = read()
            if "currentHealthy" in status:
                seen.append((int(status["currentHealthy"]), int(status["desiredHealthy"])))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


def _ready_nodes(world: World) -> list[dict[str, Any]]:
    return [
        n
        for n in world.kubectl_json("get", "nodes")["items"]
        if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    ]


def _healthy_web(world: World) -> int:
    status = world.kubectl_json("get", "deployment", "web", "-n", "shop")["status"]
    return int(status.get("availableReplicas") or 0)


def _training_node(world: World) -> str:
    pods = world.kubectl_json("get", "pods", "-n", "ml", "-l", "job-name=train")["items"]
    running = [p for p in pods if p["status"].get("phase") == "Running"]
    return str(running[0]["spec"].get("nodeName", "")) if running else ""


def _served_minor(world: World) -> str:
    return str(world.kubectl_json("version")["serverVersion"]["minor"])
