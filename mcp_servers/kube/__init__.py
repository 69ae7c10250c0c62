"""The kube MCP server: cluster access with the official client, diagnosis and fixes."""
