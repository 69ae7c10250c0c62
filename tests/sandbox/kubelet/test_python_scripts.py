"""Scripts a pod mounts run through the simulated interpreters, as real kubectl sees them."""

from __future__ import annotations

import json

import pytest

from sandbox.kubelet import pyvalues
from sandbox.kubelet.commands import FOREVER, Inside, interpret
from sandbox.kubelet.filesystem import ContainerFiles
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

CALC_APP = """\
import time

while True:
    print("error: cannot reach calc backend")
    time.sleep(2)
"""


def scripted(
    name: str, script: str, command: list[str], *, kind: str = "Pod", restart: str = "Always"
) -> str:
    """A ConfigMap holding `script` as `app.py`, mounted at /etc/config, and a workload."""
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-script"},
        "data": {"app.py": script},
    }
    container = {
        "name": "app",
        "image": "python:3.12",
        "command": command,
        "env": [{"name": "MODE", "value": "prod"}],
        "volumeMounts": [{"name": "script", "mountPath": "/etc/config"}],
    }
    spec = {
        "restartPolicy": restart,
        "containers": [container],
        "volumes": [{"name": "script", "configMap": {"name": f"{name}-script"}}],
    }
    if kind == "Pod":
        workload = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    else:
        labels = {"app": name}
        workload = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": spec},
            },
        }
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [config, workload]})


def state(k: Kubectl, namespace: str, pod: str) -> dict[str, object]:
    found = k.json("get", "pod", "-n", namespace, pod)
    statuses = found["status"].get("containerStatuses") or [{}]
    return dict(statuses[0])


