"""`/kubecrew/v1/...` over real HTTPS, and the API faults it turns on, seen by httpx and kubectl."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

FAULTS = "/kubecrew/v1/faults"


def _client(sandbox: Sandbox, token: str | None = None) -> httpx.Client:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    context = httpx.create_ssl_context(verify=True)
    context.load_verify_locations(cadata=ca.decode())
    token = token or config["users"][0]["user"]["token"]
    return httpx.Client(
        base_url=sandbox.url, verify=context, headers={"Authorization": f"Bearer {token}"}
    )


@pytest.fixture
def admin(sandbox: Sandbox) -> Iterator[httpx.Client]:
    with _client(sandbox) as client:
        yield client


def _status(response: httpx.Response, code: int) -> dict[str, Any]:
    assert response.status_code == code, response.text
    body: dict[str, Any] = response.json()
    assert (body["kind"], body["status"], body["code"]) == ("Status", "Failure", code)
    return body


def test_admin_adds_lists_and_clears_a_fault(sandbox: Sandbox, admin: httpx.Client) -> None:
    added = admin.post(FAULTS, json={"kind": "node-heartbeat", "node": "node-2"})
    assert added.status_code == 201, added.text
    fault = added.json()
    assert (fault["id"], fault["kind"], fault["params"], fault["state"]) == (
        "f-1",
        "node-heartbeat",
        {"node": "node-2"},
        "active",
    )
    assert sandbox.call(lambda c: c.world.node("node-2").heartbeat) is False
    listed = admin.get(FAULTS).json()
    assert listed["kind"] == "FaultList" and [f["id"] for f in listed["items"]] == ["f-1"]
    cleared = admin.delete(f"{FAULTS}/f-1")
    assert cleared.status_code == 200 and cleared.json()["id"] == "f-1"
    assert sandbox.call(lambda c: c.world.node("node-2").heartbeat) is True
    assert admin.get(FAULTS).json()["items"] == []


def test_delete_all_clears_every_fault(sandbox: Sandbox, admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "gpu-fault", "node": "node-1"})
    admin.post(FAULTS, json={"kind": "image-missing", "image": "redis"})
    cleared = admin.delete(FAULTS).json()
    assert [f["kind"] for f in cleared["items"]] == ["gpu-fault", "image-missing"]
    assert sandbox.call(lambda c: c.world.images.resolve("redis:7")) is not None


@pytest.mark.parametrize(
    ("body", "says"),
    [
        pytest.param({"kind": "node-heartbeat"}, "field 'node': is required", id="missing-field"),
        pytest.param({"kind": "quake"}, "field 'kind'", id="unknown-kind"),
        pytest.param([1, 2], "field 'kind'", id="not-a-map"),
    ],
)
def test_bad_fault_spec_is_a_400_status_naming_the_field(
    admin: httpx.Client, body: Any, says: str
) -> None:
    status = _status(admin.post(FAULTS, json=body), 400)
    assert status["reason"] == "BadRequest" and says in status["message"]
    assert admin.get(FAULTS).json()["items"] == []


def test_bad_json_and_unknown_paths_are_statuses(admin: httpx.Client) -> None:
    _status(admin.post(FAULTS, content=b"{not json"), 400)
    assert "f-9" in _status(admin.delete(f"{FAULTS}/f-9"), 404)["message"]
    _status(admin.get("/kubecrew/v1/weather"), 404)
    _status(admin.put(FAULTS, json={}), 405)


def test_clock_reports_time_rate_and_seed(sandbox: Sandbox, admin: httpx.Client) -> None:
    clock = admin.get("/kubecrew/v1/clock").json()
    assert (clock["rate"], clock["seed"]) == (sandbox.call(lambda c: c.clock.rate), 0)
    assert clock["now"].endswith("Z") and clock["elapsedSeconds"] >= 0


def test_control_reports_the_work_of_the_controllers(kubectl: Kubectl, admin: httpx.Client) -> None:
    before = admin.get("/kubecrew/v1/control").json()
    assert {"default-scheduler", "kubelet", "deployment-controller"} <= set(before["controllers"])
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    after = admin.get("/kubecrew/v1/control").json()
    assert after["reconciles"] > before["reconciles"]
    assert after["cpuSeconds"] > before["cpuSeconds"]


def test_metrics_are_prometheus_text(admin: httpx.Client) -> None:
    response = admin.get("/kubecrew/v1/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")


def test_service_account_without_a_rule_gets_403(sandbox: Sandbox, kubectl: Kubectl) -> None:
    token = kubectl("create", "token", "default", "-n", "default").strip()
    with _client(sandbox, token) as client:
        status = _status(client.get(FAULTS), 403)
        assert status["message"] == (
            f'forbidden: User "system:serviceaccount:default:default" cannot get path "{FAULTS}"'
        )
        _status(client.post(FAULTS, json={"kind": "gpu-fault", "node": "node-1"}), 403)
    assert sandbox.call(lambda c: c.faults.list()) == []


def test_non_resource_rule_lets_a_service_account_read_but_not_add(
    sandbox: Sandbox, kubectl: Kubectl
) -> None:
    kubectl("create", "clusterrole", "fault-reader", "--verb=get", "--non-resource-url=/kubecrew/*")
    kubectl(
        "create",
        "clusterrolebinding",
        "fault-reader",
        "--clusterrole=fault-reader",
        "--serviceaccount=default:default",
    )
    token = kubectl("create", "token", "default", "-n", "default").strip()
    with _client(sandbox, token) as client:
        assert client.get(FAULTS).status_code == 200
        _status(client.post(FAULTS, json={"kind": "gpu-fault", "node": "node-1"}), 403)


def test_unauthenticated_admin_request_is_refused(sandbox: Sandbox) -> None:
    with _client(sandbox, "not-a-token") as client:
        assert client.get(FAULTS).status_code == 401


def test_admin_paths_are_not_in_discovery(admin: httpx.Client) -> None:
    for path in ("/api", "/apis", "/openapi/v3"):
        assert "kubecrew/v1" not in admin.get(path).text


# -- API faults -----------------------------------------------------------------------------


def test_error_rate_one_fails_every_api_request_with_500(admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "api", "error_rate": 1.0})
    for path in ("/api/v1/pods", "/apis/apps/v1/namespaces/default/deployments", "/api"):
        assert _status(admin.get(path), 500)["reason"] == "InternalError"
    assert admin.get("/readyz").status_code == 200  # health and version are spared
    assert admin.get("/version").status_code == 200
    assert admin.get(FAULTS).status_code == 200  # so is the way to clear it
    admin.delete(FAULTS)
    assert admin.get("/api/v1/pods").status_code == 200


def test_throttle_rate_one_answers_429_with_retry_after(admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "api", "throttle_rate": 1.0})
    response = admin.get("/api/v1/namespaces")
    status = _status(response, 429)
    assert response.headers["retry-after"] == "1"
    assert status["reason"] == "TooManyRequests" and status["details"]["retryAfterSeconds"] == 1


def test_timeout_rate_one_answers_504_timeout(admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "api", "timeout_rate": 1.0})
    assert _status(admin.get("/api/v1/nodes"), 504)["reason"] == "Timeout"


def test_rates_of_zero_let_every_request_through(admin: httpx.Client) -> None:
    fault = admin.post(FAULTS, json={"kind": "api", "error_rate": 0.0, "drop_watch_rate": 0.0})
    assert fault.status_code == 400  # an API fault that does nothing is refused
    admin.post(FAULTS, json={"kind": "api", "error_rate": 0.0, "timeout_rate": 0.0001})
    codes = {admin.get("/api/v1/namespaces").status_code for _ in range(50)}
    assert codes <= {200, 504}


def test_half_the_requests_fail_at_error_rate_one_half(admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "api", "error_rate": 0.5})
    codes = [admin.get("/api/v1/namespaces").status_code for _ in range(200)]
    assert set(codes) == {200, 500}
    assert 60 < codes.count(500) < 140


def test_dropped_watch_ends_after_its_first_event(admin: httpx.Client) -> None:
    admin.post(FAULTS, json={"kind": "api", "drop_watch_rate": 1.0})
    with admin.stream("GET", "/api/v1/namespaces", params={"watch": "1"}) as response:
        lines = [line for line in response.iter_lines() if line]
    assert len(lines) == 1
    assert json.loads(lines[0])["type"] == "ADDED"


def test_kubectl_sees_the_injected_errors(admin: httpx.Client, kubectl: Kubectl) -> None:
    kubectl("get", "nodes")  # warm the discovery cache
    admin.post(FAULTS, json={"kind": "api", "error_rate": 1.0})
    failed = kubectl.run("get", "nodes", check=False)
    assert failed.returncode != 0
    assert "Internal error occurred: injected by a sandbox API fault" in failed.stderr
    admin.delete(FAULTS)
    assert len(kubectl("get", "nodes", "-o", "name").split()) == 3
