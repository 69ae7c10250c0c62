"""curl, wget and `nc -z` in a container meet the simulated cluster as it is when they run:
Service names through cluster DNS, Service ports through the ready endpoints to a container
that listens, the app's paths, with the real tools' messages and exit codes in `kubectl logs`
and the Job's Complete/Failed status. Driven with real kubectl against a sandbox over HTTPS.

The last tests read the pure tools against a hand-made `Network` (the seam the kubelet fills
from the API) for what a sandbox app cannot show quickly: timeouts and option bundles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.kubelet.busybox import nc, wget
from sandbox.kubelet.commands import run_script
from sandbox.kubelet.curl import curl
from sandbox.kubelet.nettools import Dial, Listener, Result
from sandbox.server import Options, Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

RATE = 10.0
NS = "net"
SHOP = f"""\
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {NS}}}
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
        readinessProbe: {{httpGet: {{path: /, port: http}}, periodSeconds: 2}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {NS}}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: http}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web-wrong-port, namespace: {NS}}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata: {{name: nobody, namespace: {NS}}}
spec:
  selector: {{app: nobody}}
  ports: [{{port: 80}}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """One sandbox for the module, with web (2 ready replicas) and three Services in `net`."""
    home = tmp_path_factory.mktemp("network-tools")
    with Sandbox(Options(home=home / "sandbox", nodes=2, rate=RATE)) as running:
        kubectl = Kubectl(running.kubeconfig, home / "kube-cache")
        kubectl("apply", "-f", "-", input=SHOP)

        def two_ready() -> bool:
            found = kubectl.json("get", "endpoints", "web", "-n", NS)
            subsets = found.get("subsets") or []
            return sum(len(s.get("addresses") or []) for s in subsets) == 2

        eventually(two_ready, what="web's two endpoints ready")
        yield kubectl


def job(kubectl: Kubectl, name: str, script: str, image: str = "curlimages/curl:8.10.1") -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "check", "image": image, "command": ["sh", "-c", script]}
                    ],
                }
            },
        },
    }
    kubectl("apply", "-f", "-", input=json.dumps(manifest))


def finished(kubectl: Kubectl, name: str) -> tuple[str, str]:
    """(Complete or Failed, the logs) once the Job has finished."""

    def verdict() -> str:
        found = kubectl.json("get", "job", name, "-n", NS)
        for condition in (found.get("status") or {}).get("conditions") or []:
            if condition["type"] in ("Complete", "Failed") and condition["status"] == "True":
                return str(condition["type"])
        return ""

    state = eventually(verdict, timeout=30, what=f"job {name} finished")
    return state, kubectl("logs", f"job/{name}", "-n", NS)


