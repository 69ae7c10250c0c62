"""The Cluster Operator agent: nodes, capacity and cost (role and rules in AGENTS.md).

This slice serves two procedures on the agent runtime: the node patrol and migration off a
degrading node (`nodes`, `migration`), and the capacity review that proposes downscales through
the policy store (`capacity`). `graph` routes a conversation to them; `conversation` wires one.
It acts only through MCP tools; the kube server's gate and the policy store hold the safety.
"""
