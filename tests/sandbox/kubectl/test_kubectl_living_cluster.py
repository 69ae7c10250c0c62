"""Real kubectl against a living sandbox: rollouts, drain with a PDB, top, wait, logs, events.

The sandbox's controllers and kubelet run on their own, on a clock ten times faster than life;
kubectl sees only the API, as on a real cluster.
"""

from __future__ import annotations

import json

import pytest

from tests.sandbox.kubectl.suite import deployment
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl


def test_rollout_status_history_undo_restart_pause_resume(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    k("apply", "-n", namespace, "-f", "-", input=deployment("web"))
    out = k("rollout", "status", "-n", namespace, "deploy/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out

    k("set", "image", "-n", namespace, "deploy/web", "web=nginx:1.26")
    k("rollout", "status", "-n", namespace, "deploy/web", "--timeout=60s")
    history = k("rollout", "history", "-n", namespace, "deploy/web")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    k("rollout", "undo", "-n", namespace, "deploy/web")
    k("rollout", "status", "-n", namespace, "deploy/web", "--timeout=60s")
    live = k.json("get", "-n", namespace, "deploy/web")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert live["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"

    k("rollout", "restart", "-n", namespace, "deploy/web")
    k("rollout", "status", "-n", namespace, "deploy/web", "--timeout=60s")
    assert "4" in k("rollout", "history", "-n", namespace, "deploy/web").split()

    k("rollout", "pause", "-n", namespace, "deploy/web")
    k("set", "image", "-n", namespace, "deploy/web", "web=nginx:1.25")

    def paused() -> bool:
        status = k.json("get", "-n", namespace, "deploy/web")["status"]
        conditions = {c["type"]: c for c in status.get("conditions", [])}
        return conditions.get("Progressing", {}).get("reason") == "DeploymentPaused"

    eventually(paused, what="Progressing reason DeploymentPaused")
    assert "nginx:1.25" not in json.dumps(k.json("get", "pods", "-n", namespace, "-l", "app=web"))
    k("rollout", "resume", "-n", namespace, "deploy/web")
    k("rollout", "status", "-n", namespace, "deploy/web", "--timeout=60s")
    images = {
        p["spec"]["containers"][0]["image"]
        for p in k.json("get", "pods", "-n", namespace, "-l", "app=web")["items"]
        if not p["metadata"].get("deletionTimestamp")
    }
    assert images == {"nginx:1.25"}


def test_wait_for_available_and_top_pods_and_nodes(shared_kubectl: Kubectl, namespace: str) -> None:
    k = shared_kubectl
    k("apply", "-n", namespace, "-f", "-", input=deployment("api", replicas=2))
    k("wait", "-n", namespace, "--for=condition=Available", "deploy/api", "--timeout=60s")

    def top_pods() -> str:
        done = k.run("top", "pods", "-n", namespace, "--no-headers", check=False)
        return done.stdout if done.returncode == 0 and done.stdout.count("api-") == 2 else ""

    rows = eventually(top_pods, what="kubectl top pods lists both pods")
    for row in rows.splitlines():
        name, cpu, memory = row.split()
        assert name.startswith("api-") and cpu.endswith("m") and memory.endswith("Mi")
    nodes = k("top", "nodes", "--no-headers").splitlines()
    assert len(nodes) == 3 and all(line.split()[2].endswith("%") for line in nodes)


def test_logs_previous_of_a_crashing_pod(shared_kubectl: Kubectl, namespace: str) -> None:
    k = shared_kubectl
    k(
        "run",
        "crasher",
        "-n",
        namespace,
        "--image=busybox:1.36",
        "--restart=Always",
        "--command",
        "--",
        "sh",
        "-c",
        "echo starting up; echo config missing; exit 3",
    )

    def restarted() -> bool:
        pod = k.json("get", "pod", "-n", namespace, "crasher")
        statuses = pod["status"].get("containerStatuses") or [{}]
        return int(statuses[0].get("restartCount", 0)) >= 2

    eventually(restarted, what="the container restarted twice")
    previous = k("logs", "-n", namespace, "crasher", "--previous")
    assert "starting up" in previous and "config missing" in previous
    pod = k.json("get", "pod", "-n", namespace, "crasher")
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert last["exitCode"] == 3 and last["reason"] == "Error"


def test_events_sorted_show_a_pods_life(shared_kubectl: Kubectl, namespace: str) -> None:
    k = shared_kubectl
    k("run", "one", "-n", namespace, "--image=nginx:1.27")
    k("wait", "-n", namespace, "--for=condition=Ready", "pod/one", "--timeout=60s")
    out = k("get", "events", "-n", namespace, "--sort-by=.lastTimestamp", "-o", "json")
    reasons = [e["reason"] for e in json.loads(out)["items"]]
    # (no Pulling when another test already pulled the image onto that node)
    for earlier, later in (("Scheduled", "Pulled"), ("Pulled", "Created"), ("Created", "Started")):
        assert reasons.index(earlier) <= reasons.index(later), reasons
    table = k("get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
    assert f"Successfully assigned {namespace}/one to node-" in table
    assert "Started container one" in table


def test_pending_pod_describe_shows_the_scheduler_reason(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    k(
        "run",
        "huge",
        "-n",
        namespace,
        "--image=nginx:1.27",
        "--overrides",
        json.dumps(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "huge",
                            "image": "nginx:1.27",
                            "resources": {"requests": {"cpu": "64"}},
                        }
                    ]
                }
            }
        ),
    )

    def described() -> str:
        text = k("describe", "pod", "-n", namespace, "huge")
        return text if "FailedScheduling" in text else ""

    text = eventually(described, what="a FailedScheduling event")
    assert "0/3 nodes are available: 3 Insufficient cpu." in text
    assert k.json("get", "pod", "-n", namespace, "huge")["status"]["phase"] == "Pending"


def test_drain_respects_a_pdb_then_succeeds_when_the_budget_allows(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    anti = """
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: db}}
            topologyKey: kubernetes.io/hostname"""
    k("apply", "-n", namespace, "-f", "-", input=deployment("db", replicas=2, extra=anti))
    k("create", "pdb", "db", "-n", namespace, "--selector=app=db", "--min-available=2")
    k("rollout", "status", "-n", namespace, "deploy/db", "--timeout=60s")
    eventually(
        lambda: (
            k.json("get", "pdb", "-n", namespace, "db").get("status", {}).get("currentHealthy") == 2
        ),
        what="the PDB sees two healthy pods",
    )
    node = k.json("get", "pods", "-n", namespace, "-l", "app=db")["items"][0]["spec"]["nodeName"]
    blocked = k.fails(
        "drain",
        node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=4s",
        "--pod-selector=app=db",
    )
    assert "disruption budget" in blocked.stderr
    k("patch", "pdb", "db", "-n", namespace, "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    eventually(
        lambda: (
            k.json("get", "pdb", "-n", namespace, "db")["status"].get("disruptionsAllowed") == 1
        ),
        what="the PDB allows one disruption",
    )
    k("drain", node, "--ignore-daemonsets", "--timeout=60s", "--pod-selector=app=db")
    try:

        def moved() -> bool:
            pods = k.json("get", "pods", "-n", namespace, "-l", "app=db")["items"]
            live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
            return all(p["spec"].get("nodeName") not in (None, node) for p in live)

        eventually(moved, what="no db pod left on the drained node")
    finally:
        k("uncordon", node)
