"""kubecrew: an intent-driven operations crew for Kubernetes, with a practice cluster built in.

This package is the front door: the `kubecrew` command line, the demo, and the wiring that puts
the agents (`agents/`) and their tools (`mcp_servers/`) to work. It may import every other layer;
nothing imports it. It reaches a cluster, real or sandbox, only through a kubeconfig.
"""
