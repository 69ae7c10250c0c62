"""The policy domain: documents, CEL conditions, evaluation, negotiation, approvals, the audit log
and the stores that keep them.

Plain typed Python with no MCP in it. The policy MCP server (`mcp_servers.policy`) is its face
to agents and hosts; the kube server's gate, `kubecrew policy` and the approval channels use it
directly. Agents may import its documents and records (types), never its stores: they reach the
store through the policy server, as any other host does.

    documents/   the Kubernetes-style policy kinds (pydantic, strict: a typo is an error),
                 with their selectors and maintenance windows
    cel          compiling, checking and running the CEL conditions rules carry
    loading      files and directories -> a PolicySet, or precise one-line problems
                 (fields: validation errors as YAML paths and lines)
    catalog      the PolicySet: validated documents and where each came from
    actions      the typed Action under evaluation and the CEL input built from it
    checks/      what each kind says about one action, as findings citing policy and rule
    resolution   findings -> one verdict, by the PriorityPolicy's order of concerns
    evaluation   the dry run: which policies apply, which rules fire, who the stakeholders are
    explaining   a policy in words, rule by rule; reporting: an evaluation report in words
    proposals    the negotiation's records: Proposal, Evaluation, Decision, transcript events
    negotiation  stakeholders' automatic answers, counter rounds, one decision per proposal;
                 an escalation opens an approval request
    approvals    durable ApprovalRequests: who may answer, what an answer or expiry settles,
                 waiting for the answer exactly once
    audit        the hash-chained audit log's records, what each store write records, verify
    settings     how a store is reached and who acts on it (a person or an agent)
    store/       the Store interface (base), the embedded SQLite backend (sqlite, sqlite_*),
                 the Kubernetes custom-resource backend (kubernetes, kube_*), and the store
                 on a thread of its own for callers on an event loop (thread)
"""
