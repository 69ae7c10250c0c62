"""`kubectl port-forward` over its WebSocket tunnel (SPDY/3.1 inside), answered by the pod's
simulated listener.

Pod `web` runs nginx (port 80) in namespace `forward`, behind Service `web`; kubectl listens on
a free local port and a plain HTTP client on the host talks to it. Nothing listens on port 81.
"""

from __future__ import annotations

import http.client
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.sandbox.kubectl.readers import make_reader
from tests.support.background import Background
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

NS = "forward"
SHOP = """
apiVersion: v1
kind: Service
metadata: {name: web, namespace: forward}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: forward, labels: {app: web}}
spec:
  containers:
  - {name: nginx, image: "nginx:1.27", ports: [{containerPort: 80}]}
"""


@pytest.fixture(scope="module")
def shop(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """Admin kubectl, with pod `web` ready and nginx listening."""
    home = tmp_path_factory.mktemp("forward")
    admin = Kubectl(shared_sandbox.kubeconfig, home / "cache")
    admin("create", "namespace", NS)
    (home / "shop.yaml").write_text(SHOP)
    admin("apply", "-f", str(home / "shop.yaml"))
    admin("wait", "--for=condition=Ready", "pod/web", "-n", NS, "--timeout=60s")
    # Ready without a readiness probe means started, not yet listening: wait for nginx.
    probe = ["exec", "web", "-n", NS, "--", "wget", "-qO-", "localhost:80"]
    eventually(lambda: admin.run(*probe, check=False).stdout == "OK /\n", what="nginx")
    return admin


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def forward(kubectl: Kubectl, target: str, remote: int) -> tuple[Background, int]:
    port = free_port()
    started = Background(kubectl, "port-forward", target, f"{port}:{remote}", "-n", NS)
    started.expect(f"Forwarding from 127.0.0.1:{port} -> {remote}", timeout=20)
    return started, port


def get(port: int, path: str = "/") -> tuple[int, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
        return answer.status, answer.read().decode()


def stop(forwarding: Background) -> int:
    """SIGINT, as a person stops it; its exit code once it has ended."""
    forwarding.process.send_signal(signal.SIGINT)
    code = forwarding.process.wait(timeout=15)
    forwarding.close()
    return code


@pytest.mark.parametrize("target", ["pod/web", "svc/web"], ids=["pod", "service"])
def test_get_through_port_forward_reaches_nginx(shop: Kubectl, target: str) -> None:
    forwarding, port = forward(shop, target, 80)
    try:
        assert get(port) == (200, "OK /\n")
        assert get(port) == (200, "OK /\n")
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(port, "/nosuch")
        assert missing.value.code == 404
        missing.value.close()  # the error holds the response and its socket
        forwarding.expect(f"Handling connection for {port}", timeout=5)
    finally:
        assert stop(forwarding) == 0


def test_keep_alive_requests_share_one_forwarded_connection(shop: Kubectl) -> None:
    forwarding, port = forward(shop, "pod/web", 80)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            for _ in range(2):
                connection.request("GET", "/")
                answer = connection.getresponse()
                assert (answer.status, answer.read()) == (200, b"OK /\n")
        finally:
            connection.close()
        assert forwarding.expect("Handling connection", timeout=5)
    finally:
        assert stop(forwarding) == 0


def test_a_port_nothing_listens_on_is_kubectls_error(shop: Kubectl) -> None:
    forwarding, port = forward(shop, "pod/web", 81)
    try:
        with pytest.raises((urllib.error.URLError, http.client.HTTPException, OSError)):
            get(port)
        line = forwarding.expect("An error occurred forwarding", stream="stderr", timeout=10)
        assert "error forwarding port 81 to pod " in line
        assert "dial tcp4 127.0.0.1:81: connect: connection refused" in line
        assert forwarding.expect("lost connection to pod", stream="stderr", timeout=10)
        assert forwarding.process.wait(timeout=15) == 1
    finally:
        forwarding.close()


def test_port_forward_needs_create_on_pods_portforward(shop: Kubectl, tmp_path: Path) -> None:
    reader = make_reader(shop, NS, tmp_path)
    done = reader.kubectl.fails("port-forward", "pod/web", f"{free_port()}:80")
    assert done.stderr == (
        'error: error upgrading connection: unable to upgrade connection: pods "web" is '
        f'forbidden: User "{reader.username}" cannot create resource "pods/portforward" in '
        f'API group "" in the namespace "{NS}"\n'
    )
