"""The Cluster Operator's words to people and to the model, apart from its procedures' answers.

`UNSUPPORTED` is what a person reads when a question is none the agent reads (`intents`): the
questions it can answer, in their words. `ASKS` is what the model is asked to read, with a model
brain, before a procedure runs (a patrol, a capacity review, a fleet survey); a question is
asked in the person's own words. The system prompt is `agents.runtime.modelsteps.system_prompt`,
as for every agent; the procedures' answers are composed in `report` (and by
`restarts.said`, `consolidation.said`).
"""

from __future__ import annotations

UNSUPPORTED = (
    "I look after nodes and capacity. Ask me 'which nodes are unhealthy?', 'what would "
    "draining node node-1 do?', 'where can we save cost?', 'plan maintenance of node-3 for a "
    "kernel upgrade', 'are the nodes ready to serve?', 'are we ready to upgrade to 1.38?', "
    "'upgrade the cluster to 1.38', 'which nodes need patching?', 'scale the workers pool to "
    "5', 'cordon node-2' or 'how are the clusters?'."
)

ASKS: dict[str, str] = {
    "patrol": (
        "Patrol the nodes: read which ones report failing conditions (NotReady, pressure, a "
        "hardware fault) and, for each, what draining it would move: its pods, their "
        "PodDisruptionBudgets, training Jobs and their checkpoints."
    ),
    "capacity": (
        "Review capacity: read which Deployments use far less CPU than they request (their "
        "replicas, requests and the pods' usage) and the policies that bound their replicas "
        "and their requests."
    ),
    "fleet": "Survey the clusters: read each one's node health and load.",
}  # what the model is asked to read for a procedure; a question is asked in its own words
