"""The Alertmanager webhook (real HTTP, the version 4 payload): a firing alert opens an incident
handled once, a repeat merges, `resolved` resolves it; a wrong token gets 401 and a payload that
is not Alertmanager's gets 400. And `kubecrew watch` as a process: a crash-looping Deployment is
diagnosed once by the Dev Team agent, and Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from agents.runtime.notify.watcher import WatchPlan
from sandbox.server import Sandbox
from tests.agents.runtime.notify.watcher import Watcher
from tests.support.crew import state_of
from tests.support.diagnosis import deployment
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW, free_port, listening
from tests.support.waiting import eventually

TOKEN = "watch-test-token-0123456789"


def payload(status: str) -> dict[str, Any]:
    """What Alertmanager 0.25 POSTs to a webhook_configs URL."""
    return {
        "version": "4",
        "groupKey": '{}:{alertname="KubeDeploymentReplicasMismatch"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "kubecrew",
        "groupLabels": {"alertname": "KubeDeploymentReplicasMismatch"},
        "commonLabels": {"alertname": "KubeDeploymentReplicasMismatch", "namespace": "shop"},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": [
            {
                "status": status,
                "labels": {
                    "alertname": "KubeDeploymentReplicasMismatch",
                    "namespace": "shop",
                    "deployment": "checkout",
                    "severity": "warning",
                },
                "annotations": {"summary": "checkout has not matched its replicas for 15m"},
                "startsAt": "2026-12-02T10:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-12-02T10:20:00Z",
                "generatorURL": "http://prometheus:9090/graph",
                "fingerprint": "c2a3c4e5f6a7b8c9",
            }
        ],
    }


def test_an_alert_opens_one_incident_until_alertmanager_resolves_it(plan: WatchPlan) -> None:
    port = free_port()
    watcher = Watcher(replace(plan, alertmanager_port=port, token=TOKEN)).start()
    url = f"http://127.0.0.1:{port}/alerts"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    fingerprint = "Deployment/shop/checkout/KubeDeploymentReplicasMismatch"
    try:
        eventually(lambda: listening(port), timeout=20, what="the webhook receiver")
        assert (
            httpx.post(
                url, json=payload("firing"), headers={"Authorization": "Bearer x"}
            ).status_code
            == 401
        )
        assert httpx.post(url, json=payload("firing")).status_code == 401
        assert watcher.incidents() == []
        wrong = httpx.post(url, json={"version": "3", "alerts": []}, headers=auth)
        assert wrong.status_code == 400 and "version" in wrong.json()["error"]

        for _ in range(2):  # Alertmanager repeats a firing group every repeat_interval
            answer = httpx.post(url, json=payload("firing"), headers=auth)
            assert answer.status_code == 200 and answer.json()["accepted"] == 1
        eventually(lambda: watcher.handled, timeout=10, what="the handler")
        (incident,) = watcher.incidents()
        assert (incident.fingerprint, incident.count, incident.source) == (
            fingerprint,
            2,
            "alertmanager",
        )
        eventually(lambda: watcher.incidents()[0].state == "open", what="handled, still open")

        assert httpx.post(url, json=payload("resolved"), headers=auth).status_code == 200
        assert watcher.incidents()[0].state == "resolved"
    finally:
        watcher.stop()
    assert [i.fingerprint for i in watcher.handled] == [fingerprint]
    assert not listening(port)  # the port is closed when the watcher returns


def test_kubecrew_watch_diagnoses_a_crash_loop_once_and_stops_on_ctrl_c(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "shop")
    bad = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    kubectl("apply", "-f", "-", input=deployment("web", bad))
    env = {**os.environ, "KUBECREW_HOME": str(tmp_path / "home"), "KUBECREW_MODEL_GUARD": "1"}
    env.pop("KUBECREW_MODEL", None)
    log = tmp_path / "watch.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [KUBECREW, "watch", "--kubeconfig", str(sandbox.kubeconfig),
             "-n", "shop", "--every", "0"],
            stdout=subprocess.PIPE, stderr=sink, text=True, env=env,
        )  # fmt: skip
        try:
            eventually(lambda: "handled CrashLoopBackOff on Deployment web" in log.read_text(),
                       timeout=45, what="the diagnosis in the log")  # fmt: skip
            process.send_signal(signal.SIGINT)
            out, _ = process.communicate(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    text = log.read_text()
    assert process.returncode == 0, text
    assert out == ""
    assert text.count("incident opened: CrashLoopBackOff on Deployment web in shop") == 1
    assert "exit" in text.split("handled CrashLoopBackOff on Deployment web", 1)[1]
    assert "stopped" in text and "Traceback" not in text
    assert (
        state_of(tmp_path / "home", sandbox.kubeconfig) / "agents" / "incidents.sqlite"
    ).is_file()


def test_the_receiver_listens_on_the_address_it_is_given(plan: WatchPlan) -> None:
    """In a pod the receiver must be reachable on the pod's address, not only on loopback: here
    127.0.0.2 (also this machine's, but not 127.0.0.1) stands for it."""
    port = free_port()
    watcher = Watcher(
        replace(plan, alertmanager_port=port, alertmanager_host="127.0.0.2", token=TOKEN)
    ).start()
    try:

        def answers_there() -> bool:
            try:
                socket.create_connection(("127.0.0.2", port), timeout=0.5).close()
            except OSError:
                return False
            return True

        eventually(answers_there, timeout=20, what="the receiver on 127.0.0.2")
        url = f"http://127.0.0.2:{port}/alerts"
        answer = httpx.post(
            url, json=payload("firing"), headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert answer.status_code == 200 and answer.json()["accepted"] == 1
        assert not listening(port)  # 127.0.0.1 is another address: nothing listens there
    finally:
        watcher.stop()
