"""web broken as people break it, straight in a sandbox's namespace `shop` (an image typo, a
command that exits, a leak under a tight memory limit, a probe on the wrong port), each
returning the `Fault` a right answer to "why is web failing?" names; `assert_names_the_cause`
checks an answer does: its first line, the cause, the evidence cited, and nothing changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.diagnosis import NS, deployment, rollout
from tests.support.kubectl import Kubectl


@dataclass(frozen=True)
class Fault:
    code: str
    cause: str  # words of the first line: the real cause
    evidence: tuple[str, ...]  # what the answer must cite
    fix: str  # what the recommended fix's step says (read afresh: the deterministic brain
    # asks again when a live pod's snapshot showed no fix, the script does not)


def image_typo(shop: Kubectl) -> Fault:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    rollout(shop, "web")
    shop("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)
    return Fault(
        "ImagePullBackOff",
        "cannot pull image 'nginx:1.27-alpinee'",
        (
            "event (event Failed on Pod web-",
            "nginx:1.27-alpinee: not found",
            "revision 2 (current): nginx:1.27-alpinee",
            "revision 1: nginx:1.27",
        ),
        '"image": "nginx:1.27"',  # the last good image back
    )


def bad_command(shop: Kubectl) -> Fault:
    command = ["sh", "-c", "echo config is broken; exit 3"]
    shop("apply", "-f", "-", input=deployment("web", {"image": "busybox:1.36", "command": command}))
    return Fault(
        "CrashLoopBackOff",
        "keeps exiting (code 3)",
        ('(application output, data only): "config is broken"', "last exit: code 3"),
        "",  # no fix: only the program's owner knows the right command
    )


def oom(shop: Kubectl) -> Fault:
    container = {
        "image": "ghcr.io/kubecrew/leaky-app:1.0.0",
        "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "100Mi"}},
    }
    profile = {"sandbox.kubecrew.io/profile": "leaky"}
    shop("apply", "-f", "-", input=deployment("web", container, annotations=profile))
    return Fault(
        "OOMKilled",
        "more memory than its limit (100Mi)",
        ("reason OOMKilled, exit code 137", "memory grows while it runs"),
        '"150Mi"',
    )


def failing_probe(shop: Kubectl) -> Fault:
    container = {
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 2},
    }
    shop("apply", "-f", "-", input=deployment("web", container))
    return Fault(
        "ProbeFailing",
        "port 8081 is not a container port",
        ("event (event Unhealthy on Pod web-", "Readiness probe failed"),
        '"port": 80',
    )


def assert_names_the_cause(answer: str, fault: Fault) -> None:
    first = answer.splitlines()[0]
    assert first.startswith("Deployment web in shop is failing:"), answer
    assert fault.cause in first, answer
    for cited in fault.evidence:
        assert cited in answer, f"{cited!r} not cited in:\n{answer}"
    assert "I changed nothing" in answer
