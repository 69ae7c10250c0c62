"""The Platform agent: org policy and governance (role and rules in AGENTS.md).

This slice serves egress propagation: each org EgressPolicy rendered into the NetworkPolicies of
the namespaces it covers (`coverage`, `rendering`), delivered by PR to the team's GitOps
repository or by a gated apply (`delivery`), and confirmed from live state (`enforcement`), with
the owners told through the policy store (`propagation`). Propagation, audits and blueprints
cover every cluster of a fleet, each changed only through a repository that syncs to it
(`fleet`). `graph` routes a run; `conversation` wires one. It acts only through MCP tools; the
servers' gates and the policy store hold safety.
"""
