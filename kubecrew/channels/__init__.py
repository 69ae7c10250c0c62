"""Where people talk to the crew.

frontdoor   every conversation's one door: approval commands, routing to an agent, one
            LangGraph thread per conversation (used by `kubecrew chat`, Slack and evals)
pr/         the pull-request channel: reviews answer approval requests, `@kubecrew`
            comments amend a change, a newer change supersedes an open one
slack/      the crew in Slack, on Slack's Bolt framework
"""
