"""Faults a user meets in real clusters, seen through real kubectl on a living sandbox.

Each test breaks something the way people do (a typo in an image, a bad command, a leak, a
missing ConfigMap, a dead node, a Service selecting nothing) and checks that the sandbox shows it
exactly where Kubernetes would: container states, restart counts, events, taints, endpoints,
and the Prometheus series.
"""

from __future__ import annotations

import re
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from sandbox.server import Sandbox
from tests.sandbox.kubectl.suite import deployment
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl


def waiting_reason(k: Kubectl, namespace: str, pod: str) -> str:
    status = k.json("get", "pod", "-n", namespace, pod)["status"]
    state = ((status.get("containerStatuses") or [{}])[0]).get("state") or {}
    return str((state.get("waiting") or {}).get("reason", ""))


def pods_of(k: Kubectl, namespace: str, app: str) -> list[dict[str, Any]]:
    items = k.json("get", "pods", "-n", namespace, "-l", f"app={app}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def test_image_typo_backs_off_until_set_image_fixes_it(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    k("apply", "-n", namespace, "-f", "-", input=deployment("shop", image="ngnix:1.27", replicas=2))

    def backing_off() -> bool:
        pods = pods_of(k, namespace, "shop")
        return len(pods) == 2 and all(
            waiting_reason(k, namespace, p["metadata"]["name"]) == "ImagePullBackOff" for p in pods
        )

    eventually(backing_off, what="both pods in ImagePullBackOff")
    events = k("get", "events", "-n", namespace, "--field-selector=reason=Failed")
    assert 'Failed to pull image "ngnix:1.27"' in events
    k("set", "image", "-n", namespace, "deploy/shop", "web=nginx:1.27")
    k("wait", "-n", namespace, "--for=condition=Available", "deploy/shop", "--timeout=60s")
    k("rollout", "status", "-n", namespace, "deploy/shop", "--timeout=60s")


def test_bad_command_crash_loops_with_rising_restarts(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    k("run", "bad", "-n", namespace, "--image=nginx:1.27", "--command", "--", "nginxx", "-g")
    eventually(
        lambda: waiting_reason(k, namespace, "bad") == "CrashLoopBackOff",
        what="CrashLoopBackOff",
    )

    def restarts() -> int:
        pod = k.json("get", "pod", "-n", namespace, "bad")
        return int(pod["status"]["containerStatuses"][0]["restartCount"])

    first = restarts()
    eventually(lambda: restarts() > first, what="the restart count rises")
    assert "Back-off restarting failed container" in k("describe", "pod", "-n", namespace, "bad")
    row = k("get", "pod", "-n", namespace, "bad", "--no-headers").split()
    assert row[2] in ("CrashLoopBackOff", "Error", "StartError", "RunContainerError")


def test_memory_leak_is_oom_killed(shared_kubectl: Kubectl, namespace: str) -> None:
    k = shared_kubectl
    manifest = deployment("leaky", replicas=1)
    manifest = manifest.replace(
        "    metadata: {labels: {app: leaky}}",
        "    metadata:\n      labels: {app: leaky}\n"
        "      annotations: {sandbox.kubecrew.io/profile: leaky}",
    )
    k("apply", "-n", namespace, "-f", "-", input=manifest)

    def oom_killed() -> bool:
        pods = pods_of(k, namespace, "leaky")
        if not pods:
            return False
        last = (pods[0]["status"].get("containerStatuses") or [{}])[0].get("lastState") or {}
        return (last.get("terminated") or {}).get("reason") == "OOMKilled"

    eventually(oom_killed, timeout=90, what="the leaking container is OOMKilled")
    pod = pods_of(k, namespace, "leaky")[0]
    assert pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137


def test_missing_configmap_is_a_config_error_until_it_exists(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "needs-config"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "env": [
                        {
                            "name": "MODE",
                            "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "mode"}},
                        }
                    ],
                }
            ]
        },
    }
    k("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(pod))
    eventually(
        lambda: waiting_reason(k, namespace, "needs-config") == "CreateContainerConfigError",
        what="CreateContainerConfigError",
    )
    assert 'configmap "app-config" not found' in k(
        "describe", "pod", "-n", namespace, "needs-config"
    )
    k("create", "configmap", "app-config", "-n", namespace, "--from-literal=mode=fast")
    k("wait", "-n", namespace, "--for=condition=Ready", "pod/needs-config", "--timeout=60s")


def test_selector_mismatch_leaves_no_endpoints_and_all_requests_fail(
    shared_kubectl: Kubectl, shared_sandbox: Sandbox, namespace: str
) -> None:
    k = shared_kubectl
    k("apply", "-n", namespace, "-f", "-", input=deployment("cart", replicas=2))
    k("wait", "-n", namespace, "--for=condition=Available", "deploy/cart", "--timeout=60s")
    service = {  # the selector has a typo: no pod is labelled app=kart
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "cart"},
        "spec": {"selector": {"app": "kart"}, "ports": [{"port": 80, "targetPort": 80}]},
    }
    k("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(service))

    def written() -> str:
        done = k.run("get", "endpoints", "-n", namespace, "cart", "-o", "json", check=False)
        return done.stdout if done.returncode == 0 else ""

    endpoints = eventually(written, what="the endpoint controller writes the Endpoints")
    assert not yaml.safe_load(endpoints).get("subsets")

    config = yaml.safe_load(Path(shared_sandbox.kubeconfig).read_text())
    token = config["users"][0]["user"]["token"]
    ca = shared_sandbox.kubeconfig.parent / "tls" / "ca.crt"

    def series() -> dict[str, float]:
        text = httpx.get(
            f"{shared_sandbox.url}/kubecrew/v1/metrics",
            headers={"Authorization": f"Bearer {token}"},
            verify=ssl.create_default_context(cafile=str(ca)),
        ).text
        found = {}
        pattern = r'^http_requests_total\{([^}]*service="cart"[^}]*)\} (\S+)$'
        for labels, value in re.findall(pattern, text, flags=re.M):
            if f'namespace="{namespace}"' in labels:
                code = re.search(r'code="(\d+)"', labels)
                assert code is not None
                found[code.group(1)] = float(value)
        return found if sum(found.values()) > 0 else {}

    codes = eventually(series, what="requests counted for the cart service")
    assert sum(v for c, v in codes.items() if c.startswith("5")) == sum(codes.values())


def test_dead_node_is_tainted_and_its_pods_move(sandbox: Sandbox, kubectl: Kubectl) -> None:
    k = kubectl
    tolerate = """
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute,
         tolerationSeconds: 5}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
         tolerationSeconds: 5}"""
    k("apply", "-f", "-", input=deployment("spread", replicas=6, extra=tolerate))
    k("rollout", "status", "deploy/spread", "--timeout=60s")
    victim = pods_of(k, "default", "spread")[0]["spec"]["nodeName"]
    sandbox.call(lambda cluster: cluster.faults.add({"kind": "node-heartbeat", "node": victim}))

    def tainted() -> bool:
        taints = k.json("get", "node", victim)["spec"].get("taints") or []
        return any(t["key"] == "node.kubernetes.io/unreachable" for t in taints)

    eventually(tainted, what="the unreachable taint")
    ready = {c["type"]: c["status"] for c in k.json("get", "node", victim)["status"]["conditions"]}
    assert ready["Ready"] == "Unknown"

    def moved() -> bool:
        pods = pods_of(k, "default", "spread")
        return len(pods) == 6 and all(p["spec"].get("nodeName") != victim for p in pods)

    eventually(moved, what="six pods running on the other nodes")
    k("rollout", "status", "deploy/spread", "--timeout=60s")
    evicted = k("get", "events", "--field-selector=reason=TaintManagerEviction")
    assert "Marking for deletion Pod default/spread-" in evicted