def test_calc_app_loop_prints_its_error_over_time_and_keeps_running(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    k = shared_kubectl
    command = ["python", "/etc/config/calc-app.py"]
    manifest = scripted("calc", CALC_APP, command, kind="Deployment").replace(
        '"app.py"', '"calc-app.py"'
    )
    k("apply", "-n", namespace, "-f", "-", input=manifest)

    def repeated() -> str:
        done = k.run("logs", "-n", namespace, "deploy/calc", check=False)
        return done.stdout if done.stdout.count("error: cannot reach calc backend") >= 3 else ""

    logs = eventually(repeated, what="the calc app printed its error three times")
    assert set(logs.splitlines()) == {"error: cannot reach calc backend"}
    pod = k.json("get", "pods", "-n", namespace, "-l", "app=calc")["items"][0]
    assert pod["status"]["phase"] == "Running"
    assert "running" in pod["status"]["containerStatuses"][0]["state"]


def test_script_prints_its_env_and_exits_with_its_code(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    script = 'import os, sys\nprint("mode=" + os.environ.get("MODE", "?"))\nsys.exit(3)\n'
    manifest = scripted("env", script, ["python", "/etc/config/app.py"], restart="Never")
    k = shared_kubectl
    k("apply", "-n", namespace, "-f", "-", input=manifest)

    def terminated() -> dict[str, object]:
        return dict(state(k, namespace, "env").get("state", {}).get("terminated") or {})  # type: ignore[attr-defined]

    ended = eventually(terminated, what="the script's container terminated")
    assert ended["exitCode"] == 3 and ended["reason"] == "Error"
    assert k("logs", "-n", namespace, "env") == "mode=prod\n"


def test_name_error_prints_a_traceback_and_crash_loops(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    script = 'print("starting")\nprint(undefined_name)\n'
    k = shared_kubectl
    k(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=scripted("oops", script, ["python3", "/etc/config/app.py"]),
    )

    def backing_off() -> bool:
        status = state(k, namespace, "oops")
        waiting = (status.get("state") or {}).get("waiting") or {}  # type: ignore[attr-defined]
        return waiting.get("reason") == "CrashLoopBackOff"

    eventually(backing_off, what="CrashLoopBackOff")
    logs = k("logs", "-n", namespace, "oops", "--previous")
    assert logs.splitlines() == [
        "starting",
        "Traceback (most recent call last):",
        '  File "/etc/config/app.py", line 2, in <module>',
        "    print(undefined_name)",
        "NameError: name 'undefined_name' is not defined",
    ]
    last = state(k, namespace, "oops")["lastState"]["terminated"]  # type: ignore[index]
    assert last["exitCode"] == 1


def test_unsupported_import_says_so_and_the_container_keeps_running(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    script = "from flask import Flask\napp = Flask(__name__)\n"
    k = shared_kubectl
    k(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=scripted("web", script, ["python", "/etc/config/app.py"]),
    )
    k("wait", "-n", namespace, "--for=condition=Ready", "pod/web", "--timeout=60s")
    assert k("logs", "-n", namespace, "web").splitlines() == [
        "sandbox: python script uses 'flask', which the simulated interpreter does not run"
    ]
    assert "running" in state(k, namespace, "web")["state"]  # type: ignore[operator]


def test_python_dash_c_prints_what_it_computes(shared_kubectl: Kubectl, namespace: str) -> None:
    k = shared_kubectl
    k(
        "run",
        "calc",
        "-n",
        namespace,
        "--image=python:3.12",
        "--restart=Never",
        "--command",
        "--",
        "python",
        "-c",
        "print(1+1)",
    )

    def done() -> str:
        status = state(k, namespace, "calc")
        return "terminated" in (status.get("state") or {}) and k("logs", "-n", namespace, "calc")  # type: ignore[operator,return-value]

    assert eventually(done, what="python -c finished") == "2\n"


# -- the interpreters without a cluster ----------------------------------------------------------


def inside(files: dict[str, str], **env: str) -> Inside:
    return Inside(ContainerFiles(files, set()), env)


def test_a_counting_loop_stops_at_the_line_cap_and_says_so() -> None:
    script = "import time\ni = 0\nwhile True:\n    i += 1\n    print(i)\n    time.sleep(1)\n"
    plan = interpret({"command": ["python", "/app.py"]}, None, inside({"/app.py": script}))
    assert plan.seconds is FOREVER and len(plan.lines) == pyvalues.MAX_LINES + 1
    assert plan.lines[0] == (0.0, "1") and "limit of 1000 lines" in plan.lines[-1][1]


@pytest.mark.parametrize(
    ("script", "ending"),
    [
        ("while True:\n    x = 1\n", None),
        ("n = 0\nwhile True:\n    n = n + 1\n", "limit of 50000 steps"),
        ("x = 'a' * 10**9\n", "MemoryError: value too large for the simulated interpreter"),
        ("x = 9 ** 9 ** 9\n", "MemoryError: value too large for the simulated interpreter"),
        ("import socket\n", "uses 'socket'"),
        ("class A:\n    pass\n", "uses 'class'"),
    ],
    ids=["idle-loop", "busy-counter", "huge-string", "huge-number", "socket", "class"],
)
def test_scripts_cannot_hang_or_eat_the_sandbox(script: str, ending: str | None) -> None:
    plan = interpret({"command": ["python", "-c", script]})
    if ending is None:
        assert plan.seconds is FOREVER and plan.lines == ()
    else:
        assert ending in plan.lines[-1][1]


def test_a_loop_after_a_pause_repeats_from_where_it_started() -> None:
    script = (
        'import time\nprint("boot")\ntime.sleep(5)\nwhile True:\n    print("tick")\n'
        "    time.sleep(3)\n"
    )
    plan = interpret({"command": ["python", "-c", script]})
    assert plan.lines == ((0.0, "boot"),) and plan.seconds is FOREVER
    assert (plan.loop, plan.loop_period, plan.loop_start) == (("tick",), 3.0, 5.0)


def test_sh_runs_a_mounted_script_file_and_node_says_it_is_not_simulated() -> None:
    files = {"/scripts/run.sh": "#!/bin/sh\necho from file\nsleep 2\nexit 4\n", "/app.js": "x"}
    plan = interpret({"command": ["sh", "/scripts/run.sh"]}, None, inside(files))
    assert (plan.lines, plan.seconds, plan.exit_code) == (((0.0, "from file"),), 2.0, 4)
    node = interpret({"command": ["node", "/app.js"]}, None, inside(files))
    assert node.seconds is FOREVER and "node scripts are not simulated" in node.lines[0][1]
    assert interpret({"command": ["sh", "/image/own.sh"]}, None, inside(files)).own_process


def test_the_common_subset_computes_as_python_does() -> None:
    script = (
        "import json, math\n"
        'd = {"a": [1, 2, 3]}\n'
        "print(json.dumps(d), math.sqrt(16), sum(d['a']), len('abc'))\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('caught', e)\n"
        "for i in range(3):\n    if i == 1:\n        continue\n    print(i)\n"
        "def square(x, n=2):\n    return x ** n\n"
        "print([square(x) for x in range(4)], sorted([3, 1, 2]), '{}-{}'.format(1, 'b'))\n"
        "print(open('/data.txt').read().strip(), f'{2.5:.2f}', isinstance(1, int))\n"
        "print('ab'.center(6, '*'), '7'.zfill(3), 'x'.ljust(3) + '|')\n"
    )
    plan = interpret({"command": ["python", "-c", script]}, None, inside({"/data.txt": "hi\n"}))
    assert [line for _, line in plan.lines] == [
        '{"a": [1, 2, 3]} 4.0 6 3',
        "caught division by zero",
        "0",
        "2",
        "[0, 1, 4, 9] [1, 2, 3] 1-b",
        "hi 2.50 True",
        "**ab** 007 x  |",
    ]
    assert (plan.seconds, plan.exit_code) == (0.0, 0)
