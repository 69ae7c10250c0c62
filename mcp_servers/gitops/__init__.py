"""The gitops MCP server: a git repository of manifests as the desired state of a cluster.

Engine modules (`repo`, `yamledit`, `providers`, `drift`, `sync`) are plain typed Python; `server`
is the thin FastMCP layer over them and `__main__` runs it over stdio.
"""
