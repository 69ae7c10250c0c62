"""Every `kubecrew` command starts by importing the command line; what only some commands' work
needs (LangGraph and LangChain, the Kubernetes client) is imported when that work starts, not by
the command line itself, nor by an MCP server that builds and lists its tools. The time is
measured in `benchmarks` (an MCP server's start-up); here, the packages those imports leave
loaded."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("langgraph", "langchain_core", "langsmith", "kubernetes", "cel", "prompt_toolkit")


def loaded(imports: str) -> list[str]:
    """The heavy packages left loaded by `imports`, in a fresh interpreter."""
    script = (
        f"import sys\n{imports}\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


@pytest.mark.parametrize(
    "imports",
    [
        "import kubecrew.cli.main",
        # What `kubecrew mcp kube` imports to build its server and list its tools.
        "import kubecrew.cli.main\nfrom mcp_servers.kube.server import build",
    ],
)
def test_starting_imports_no_agent_runtime_kubernetes_client_or_cel_engine(imports: str) -> None:
    assert loaded(imports) == []
