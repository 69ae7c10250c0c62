"""`kubecrew slack`: the crew in Slack, built on Slack's Bolt framework.

    command.py       the `kubecrew slack` command: options -> settings -> a running service
    settings.py      credentials (from the environment only) and options
    deps.py          what handlers need, as one object: people, policies, store, ledger
    app.py           the Bolt app, token check, HTTP events mode and Socket Mode
    posts.py         the poster: one message per approval request, kept in step with the store
    ledger.py        which message shows which request (SQLite, or $KUBECREW_DATABASE_URL), so
                     restarts never repost
    clicks.py        Approve / Deny: who clicked, may they, and the message updated or explained
    approvals_ui.py  Block Kit for requests and refusals (escaped: text is never markup)
    owners.py        the owners' channel of a request's target (Ownership spec.slack)
    conversation.py  the seam for mentions and DMs: a Router the agent runtime provides

Approvals are the policy store's (`core.policy.approvals`): this package only shows them
and carries clicks to `approvals.answer`, so Slack authorises exactly as every other channel.
Importing this package imports nothing heavy; `kubecrew --help` stays quick.
"""
