"""`kubectl cp` both ways, and the container's writable layer it lands in.

kubectl copies with `tar` over exec: in, `tar -xmf - -C DIR` with the archive on stdin; out,
`tar cf - PATH` with the archive on stdout. Each test uses its own busybox pod in namespace
`copy`, so layers never meet; the pod mounts ConfigMap `app-config` at /etc/config.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from sandbox.kubelet.layer import MAX_BYTES, MAX_FILES
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

NS = "copy"
POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: copy}}
spec:
  volumes: [{{name: cfg, configMap: {{name: app-config}}}}]
  containers:
  - name: box
    image: busybox:1.36
    command: [sleep, "3600"]
    volumeMounts: [{{name: cfg, mountPath: /etc/config}}]
"""


@pytest.fixture(scope="module")
def admin(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cp") / "cache")
    kubectl("create", "namespace", NS)
    kubectl("create", "configmap", "app-config", "-n", NS, "--from-literal=key=from the map\n")
    return kubectl


@pytest.fixture
def pod(admin: Kubectl, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A running busybox pod of this test's own, named after it."""
    name = request.node.name.replace("_", "-").lower()[-40:].strip("-")
    (tmp_path / "pod.yaml").write_text(POD.format(name=name))
    admin("apply", "-f", str(tmp_path / "pod.yaml"))
    admin("wait", "--for=condition=Ready", f"pod/{name}", "-n", NS, "--timeout=60s")
    return name


def run(admin: Kubectl, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    done = admin.run(*args, input=stdin, check=False, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_a_file_copied_in_is_read_back_by_later_execs(
    admin: Kubectl, pod: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("first line\nsecond line\n")
    assert run(admin, "cp", str(tmp_path / "notes.txt"), f"{NS}/{pod}:/tmp/x.txt") == (0, "", "")
    exec_ = ("exec", pod, "-n", NS, "--")
    assert run(admin, *exec_, "cat", "/tmp/x.txt") == (0, "first line\nsecond line\n", "")
    assert run(admin, *exec_, "ls", "/tmp") == (0, "x.txt\n", "")
    assert run(admin, *exec_, "sh", "-c", "grep second /tmp/x.txt") == (0, "second line\n", "")


def test_binary_bytes_survive_the_round_trip(admin: Kubectl, pod: str, tmp_path: Path) -> None:
    data = bytes(range(256)) * 4
    (tmp_path / "blob").write_bytes(data)
    run(admin, "cp", str(tmp_path / "blob"), f"{NS}/{pod}:/tmp/blob")
    code, out, _ = run(admin, "cp", f"{NS}/{pod}:/tmp/blob", str(tmp_path / "back"))
    # kubectl passes the container's stderr on to its own stdout
    assert (code, out) == (0, "tar: removing leading '/' from member names\n")
    assert (tmp_path / "back").read_bytes() == data


def test_a_directory_copies_in_with_its_tree(admin: Kubectl, pod: str, tmp_path: Path) -> None:
    (tmp_path / "site" / "css").mkdir(parents=True)
    (tmp_path / "site" / "index.html").write_text("<h1>hi</h1>\n")
    (tmp_path / "site" / "css" / "a.css").write_text("h1 {}\n")
    run(admin, "cp", str(tmp_path / "site"), f"{NS}/{pod}:/tmp/site")
    exec_ = ("exec", pod, "-n", NS, "--")
    assert run(admin, *exec_, "ls", "/tmp/site") == (0, "css\nindex.html\n", "")
    assert run(admin, *exec_, "cat", "/tmp/site/css/a.css") == (0, "h1 {}\n", "")


def test_a_mounted_configmap_file_copies_out(admin: Kubectl, pod: str, tmp_path: Path) -> None:
    code, _, _ = run(admin, "cp", f"{NS}/{pod}:/etc/config/key", str(tmp_path / "key"))
    assert code == 0
    assert (tmp_path / "key").read_text() == "from the map\n"


def test_shell_redirections_write_to_the_same_layer(admin: Kubectl, pod: str) -> None:
    exec_ = ("exec", pod, "-n", NS, "--")
    assert run(admin, *exec_, "sh", "-c", "echo x > /tmp/f; echo y >> /tmp/f") == (0, "", "")
    assert run(admin, *exec_, "cat", "/tmp/f") == (0, "x\ny\n", "")


def test_the_layer_is_gone_when_the_pod_is_recreated(
    admin: Kubectl, pod: str, tmp_path: Path
) -> None:
    run(admin, "exec", pod, "-n", NS, "--", "sh", "-c", "echo x > /tmp/f")
    admin("delete", "pod", pod, "-n", NS, "--wait=true")
    admin("apply", "-f", str(tmp_path / "pod.yaml"))
    admin("wait", "--for=condition=Ready", f"pod/{pod}", "-n", NS, "--timeout=60s")
    code, _, err = run(admin, "exec", pod, "-n", NS, "--", "cat", "/tmp/f")
    assert code == 1
    assert err.startswith("cat: can't open '/tmp/f': No such file or directory\n")


def test_copying_past_the_file_limit_fails_with_no_space(
    admin: Kubectl, pod: str, tmp_path: Path
) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for number in range(MAX_FILES + 1):
        (many / f"f{number}").write_text("")
    code, _, err = run(admin, "cp", str(many), f"{NS}/{pod}:/tmp/many")
    assert (code, err) == (
        1,
        "tar: write error: No space left on device\ncommand terminated with exit code 1\n",
    )


def test_copying_past_the_byte_limit_fails_with_no_space(
    admin: Kubectl, pod: str, tmp_path: Path
) -> None:
    chunk = tmp_path / "chunk"
    chunk.write_bytes(b"x" * 1_000_000)  # under the 1 MiB a single exec's stdin may carry
    results = [
        run(admin, "cp", str(chunk), f"{NS}/{pod}:/tmp/chunk{number}")
        for number in range(MAX_BYTES // 1_000_000 + 1)
    ]
    assert all(code == 0 for code, _, _ in results[:-1])
    assert results[-1][0] == 1
    assert "tar: write error: No space left on device" in results[-1][2]


def _archive(*names: str) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"hi\n"))
    return buffer.getvalue().decode("ascii")


def test_extract_refuses_members_that_climb_out(admin: Kubectl, pod: str) -> None:
    stdin = _archive("../../etc/evil", "/abs/ok")
    code, _, err = run(
        admin, "exec", "-i", pod, "-n", NS, "--", "tar", "-xf", "-", "-C", "/tmp", stdin=stdin
    )
    assert code == 1
    assert "tar: ../../etc/evil: member name contains '..', not extracted\n" in err
    assert run(admin, "exec", pod, "-n", NS, "--", "ls", "/tmp/abs") == (0, "ok\n", "")
    assert run(admin, "exec", pod, "-n", NS, "--", "cat", "/etc/evil")[0] == 1
