"""The metrics MCP server: Prometheus (and metrics.k8s.io without it) for golden signals,
utilization, node pressure and SLO burn rates. `server.build(settings)` makes the FastMCP server;
`engine.MetricsEngine` answers; `python -m mcp_servers.metrics` serves it over stdio."""
