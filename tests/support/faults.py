"""Faults of the shop's web, committed to its GitOps repository and synced, as a person's bad
merge would be: a crash loop from a bad command, an OOM kill, a readiness probe on a wrong port.
Each waits until the kube server's `diagnose` sees the fault (the cluster is alive: kills and
back-offs take their time) and returns what a right answer names. The loop heals them planned
deterministically (tests/agents/runtime/loop) and by a model (tests/agents/runtime/model_loop)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor
from tests.support.gitops import git
from tests.support.team import WEB, Team

IMAGE_LINE = "          image: nginx:1.27  # pinned\n"
TEMPLATE_LABELS = "    metadata:\n      labels:\n        app: web\n"


@dataclass(frozen=True)
class Fault:
    code: str  # the finding diagnose reports
    cause: str  # words the answer's first line must hold: the real cause
    fix: str  # the title of the fix that heals it
    broken: str = ""  # the manifest's broken line, which the healing PR replaces
    mended: str = ""  # that line in the healed manifest


def commit_manifest(team: Team, message: str, edit: Callable[[str], str]) -> None:
    """Change web's manifest on main as a person merging their own change does, and sync."""
    git(team.repo, "reset", "-q", "--hard", "main")
    file = team.repo / WEB
    before = file.read_text()
    after = edit(before)
    assert after != before, "the edit changed nothing"
    file.write_text(after)
    git(team.repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qam", message)
    team.sync()


def bad_command(team: Team, sandbox: Sandbox) -> Fault:
    command = '          command: ["sh", "-c", "echo config is broken; exit 3"]\n'
    commit_manifest(
        team,
        "web: run the new entry point",
        lambda text: text.replace(IMAGE_LINE, "          image: busybox:1.36\n" + command),
    )
    Doctor(sandbox).finding("CrashLoopBackOff", namespace="shop", kind="deployment", name="web")
    return Fault(
        "CrashLoopBackOff",
        "keeps exiting (code 3)",
        fix="restore the containers of revision 1 in Deployment web",
        broken="exit 3",
        mended="image: nginx:1.27",
    )


def oom(team: Team, sandbox: Sandbox) -> Fault:
    worker = (
        "          image: ghcr.io/kubecrew/shop-worker:1.0.0\n"
        "          resources:\n"
        "            requests: {memory: 64Mi}\n"
        "            limits: {memory: 100Mi}\n"
    )
    commit_manifest(team, "web: the new app", lambda text: text.replace(IMAGE_LINE, worker))
    Doctor(sandbox).finding("OOMKilled", namespace="shop", kind="deployment", name="web")
    return Fault(
        "OOMKilled",
        "more memory than its limit (100Mi)",
        fix="raise the memory limit of container web to 150Mi",
        broken="limits: {memory: 100Mi}",
        mended="limits: {memory: 150Mi}",
    )


def failing_probe(team: Team, sandbox: Sandbox) -> Fault:
    probe = (
        "          ports: [{containerPort: 80}]\n"
        "          readinessProbe:\n"
        "            httpGet: {path: /, port: 8081}\n"
        "            periodSeconds: 2\n"
    )
    commit_manifest(
        team, "web: readiness", lambda text: text.replace(IMAGE_LINE, IMAGE_LINE + probe)
    )
    Doctor(sandbox).finding("ProbeFailing", namespace="shop", kind="deployment", name="web")
    return Fault(
        "ProbeFailing",
        "port 8081 is not a container port",
        fix="point the readinessProbe of web at port 80",
        broken="httpGet: {path: /, port: 8081}",
        mended="httpGet: {path: /, port: 80}",
    )


def missing_config(team: Team, sandbox: Sandbox) -> Fault:
    """web reads its settings from a ConfigMap nobody created: the container cannot start. A
    ConfigMap with empty placeholder values is no fix to apply unattended; the revision before
    the reference ran, so its containers are written back to the manifest."""
    settings = "          envFrom:\n            - configMapRef: {name: web-settings}\n"
    commit_manifest(
        team, "web: read settings", lambda text: text.replace(IMAGE_LINE, IMAGE_LINE + settings)
    )
    Doctor(sandbox).finding("MissingConfigMap", namespace="shop", kind="deployment", name="web")
    return Fault(
        "MissingConfigMap",
        "web-settings",
        fix="restore the containers of revision 1 in Deployment web",
        broken="web-settings",
        mended="image: nginx:1.27",
    )
