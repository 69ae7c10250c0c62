"""The Platform agent's words to people and to the model, apart from its procedures' answers.

`UNSUPPORTED` is what a person reads when a question is none the agent reads (`intents`): the
questions it can answer and the procedure it runs, in their words. `ASKS` is what the model is
asked to read, with a model brain, before a procedure runs (a propagation, an audit, a blueprint
sync, the escalations; the graph adds the one namespace a scoped run covers); a question is
asked in the person's own words. The system prompt is `agents.runtime.modelsteps.system_prompt`,
as for every agent; the procedures' answers are composed in `report`.
"""

from __future__ import annotations

UNSUPPORTED = (
    "I look after org policy. Ask me 'which namespaces are not compliant with the egress "
    "policy?', 'audit the fleet', 'audit shop', 'sync blueprints', 'is shop on the "
    "blueprint?' or 'answer escalations', or run a propagation (`propagate`) to render, "
    "deliver and confirm egress."
)

ASKS: dict[str, str] = {
    "propagate": (
        "Propagate the org's egress policies: read each EgressPolicy, the namespaces it covers "
        "(by name or by their labels) and the NetworkPolicies live in them."
    ),
    "audit": (
        "Audit the fleet: read the role bindings, the workloads (their limits, probes, "
        "budgets, security contexts and images) and the ImagePolicy."
    ),
    "blueprints": (
        "Check the namespaces against their NamespaceBlueprint: read the blueprints and the "
        "quotas, limit ranges, network policies and role bindings live in the namespaces."
    ),
    "escalations": (
        "Answer the escalations org policy settles: read the pending approval requests that "
        "name you, their proposals, and the PriorityPolicy."
    ),
}  # what the model is asked to read for a procedure; a question is asked in its own words
