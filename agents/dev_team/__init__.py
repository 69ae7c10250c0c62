"""The Dev Team agent: the developers' peer for their workloads (role and rules in AGENTS.md).

This slice answers "why is my service failing?" (`graph`): understand the question, ask when a
name is ambiguous, investigate through the kube (and metrics) tools, answer with evidence. The
remediation loop (mutate, validate) and the other intents (deploy, probers, drift, right-size)
plug in as further routes out of `understand` and further nodes after `investigate`.
"""
