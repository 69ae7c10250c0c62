"""The Dev Team agent: the developers' peer for their workloads (role and rules in AGENTS.md).

This slice answers "why is my service failing?" (`graph`): understand the question, ask when a
name is ambiguous, investigate through the kube (and metrics) tools, answer with evidence. The
remediation loop (mutate, validate) and the other intents (deploy, probers, drift, right-size)
plug in as further routes out of `understand` and further nodes after `investigate`.

The work on one named workload is a registry filled by its entries (`tasks`): each task module
registers itself there on import, and `tasks` imports none of them. They are imported here, so
importing any module of the package (the graph's first of all) registers every task.
"""

from agents.dev_team import drift, probing, resilience, rightsize

__all__ = ["drift", "probing", "resilience", "rightsize"]  # the registered tasks' modules
