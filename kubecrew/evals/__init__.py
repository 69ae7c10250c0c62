"""Evals: scenario files scored on fresh sandboxes (format, world, checks, runs, report).

Front-door code: it builds worlds with the sandbox in-process and drives agents as the CLI does,
so it may import agents, mcp_servers and sandbox; nothing below kubecrew imports it.
"""
