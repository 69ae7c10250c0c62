"""The remediation loop every agent reuses: learn -> recommend -> mutate -> validate -> done, or
roll back and try the next fix, or escalate to a person.

`graph` is the LangGraph subgraph (nodes, typed routes, builder); `state` its checkpointed
state; `ranking` orders fixes by their confidence and by what memory says happened to them
before for the same fingerprint; `mutation` applies and undoes one fix (a GitOps pull request for
a git-managed object, a gated kube write otherwise), idempotently; `direct` judges each gated
write's step before it is made and guards what the loop may delete (its own tools, beyond the
agent's, are AGENTS.md here); `validation` proves a fix held on the cluster's own clock.
Nothing here knows which agent runs it: the agent passes its toolbox and its `learn` procedure
in the `LoopContext`.
"""