def test_curl_against_a_healthy_service_completes_and_logs_200(cluster: Kubectl) -> None:
    job(cluster, "healthy", "curl -fsS -o /dev/null -w 'code=%{http_code}\\n' http://web/")
    job(cluster, "fqdn", f"curl -s http://web.{NS}.svc.cluster.local:80/index.html")

    assert finished(cluster, "healthy") == ("Complete", "code=200\n")
    state, logs = finished(cluster, "fqdn")
    assert state == "Complete" and logs == "OK /index.html\n"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            "curl -fsS http://web-wrong-port/",
            "curl: (7) Failed to connect to web-wrong-port port 80 after 0 ms: "
            "Could not connect to server",
        ),
        ("curl -fsS http://web/healthz", "curl: (22) The requested URL returned error: 404"),
        (
            f"curl -sS http://nobody.{NS}/",
            "curl: (7) Failed to connect to nobody.net port 80 after 0 ms: "
            "Could not connect to server",
        ),
        ("curl -sS http://payments/", "curl: (6) Could not resolve host: payments"),
        ("wget -q -O- http://web/missing", "wget: server returned error: HTTP/1.1 404 Not Found"),
        ("wget -q http://nowhere/", "wget: bad address 'nowhere'"),
    ],
    ids=[
        "wrong-target-port",
        "unserved-path",
        "no-endpoints",
        "unknown-host",
        "wget-404",
        "wget-dns",
    ],
)
def test_a_broken_check_fails_the_job_with_the_tools_message(
    cluster: Kubectl, script: str, message: str, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.id
    job(cluster, name, f"echo checking; {script}")

    state, logs = finished(cluster, name)

    assert state == "Failed"
    assert logs == f"checking\n{message}\n"


def test_a_script_keeps_checking_and_exits_with_what_it_recorded(cluster: Kubectl) -> None:
    script = (
        "rc=0; "
        "curl -s -o /dev/null -w 'port=80 code=%{http_code} exit=%{exitcode}\\n' -f http://web/ "
        "|| rc=1; "
        "curl -s -o /dev/null -w 'path=/healthz code=%{http_code} exit=%{exitcode}\\n' -f "
        "http://web/healthz || rc=1; "
        "nc -z -v web 80 || rc=1; "
        "exit $rc"
    )
    job(cluster, "script", script)

    state, logs = finished(cluster, "script")

    assert state == "Failed"
    lines = logs.splitlines()
    assert lines[:2] == ["port=80 code=200 exit=0", "path=/healthz code=404 exit=22"]
    assert lines[2].startswith("web (10.96.") and lines[2].endswith(":80) open")


def test_a_service_created_later_answers_the_job_run_after_it(cluster: Kubectl) -> None:
    # Ready means listening only with a probe: without one nginx is Ready a second before it
    # binds its port, in the sandbox as on a real node, and a quick Job would meet a refusal.
    args = ["deployment", "late", "--image=nginx:1.27", "--port=80", "-n", NS]
    deployment = json.loads(cluster("create", *args, "--dry-run=client", "-o", "json"))
    nginx = deployment["spec"]["template"]["spec"]["containers"][0]
    nginx["readinessProbe"] = {"tcpSocket": {"port": 80}, "periodSeconds": 1}
    cluster("apply", "-f", "-", input=json.dumps(deployment))
    cluster("expose", "deployment", "late", "--port=80", "-n", NS)

    def endpoint() -> bool:
        subsets = cluster.json("get", "endpoints", "late", "-n", NS).get("subsets") or []
        return any(s.get("addresses") for s in subsets)

    eventually(endpoint, what="late's endpoint ready")
    job(cluster, "late", "curl -fsS http://late/")
    assert finished(cluster, "late") == ("Complete", "OK /\n")


# -- the tools alone, against a hand-made network ----------------------------------------------


class Network:
    """Cluster DNS and listeners as a table: what the kubelet's `ClusterNetwork` answers."""

    def __init__(self, listeners: dict[tuple[str, int], Dial]) -> None:
        self.names = {"web": "10.96.0.10", "db": "10.96.0.11"}
        self.listeners = listeners

    def resolve(self, host: str) -> str | None:
        return self.names.get(host)

    def connect(self, address: str, port: int) -> Dial:
        return self.listeners.get((address, port), "refused")


SLOW = Network({("10.96.0.10", 80): Listener(frozenset({"/"}), latency=3.0)})


def test_a_slow_app_times_out_curl_and_wget_but_not_without_a_limit() -> None:
    timed_out = curl(["-sS", "-m", "1", "http://web/"], SLOW)
    assert timed_out.exit_code == 28 and timed_out.seconds == 1.0
    assert timed_out.lines == (
        "curl: (28) Operation timed out after 1001 milliseconds with 0 bytes received",
    )
    patient = curl(["-s", "http://web/"], SLOW)
    assert (patient.exit_code, patient.seconds, patient.lines) == (0, 3.0, ("OK /",))
    assert wget(["-q", "-T", "2", "http://web/"], SLOW).lines == ("wget: download timed out",)


def test_dropped_packets_wait_for_the_connect_timeout() -> None:
    nowhere = Network({("10.96.0.10", 81): "unreachable"})
    found = curl(["-sS", "--connect-timeout", "2", "http://web:81/"], nowhere)
    assert found.exit_code == 28 and found.seconds == 2.0
    assert found.lines == (
        "curl: (28) Failed to connect to web port 81 after 2002 ms: Timeout was reached",
    )
    assert nc(["-z", "-w", "3", "web", "81"], nowhere) is not None


def test_options_bundles_meter_and_non_http_ports() -> None:
    network = Network(
        {
            ("10.96.0.10", 80): Listener(frozenset({"/"})),
            ("10.96.0.11", 5432): Listener(frozenset(), http=False),
        }
    )
    bundled = curl(["-sSfo", "/dev/null", "-w%{http_code}", "web"], network)
    assert bundled.lines == ("200",) and bundled.exit_code == 0
    metered = curl(["http://web:81/"], network)
    assert metered.exit_code == 7 and len(metered.lines) == 3
    assert metered.lines[2].endswith(
        "0curl: (7) Failed to connect to web port 81 after 0 ms: Could not connect to server"
    )
    assert curl(["-s", "-w", "%{http_code}", "http://db:5432/"], network).exit_code == 52
    assert nc(["-z", "db", "5432"], network) == Result((), 0.0, 0)
    assert nc(["-zv", "db", "5432"], network) == Result(("db (10.96.0.11:5432) open",), 0.0, 0)
    assert nc(["db", "5432"], network) is None  # not a scan: nc waits on stdin


def test_scripts_assign_and_read_their_own_variables_only() -> None:
    plan = run_script('rc=0; false || rc=3; echo "rc is $rc, home is $HOME"; exit $rc')
    # No environment given: HOME is unset and expands to nothing, as in sh.
    assert plan.exit_code == 3 and plan.lines == ((0.0, "rc is 3, home is "),)
    without_network = run_script("curl -f http://web/ && echo fine")
    assert without_network.lines == ((0.0, "fine"),)  # no network given: quiet, as before


def test_url_forms() -> None:
    network = Network({("10.96.0.10", 8080): Listener(frozenset({"/healthz"}))})
    assert curl(["-s", "-w", "%{http_code}", "web:8080/healthz"], network).lines == (
        "OK /healthz",
        "200",
    )
    assert curl(["-sS", "foo://web/"], network).lines == ('curl: (1) Protocol "foo" not supported',)
    assert curl([], network).exit_code == 2
