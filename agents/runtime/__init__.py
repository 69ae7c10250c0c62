"""What every agent shares; nothing here knows which agent runs it (import-linter holds that).

    contract      the one `Outcome`, the `Conversation` protocol, `Agent` (what the registry
                  lists) and what the two brains mean
    registry      finding an agent by name, from the entry points the agents declare
    conversation  the one run loop: a graph streamed on a thread, its state read as an Outcome
    wiring        what a conversation is opened with (`AgentContext`, `agent_parts`)
    toolbox       the MCP servers, in-process or remote, as the role's allowed tools
    brain         the deterministic planner, or a chat model from KUBECREW_MODEL
    scripted      the scripted chat model tests and evals plan with (the only fake LLM)
    modelsteps    a model's reads before a procedure decides
    identity      each agent's own kubeconfig for the kube server
    skills, roles SKILL.md bundles and AGENTS.md role files
    persistence   checkpoints per thread and the agent's store (SQLite, or PostgreSQL with
                  $KUBECREW_DATABASE_URL, shared by replicas)
    memory        diagnoses remembered by fingerprint
    prices        the unit prices cost estimates use
    loop/         the remediation loop (learn, recommend, plan, decide, mutate, validate)
    notify/       signals turned into incidents, each handed to a handler once

Each agent package (`dev_team/`, `cluster_operator/`, `platform/`) builds its graph on these.
"""
