"""A real Prometheus scraping a sandbox, for end-to-end tests of the metrics endpoint.

    with running_prometheus(sandbox.kubeconfig, tmp_path / "prometheus") as prom:
        prom.value('sum(kube_pod_status_phase{phase="Running"})')

The config is generated from the sandbox's kubeconfig: the server's CA (written to a file for
`tls_config.ca_file`) and the admin token (a file for `authorization.credentials_file`), scraping
`/kubecrew/v1/metrics` every second. Storage lives in the given directory; the process is stopped
on exit. `make install` installs the `prometheus` binary (Debian's package).
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import yaml

PROMETHEUS = shutil.which("prometheus")
METRICS_PATH = "/kubecrew/v1/metrics"
JOB = "sandbox"


class PrometheusError(AssertionError):
    """Prometheus did not start or answer as the test needed; the message carries its log."""


@dataclass
class Prometheus:
    url: str
    log: Path

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result list (`[{"metric": {...}, "value": [t, "1"]}, ...]`)."""
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        body = response.json()
        if response.status_code != 200 or body.get("status") != "success":
            raise PrometheusError(f"query {promql!r} failed: {response.status_code} {body}")
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def value(self, promql: str) -> float | None:
        """The value of a query with one series (None when it has none yet)."""
        result = self.query(promql)
        if not result:
            return None
        if len(result) > 1:
            raise PrometheusError(f"query {promql!r} has {len(result)} series, expected one")
        return float(result[0]["value"][1])

    def targets(self) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/api/v1/targets", timeout=10)
        active: list[dict[str, Any]] = response.json()["data"]["activeTargets"]
        return active


def config(kubeconfig: Path, workdir: Path) -> Path:
    """Write prometheus.yml (plus CA and token files) for the sandbox this kubeconfig names."""
    loaded = yaml.safe_load(kubeconfig.read_text())
    cluster = loaded["clusters"][0]["cluster"]
    token = loaded["users"][0]["user"]["token"]
    server = urlsplit(cluster["server"])
    workdir.mkdir(parents=True, exist_ok=True)
    ca_file = workdir / "ca.pem"
    ca_file.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    token_file = workdir / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    scrape = {
        "job_name": JOB,
        "scheme": server.scheme,
        "metrics_path": METRICS_PATH,
        "scrape_interval": "1s",
        "scrape_timeout": "1s",
        "tls_config": {"ca_file": str(ca_file)},
        "authorization": {"type": "Bearer", "credentials_file": str(token_file)},
        "static_configs": [{"targets": [server.netloc]}],
    }
    path = workdir / "prometheus.yml"
    document = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}}
    path.write_text(yaml.safe_dump({**document, "scrape_configs": [scrape]}, sort_keys=False))
    return path


@contextmanager
def running_prometheus(
    kubeconfig: Path, workdir: Path, *, timeout: float = 30
) -> Iterator[Prometheus]:
    if PROMETHEUS is None:
        raise PrometheusError("no `prometheus` on PATH: run `make install` (installs it)")
    with prometheus_on(config(kubeconfig, workdir), workdir, timeout=timeout) as prometheus:
        yield prometheus


@contextmanager
def prometheus_on(config_file: Path, workdir: Path, *, timeout: float = 30) -> Iterator[Prometheus]:
    """A real Prometheus on `config_file`, its data and log in `workdir`, for the block."""
    if PROMETHEUS is None:
        raise PrometheusError("no `prometheus` on PATH: run `make install` (installs it)")
    port = _free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config_file}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            env={**os.environ, "HOME": str(workdir)},
        )
    prometheus = Prometheus(f"http://127.0.0.1:{port}", log)
    try:
        _wait_ready(prometheus, process, timeout)
        yield prometheus
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(prometheus: Prometheus, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PrometheusError(
                f"prometheus exited with {process.returncode}:\n{prometheus.log.read_text()}"
            )
        with contextlib.suppress(httpx.TransportError):  # not listening yet
            if httpx.get(f"{prometheus.url}/-/ready", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise PrometheusError(f"prometheus not ready after {timeout} s:\n{prometheus.log.read_text()}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
