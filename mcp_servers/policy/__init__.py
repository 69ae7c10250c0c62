"""The shared policy store's engine: policy documents, CEL conditions, loading and evaluation.

Plain typed Python, no MCP and no cluster access: the policy MCP server, the negotiation protocol,
approvals and the audit log build on these modules, and `kubecrew policy` drives them offline.

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
    negotiation  stakeholders' automatic answers, counter rounds, one decision per proposal
    store/       the Store interface (base) and its embedded SQLite backend (sqlite)
"""
