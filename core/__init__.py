"""Plain libraries every layer above shares, with no MCP and no agent in them.

    errors       the one error tree a tool, an engine or a store reports, each saying what to
                 do next
    connection   the cluster connection: kubeconfig, contexts, the official client's calls and
                 its errors mapped onto the error tree
    quantity     Kubernetes quantities as numbers
    policy/      the policy domain (documents, evaluation, negotiation, approvals, audit,
                 stores)

The MCP servers build their tools on these; `kubecrew` uses them for offline commands and
wiring. Agents may import core's types, never its stores or the cluster connection: they act
through MCP tools only.
"""
