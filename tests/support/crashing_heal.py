"""A heal run in a process of its own, which a test can have killed by SIGKILL at one tool call.

    python -m tests.support.crashing_heal '{"kubeconfig": ..., "kill_at": "merge_pr", ...}'

Every tool call is appended to `log` (one JSON line, flushed and synced) before it is sent. When
the call names the tool `kill_at`, the process kills itself with SIGKILL right there, before the
call reaches its server: no exception handler, no `finally`, no checkpoint write runs, exactly as
when the machine loses power. The hook lives here, in the test's child, never in product code.
The outcome of a run that survives goes to stdout as JSON. With "book" (an incident book) and no
"thread", the run is booked as `kubecrew heal` books it, so a second run continues a killed one.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from agents.dev_team.heal import heal
from agents.runtime.toolbox import Servers
from core.policy.settings import PolicySettings
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.settings import KubeSettings
from tests.support.team import FAST


def servers(spec: dict[str, Any]) -> Servers:
    """The servers `make_team` (tests/support/team.py) gives a test's own runs, same paths."""
    kubeconfig, policies = Path(spec["kubeconfig"]), tuple(Path(p) for p in spec["policies"])
    return Servers(
        kube=KubeSettings(
            kubeconfig=kubeconfig, policies=policies, policy_store=spec["store"], agent="dev_team"
        ),
        gitops=GitopsSettings(
            repo=Path(spec["repo"]), state_dir=Path(spec["prs"]), kubeconfig=kubeconfig
        ),
        policy=PolicySettings(policies=policies, store=spec["store"], agent="dev_team"),
    )


def main(spec: dict[str, Any]) -> None:
    log = Path(spec["log"])

    def on_call(tool: str, arguments: dict[str, Any]) -> None:
        with log.open("a") as out:
            out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
            out.flush()
            os.fsync(out.fileno())
        if tool == spec.get("kill_at"):
            os.kill(os.getpid(), signal.SIGKILL)

    result = anyio.run(
        lambda: heal(
            "web",
            servers=servers(spec),
            home=Path(spec["home"]),
            settings=FAST,
            thread=spec.get("thread"),
            on_call=on_call,
            book=Path(spec["book"]) if spec.get("book") else None,
        )
    )
    print(json.dumps({"outcome": result.outcome, "nodes": result.nodes, "summary": result.summary}))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
