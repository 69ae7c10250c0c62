"""MCP tool servers, one folder per capability (kube, gitops, metrics, policy): each an engine in
plain Python plus a thin FastMCP `server.py`, usable by our agents and by any MCP host. Arrives with
the MCP servers issue."""
