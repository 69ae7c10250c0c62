"""Every fault the sandbox can inject, diagnosed and fixed through the kube server's MCP tools.

Each test gives a fresh sandbox one fault (`cluster.faults.add`, as scenarios and the CLI do),
asks `diagnose` for the finding and its evidence, applies the top `recommend`ed fix through the
write tools and waits for the workload to be healthy: node faults are cordoned and drained and
the pods come up elsewhere; an image deleted from the registry, a leak, a crash and error logs
that came with a rollout are rolled back to the revision before; a failing API server leaves the
diagnosis partial, saying what it could not read, never wrong.

The `error-rate` and `slow` shortcut faults show where a real application shows them: an app
failing a share of its requests logs that share as 5xx request lines (the `LogErrors` rule reads
them), and an app slower than a probe's `timeoutSeconds` fails its HTTP probes by timeout, so it
is taken out of service and, under a liveness probe, killed and restarted into a crash loop whose
evidence names the timeout. Each is keyed on the bad revision's image tag, as a bug that shipped
in that build is, so the rollback truly escapes it (a label selector would follow the pods back).
An `app-profile` fault may also write the error lines itself, and is diagnosed the same way.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from mcp_servers.kube.diagnosis import logs
from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment, first, rollout, tool
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

NS = "shop"
API = "ghcr.io/kubecrew/shop-api"
RESOURCES = {"requests": {"cpu": "50m", "memory": "200Mi"}, "limits": {"memory": "256Mi"}}


@pytest.fixture
def doctor(sandbox: Sandbox) -> Doctor:
    return Doctor(sandbox)


@pytest.fixture
def shop(kubectl: Kubectl) -> Kubectl:
    kubectl("create", "namespace", NS)
    return kubectl


def fault(sandbox: Sandbox, spec: dict[str, Any]) -> None:
    sandbox.call(lambda cluster: cluster.faults.add(spec))


def api_v1_then(
    shop: Kubectl, sandbox: Sandbox, spec: dict[str, Any] | None, **probes: Any
) -> None:
    """The api Deployment at revision 1 (shop-api 1.0.0, healthy, with `probes`), then `spec`
    injected, then revision 2 rolled out with 1.1.0 (which the fault concerns)."""
    container = {"image": f"{API}:1.0.0", "resources": RESOURCES, **probes}
    shop("apply", "-f", "-", input=deployment("api", container, replicas=2))
    rollout(shop, "api")
    if spec is not None:
        fault(sandbox, spec)
    shop("set", "image", "deployment/api", f"main={API}:1.1.0", "-n", NS)


def pods(shop: Kubectl, app: str) -> list[dict[str, Any]]:
    items = shop.json("get", "pods", "-n", NS, "-l", f"app={app}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def images(shop: Kubectl, app: str) -> set[str]:
    return {c["image"] for p in pods(shop, app) for c in p["spec"]["containers"]}


NODE_FAULTS = [
    pytest.param({"kind": "node-heartbeat"}, "NodeNotReady", id="heartbeat"),
    pytest.param(
        {"kind": "node-condition", "type": "MemoryPressure", "status": "True"},
        "NodeMemoryPressure",
        id="memory-pressure",
    ),
    pytest.param(
        {"kind": "node-condition", "type": "DiskPressure", "status": "True"},
        "NodeDiskPressure",
        id="disk-pressure",
    ),
    pytest.param({"kind": "gpu-fault"}, "NodeConditionFailed", id="gpu"),
]


@pytest.mark.parametrize(("spec", "code"), NODE_FAULTS)
def test_node_fault_is_fixed_by_cordon_and_drain(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor, spec: dict[str, Any], code: str
) -> None:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}, replicas=4))
    rollout(shop, "web")
    victim = pods(shop, "web")[0]["spec"]["nodeName"]
    fault(sandbox, {**spec, "node": victim})

    finding = doctor.finding(code, namespace=NS)
    assert finding["ref"] == {"kind": "Node", "name": victim, "namespace": ""}
    assert any(e["kind"] == "condition" for e in finding["evidence"])
    web = {"kind": "Deployment", "name": "web", "namespace": NS}
    assert web in finding["related"]  # the workloads on the node are named
    assert code in doctor.codes(namespace=NS, kind="deployment", name="web")

    fix = doctor.fix(code, namespace=NS)
    assert tool(fix) == ["cordon", "drain"]
    assert fix["steps"][1]["arguments"]["node"] == victim
    drained = doctor.apply(fix)[1]
    assert drained["complete"], drained

    def moved() -> bool:
        running = pods(shop, "web")
        return len(running) == 4 and all(p["spec"]["nodeName"] != victim for p in running)

    eventually(moved, what=f"the web pods run on nodes other than {victim}")
    rollout(shop, "web")


def test_image_deleted_from_the_registry_rolls_back_past_every_revision_using_it(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    api_v1_then(shop, sandbox, None)
    rollout(shop, "api")
    fault(sandbox, {"kind": "image-missing", "image": f"{API}:1.1.0"})
    shop("rollout", "restart", "deployment/api", "-n", NS)  # revision 3: new pods must pull

    finding = doctor.finding("ImagePullBackOff", namespace=NS)
    assert finding["ref"]["name"] == "api"
    assert any("not found" in e["text"] for e in finding["evidence"])

    fixes = doctor.fixes("ImagePullBackOff", namespace=NS, kind="deployment", name="api")
    image = fixes[0]["patch"]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"{API}:1.0.0"  # the last image that is not the deleted one
    back = first(fixes, lambda f: tool(f) == ["rollout_undo"])
    # revision 2 runs the deleted tag too: back to revision 1
    assert back["steps"][0]["arguments"]["to_revision"] == 1
    doctor.apply(back)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}


def test_memory_leak_after_a_rollout_is_rolled_back_rather_than_given_more_memory(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    leak = {"kind": "memory-leak", "image": f"{API}:1.1.0", "namespace": NS, "rate": "2Mi"}
    api_v1_then(shop, sandbox, leak)

    finding = doctor.finding("OOMKilled", namespace=NS)
    assert finding["ref"]["name"] == "api"
    assert any("memory grows while it runs" in e["text"] for e in finding["evidence"])
    fixes = doctor.fixes("OOMKilled", namespace=NS)
    assert tool(fixes[0]) == ["rollout_undo"]
    assert fixes[0]["steps"][0]["arguments"]["to_revision"] == 1
    assert any("leak" in why for why in fixes[0]["evidence"])
    bigger = first(fixes, lambda f: tool(f) == ["patch"])  # offered, ranked below
    assert "killed again later" in bigger["expected_effect"]

    doctor.apply(fixes[0])
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}
    eventually(lambda: outlived(shop, "api", seconds=45), what="api pods outlive the leak")


def outlived(shop: Kubectl, app: str, *, seconds: float) -> bool:
    """Every pod of `app` has run `seconds` (sandbox time, as metrics.k8s.io samples it) since
    its container started, without a restart: longer than the leaking revision lived (38 s:
    from 180Mi at 2Mi/s to its 256Mi limit)."""
    path = f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods"
    sampled = {
        m["metadata"]["name"]: m["timestamp"]
        for m in json.loads(shop("get", "--raw", path))["items"]
    }
    running = pods(shop, app)
    for pod in running:
        status = pod["status"]["containerStatuses"][0]
        started = (status["state"].get("running") or {}).get("startedAt")
        if status["restartCount"] or not started or pod["metadata"]["name"] not in sampled:
            return False
        lived = datetime.fromisoformat(sampled[pod["metadata"]["name"]]) - datetime.fromisoformat(
            started
        )
        if lived.total_seconds() < seconds:
            return False
    return bool(running)


def test_crash_loop_after_a_rollout_is_rolled_back_with_the_log_evidence(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    crash = {
        "kind": "app-profile",
        "image": f"{API}:1.1.0",
        "changes": {"runs_forever": False, "run_seconds": 3, "exit_code": 2},
    }
    api_v1_then(shop, sandbox, crash)

    finding = doctor.finding("CrashLoopBackOff", namespace=NS)
    assert finding["ref"]["name"] == "api"
    logs = [e["text"] for e in finding["evidence"] if e["kind"] == "log"]
    assert any("database connection refused" in line for line in logs)

    fix = doctor.fix("CrashLoopBackOff", namespace=NS, kind="deployment", name="api")
    assert tool(fix) == ["rollout_undo"] and fix["steps"][0]["arguments"]["to_revision"] == 1
    assert any("database connection refused" in why for why in fix["evidence"])
    doctor.apply(fix)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}


def test_errors_in_the_logs_of_ready_pods_after_a_rollout_are_rolled_back(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    failing = '{"level":"error","msg":"GET /api/products 500","error":"db timeout"}'
    errors = {
        "kind": "app-profile",
        "image": f"{API}:1.1.0",
        "changes": {"error_rate": 0.5, "log_lines": [failing, failing, '{"level":"info"}']},
    }
    api_v1_then(shop, sandbox, errors)
    rollout(shop, "api")

    finding = doctor.finding("LogErrors", namespace=NS)
    assert finding["ref"]["name"] == "api"
    assert any(failing in e["text"] for e in finding["evidence"] if e["kind"] == "log")

    fix = doctor.fix("LogErrors", namespace=NS)
    assert tool(fix) == ["rollout_undo"] and fix["steps"][0]["arguments"]["to_revision"] == 1
    doctor.apply(fix)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}
    assert "LogErrors" not in doctor.codes(namespace=NS, kind="deployment", name="api")


def test_error_rate_fault_after_a_rollout_is_read_from_the_logs_and_rolled_back(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    errors = {"kind": "error-rate", "image": f"{API}:1.1.0", "namespace": NS, "rate": 0.5}
    api_v1_then(shop, sandbox, errors)
    rollout(shop, "api")  # failing requests fail no probe: the rollout completes

    finding = doctor.finding("LogErrors", namespace=NS)
    assert finding["ref"]["name"] == "api"
    logged = [e["text"] for e in finding["evidence"] if e["kind"] == "log"]
    assert logged and all('"level":"error"' in line and " 500" in line for line in logged)

    fix = doctor.fix("LogErrors", namespace=NS)
    assert tool(fix) == ["rollout_undo"] and fix["steps"][0]["arguments"]["to_revision"] == 1
    doctor.apply(fix)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}
    eventually(
        lambda: "LogErrors" not in doctor.codes(namespace=NS, kind="deployment", name="api"),
        what="the rolled-back api logs no errors",
    )


HEALTHZ = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5}


def test_slow_fault_after_a_rollout_fails_the_probes_and_is_rolled_back(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    slow = {"kind": "slow", "image": f"{API}:1.1.0", "namespace": NS, "latency_ms": 1500}
    api_v1_then(shop, sandbox, slow, readinessProbe=HEALTHZ, livenessProbe=HEALTHZ)

    probing = doctor.finding("ProbeFailing", namespace=NS)  # first: never Ready
    assert probing["ref"]["name"] == "api"
    assert "slower than the probe's timeoutSeconds (1s)" in probing["summary"]
    assert any("context deadline exceeded" in e["text"] for e in probing["evidence"])

    def crash_looping() -> bool:  # then: killed by its liveness probe, again and again
        restarts = [
            s["restartCount"]
            for p in pods(shop, "api")
            for s in p["status"].get("containerStatuses") or []
        ]
        return max(restarts, default=0) >= 3

    eventually(crash_looping, what="the slow api pod restarted three times")
    finding = doctor.finding("CrashLoopBackOff", namespace=NS)
    assert finding["ref"]["name"] == "api"
    texts = [e["text"] for e in finding["evidence"]]
    assert any(t.startswith("Liveness probe failed:") and "deadline" in t for t in texts)
    assert any("failed liveness probe, will be restarted" in t for t in texts)

    fix = doctor.fix("CrashLoopBackOff", namespace=NS, kind="deployment", name="api")
    assert tool(fix) == ["rollout_undo"] and fix["steps"][0]["arguments"]["to_revision"] == 1
    doctor.apply(fix)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}
    eventually(
        lambda: not {"ProbeFailing", "CrashLoopBackOff"} & doctor.codes(namespace=NS),
        what="the rolled-back api passes its probes",
    )


def test_slow_fault_with_readiness_only_is_rolled_back_from_the_probe_finding(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    slow = {"kind": "slow", "image": f"{API}:1.1.0", "namespace": NS, "latency_ms": 1500}
    api_v1_then(shop, sandbox, slow, readinessProbe=HEALTHZ)
    assert doctor.finding("ProbeFailing", namespace=NS)["ref"]["name"] == "api"
    fix = doctor.fix("ProbeFailing", namespace=NS)
    assert tool(fix) == ["rollout_undo"] and fix["steps"][0]["arguments"]["to_revision"] == 1
    doctor.apply(fix)
    rollout(shop, "api")
    assert images(shop, "api") == {f"{API}:1.0.0"}
    eventually(
        lambda: "ProbeFailing" not in doctor.codes(namespace=NS),
        what="the rolled-back api passes its readiness probe",
    )


def test_a_failing_api_server_leaves_the_diagnosis_partial_never_wrong(
    shop: Kubectl, sandbox: Sandbox, doctor: Doctor
) -> None:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    shop("apply", "-f", "-", input=json.dumps(service))
    shop("set", "image", "deployment/web", "main=nginx:1.27-typo", "-n", NS)
    doctor.finding("ImagePullBackOff", namespace=NS)
    fault(sandbox, {"kind": "api", "error_rate": 0.5, "throttle_rate": 0.1, "timeout_rate": 0.1})

    def partial_yet_right() -> bool:
        answer = doctor.ok("diagnose", namespace=NS)  # never an error
        codes = {f["code"] for f in answer["findings"]}
        unread = {n.split()[0]: n for n in answer["partial"] if " not read: HTTP " in n}
        assert all(("HTTP 500" in n or "HTTP 429" in n or "HTTP 504" in n) for n in unread.values())
        if "pods" in unread:  # no pod was seen, which proves nothing about the selector
            assert "ServiceSelectorNoMatch" not in codes
        return bool(unread) and "ImagePullBackOff" in codes

    eventually(partial_yet_right, what="a diagnosis that names its failed reads and still finds")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        pytest.param('{"level":"error","msg":"GET /api/products 500"}', True, id="json-level"),
        pytest.param('level=error msg="db timeout"', True, id="logfmt-level"),
        pytest.param('10.0.0.1 - - "GET / HTTP/1.1" 503 45 "-"', True, id="access-5xx"),
        pytest.param('10.0.0.1 - - "GET / HTTP/1.1" 200 512 "-"', False, id="access-512-bytes"),
        pytest.param('level=info msg="GET / 200 8.4ms"', False, id="logfmt-200"),
        pytest.param("[error] 29#29: open() failed", True, id="nginx-error"),
        pytest.param("Traceback (most recent call last):", True, id="traceback"),
        pytest.param('level=info msg="cache size grew" entries=18231', False, id="info"),
    ],
)
def test_error_lines_are_told_from_the_rest(line: str, error: bool) -> None:
    assert logs.is_error(line) is error


def test_an_identity_that_may_read_nothing_gets_an_error_not_an_empty_diagnosis(
    nobody: KubeTools, namespace: str
) -> None:
    text = nobody.fails("diagnose", namespace=namespace)
    assert "nothing could be read for a diagnosis" in text and "permission denied" in text
