"""`kubectl exec` and `kubectl attach` over WebSocket, answered by the simulated kubelet.

One shop namespace for the module: pod `web` runs nginx and a busybox `sidecar` that prints
`tick` every second, mounts ConfigMap `web-config` at /etc/config and Secret `web-secret` at
/etc/secret, and has env from a literal, a ConfigMap key and a Secret key; Service `web`
selects it. Every command runs inside the simulated container, never on the host.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from pathlib import Path

import kubernetes
import pytest
from kubernetes import client
from kubernetes.stream import stream

from sandbox.server import Sandbox
from tests.sandbox.kubectl.readers import make_reader
from tests.support.background import Background
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

NS = "shop"
SHOP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {greeting: hello from config, mode: prod}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: shop}
stringData: {password: s3cret}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  volumes:
  - {name: cfg, configMap: {name: web-config}}
  - {name: sec, secret: {secretName: web-secret}}
  containers:
  - name: nginx
    image: nginx:1.27
  - name: sidecar
    image: busybox:1.37
    command: [sh, -c, "while true; do echo tick; sleep 1; done"]
    env:
    - {name: GREETING, value: hello}
    - name: MODE
      valueFrom: {configMapKeyRef: {name: web-config, key: mode}}
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: web-secret, key: password}}
    volumeMounts:
    - {name: cfg, mountPath: /etc/config}
    - {name: sec, mountPath: /etc/secret, readOnly: true}
"""


@pytest.fixture(scope="module")
def shop(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """Admin kubectl, with the shop applied and pod `web` ready."""
    home = tmp_path_factory.mktemp("exec")
    admin = Kubectl(shared_sandbox.kubeconfig, home / "cache")
    admin("create", "namespace", NS)
    (home / "shop.yaml").write_text(SHOP)
    admin("apply", "-f", str(home / "shop.yaml"))
    admin("wait", "--for=condition=Ready", "pod/web", "-n", NS, "--timeout=60s")
    return admin


def sidecar(kubectl: Kubectl, *command: str, stdin: str | None = None) -> tuple[int, str, str]:
    interactive = ["-i"] if stdin is not None else []
    done = kubectl.run(
        "exec", *interactive, "web", "-c", "sidecar", "-n", NS, "--", *command,
        input=stdin, check=False, timeout=30,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param(["cat", "/etc/config/greeting"], "hello from config", id="configmap-file"),
        pytest.param(["cat", "/etc/secret/password"], "s3cret", id="secret-file-decoded"),
        pytest.param(["sh", "-c", "echo $GREETING | wc -c"], "6\n", id="env-through-pipe"),
        pytest.param(["printenv", "MODE", "PASSWORD"], "prod\ns3cret\n", id="env-value-from"),
        pytest.param(["hostname"], "web\n", id="hostname"),
        pytest.param(["ls", "/etc/config"], "greeting\nmode\n", id="ls-mount"),
        pytest.param(
            ["sh", "-c", "cat /etc/resolv.conf | grep search | head -1"],
            "search shop.svc.cluster.local svc.cluster.local cluster.local\n",
            id="resolv-conf",
        ),
        pytest.param(
            ["sh", "-c", "cat /nope 2>/dev/null || echo missing; true && echo $?"],
            "missing\n0\n",
            id="lists-and-redirects",
        ),
    ],
)
def test_exec_prints_what_the_container_would(
    shop: Kubectl, command: list[str], expected: str
) -> None:
    assert sidecar(shop, *command) == (0, expected, "")


def test_exec_reaches_the_nginx_container_on_localhost(shop: Kubectl) -> None:
    # Ready without a readiness probe means started, not yet listening: wait for nginx.
    assert eventually(lambda: sidecar(shop, "wget", "-qO-", "localhost:80")[1]) == "OK /\n"
    code, _, err = sidecar(shop, "wget", "-qO-", "localhost:81")
    assert (code, err) == (1, "wget: can't connect to remote host (127.0.0.1): Connection refused\n"
                           "command terminated with exit code 1\n")  # fmt: skip


def test_nslookup_answers_the_service_cluster_ip(shop: Kubectl) -> None:
    address = shop("get", "service", "web", "-n", NS, "-o", "jsonpath={.spec.clusterIP}")
    code, out, _ = sidecar(shop, "nslookup", "web.shop.svc.cluster.local")
    assert code == 0
    assert f"Name:\tweb.shop.svc.cluster.local\nAddress: {address}\n" in out
    code, out, _ = sidecar(shop, "nslookup", "nosuch")
    assert (code, "** server can't find nosuch: NXDOMAIN") == (1, out.splitlines()[3])


