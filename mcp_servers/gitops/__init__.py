"""The gitops MCP server: a git repository of manifests as the desired state of a cluster.

Engine modules (`repo`, `yamledit`, `kustomize`, `providers`, `drift`, `adopt`, `sync`,
`deferral`) are plain typed Python; `server`, `tools_cluster` and `tools_change` are the thin
FastMCP layer over them and `__main__` runs it over stdio or streamable HTTP.
"""
