"""What every agent shares: its tools (`toolbox`), its two brains (`brain`), the intent grammar
(`intents`), skills, its role file (`roles`), durable state and memory (`persistence`, `memory`).

Nothing here knows which agent runs it; each agent package (`dev_team/`, later `platform/` and
`cluster_operator/`) builds its own graph on these pieces.
"""
