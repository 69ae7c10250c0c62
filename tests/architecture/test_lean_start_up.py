"""Every `kubecrew` command starts by importing the command line; what only some commands' work
needs (LangGraph and LangChain, the Kubernetes client) is imported when that work starts, not by
the command line itself. Measured in `benchmarks` (an MCP server's start-up); here, the modules
a bare import of the command line leaves loaded."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("langgraph", "langchain_core", "langsmith", "kubernetes")
LOADED = (
    "import sys, kubecrew.cli.main\n"
    f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
)


def test_the_command_line_imports_no_agent_runtime_or_kubernetes_client() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == []
