"""Diagnosing a broken workload as an agent does, through the kube server's MCP tools: `Doctor`
waits for `diagnose` to report a finding, picks a `recommend`ed fix and applies its steps through
the write tools; `deployment` writes the one-container Deployment manifests the faults are
planted in (namespace `NS` unless told), and `rollout` waits for one to roll out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

NS = "shop"
Fix = dict[str, Any]


class Doctor:
    """diagnose and recommend through the kube server's MCP tools, and fixes applied through
    its write tools, step by step, as an agent would."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.tools = KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig))

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.tools.ok(tool, **arguments)

    def finding(self, code: str, *, timeout: float = 60, **scope: Any) -> dict[str, Any]:
        """Wait until diagnose reports `code` in the scope, and return that finding."""

        def found() -> dict[str, Any]:
            findings = self.ok("diagnose", **scope)["findings"]
            return next((f for f in findings if f["code"] == code), {})

        return eventually(found, timeout=timeout, what=f"diagnose finds {code} in {scope}")

    def codes(self, **scope: Any) -> set[str]:
        return {f["code"] for f in self.ok("diagnose", **scope)["findings"]}

    def fixes(self, code: str, **scope: Any) -> list[Fix]:
        fixes = [f for f in self.ok("recommend", **scope)["fixes"] if f["finding"] == code]
        assert fixes, f"no fix for {code} in {scope}"
        return fixes

    def fix(self, code: str, **scope: Any) -> Fix:
        """The top-ranked fix for `code`."""
        return self.fixes(code, **scope)[0]

    def apply(self, fix: Fix) -> list[dict[str, Any]]:
        """Call the fix's steps, in order, through the write tools."""
        assert fix["steps"], f"a fix without steps: {fix}"
        return [self.ok(step["tool"], **step["arguments"]) for step in fix["steps"]]


def tool(fix: Fix) -> list[str]:
    return [step["tool"] for step in fix["steps"]]


def first(fixes: list[Fix], test: Callable[[Fix], bool]) -> Fix:
    chosen = [f for f in fixes if test(f)]
    assert chosen, f"no such fix among {fixes}"
    return chosen[0]


def deployment(
    name: str,
    container: dict[str, Any],
    *,
    namespace: str = NS,
    replicas: int = 1,
    pod: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> str:
    """A Deployment manifest (JSON) with one container `main`; `pod` adds pod spec fields,
    `annotations` go on the pod template."""
    template: dict[str, Any] = {"annotations": annotations} if annotations else {}
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, **template},
                "spec": {"containers": [{"name": "main", **container}], **(pod or {})},
            },
        },
    }
    return json.dumps(manifest)


def rollout(kubectl: Kubectl, name: str, namespace: str = NS) -> None:
    kubectl.run("rollout", "status", f"deployment/{name}", "-n", namespace, "--timeout=60s")