@pytest.mark.parametrize(
    ("command", "code"),
    [
        pytest.param(["false"], 1, id="false"),
        pytest.param(["sh", "-c", "exit 3"], 3, id="sh-exit-3"),
        pytest.param(["sh", "-c", "nosuch"], 127, id="sh-not-found"),
    ],
)
def test_exec_exit_code_is_kubectls(shop: Kubectl, command: list[str], code: int) -> None:
    exited, _, err = sidecar(shop, *command)
    assert exited == code
    assert err.endswith(f"command terminated with exit code {code}\n")


def test_exec_of_a_missing_binary_fails_as_containerd_does(shop: Kubectl) -> None:
    code, out, err = sidecar(shop, "nosuchbinary")
    assert (code, out) == (1, "")
    assert err.startswith("error: Internal error occurred: error executing command in container")
    assert (
        "OCI runtime exec failed: exec failed: unable to start container process: exec: "
        '"nosuchbinary": executable file not found in $PATH: unknown'
    ) in err


def test_exec_stdin_reaches_cat_and_sh(shop: Kubectl) -> None:
    assert sidecar(shop, "cat", stdin="hello") == (0, "hello", "")
    script = "echo one\nprintenv GREETING\nexit 4\necho never\n"
    code, out, _ = sidecar(shop, "sh", stdin=script)
    assert (code, out) == (4, "one\nhello\n")


def test_exec_stdin_over_the_cap_is_cut_with_an_error(shop: Kubectl) -> None:
    code, _, err = sidecar(shop, "cat", stdin="x" * (2 * 1024 * 1024))
    assert code == 1
    assert "stdin exceeded the sandbox's limit" in err


def test_exec_into_a_pending_pod_names_the_missing_container(shop: Kubectl) -> None:
    shop("run", "stuck", "--image=registry.invalid/none:1", "-n", NS)
    shop("wait", "--for=jsonpath={.spec.nodeName}", "pod/stuck", "-n", NS, "--timeout=30s")
    done = shop.fails("exec", "stuck", "-n", NS, "--", "true")
    assert done.stderr == (
        "error: Internal error occurred: unable to upgrade connection: "
        'container not found ("stuck")\n'
    )


def test_attach_streams_the_containers_output(shop: Kubectl) -> None:
    attached = Background(shop, "attach", "web", "-c", "sidecar", "-n", NS)
    try:
        assert attached.expect("tick", timeout=20) == "tick"
        assert attached.expect("tick", timeout=20) == "tick"
    finally:
        attached.close()


def test_exec_needs_create_on_pods_exec(shop: Kubectl, tmp_path: Path) -> None:
    reader = make_reader(shop, NS, tmp_path)
    assert reader.kubectl("get", "pod", "web", "-o", "name") == "pod/web\n"
    done = reader.kubectl.fails("exec", "web", "-c", "sidecar", "--", "true")
    # The WebSocket GET is refused; kubectl falls back to SPDY, is refused again, and says so.
    assert done.stderr == (
        'error: unable to upgrade connection: pods "web" is forbidden: User '
        f'"{reader.username}" cannot create resource "pods/exec" in API group "" in the '
        'namespace "shop"\n'
    )


@pytest.fixture(scope="module")
def core(shared_sandbox: Sandbox, shop: Kubectl) -> Iterator[client.CoreV1Api]:
    with kubernetes.config.new_client_from_config(str(shared_sandbox.kubeconfig)) as api:
        yield client.CoreV1Api(api)


def test_python_client_stream_exec(core: client.CoreV1Api) -> None:
    output = stream(
        core.connect_get_namespaced_pod_exec,
        "web",
        NS,
        container="sidecar",
        command=["sh", "-c", "echo $MODE; cat /etc/config/greeting"],
        stdout=True,
        stderr=True,
        stdin=False,
        tty=False,
    )
    assert output == "prod\nhello from config"


def test_python_client_sees_api_errors_before_the_upgrade(core: client.CoreV1Api) -> None:
    with pytest.raises(kubernetes.client.ApiException) as caught, warnings.catch_warnings():
        # websocket-client leaves the refused handshake's TLS socket for the garbage collector;
        # collect it here, where its ResourceWarning is the library's and not a later test's.
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            stream(
                core.connect_get_namespaced_pod_exec,
                "web",
                NS,
                container="nosuch",
                command=["true"],
                stdout=True,
            )
        finally:
            gc.collect()
    # The client wraps the refused handshake (status 0), keeping the API server's answer.
    assert "Handshake status 400 Bad Request" in str(caught.value.reason)
    assert "container nosuch is not valid for pod web" in str(caught.value.reason)
