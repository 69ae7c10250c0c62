"""The policy MCP server: the shared policy store for any MCP host, as thin FastMCP tools.

The tools read policy documents and run the dry run (`tools_policies`), propose and read
proposals (`tools_proposals`), and list and answer approval requests and read the audit log
(`tools_approvals`). Identity is configuration (`core.policy.settings`): the server acts as one
agent or one person, whoever calls its tools. What is registered says what that identity may do:

    every server      list_policies get_policy explain_policy evaluate_action
                      get_proposal list_proposals evaluate_proposal
                      list_approvals audit_query audit_verify
    unless read-only  propose, claim_approval (the proposer takes up an ended request, once)
    unless read-only, a person's or the org's delegated agent's (the PriorityPolicy's
    arbiter, an approval rule's agents)   answer_approval

Policies are loaded once at start (a bad file stops the start, naming the file, line and
field); the store is opened once and lives on its own thread until the process ends.
Errors are the `core.errors` tree; FastMCP returns them as `isError` results whose text is
the message, which says what to do next (PermissionDenied for a person who is no approver,
Conflict for a request that already ended or expired).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from mcp.server.fastmcp import FastMCP

from core.policy.loading import load
from core.policy.settings import PolicySettings, claimed_identity, vouched_identity
from core.policy.store import open_store
from core.policy.store.thread import StoreThread
from mcp_servers.common.tools import new_server
from mcp_servers.policy import tools_approvals, tools_policies, tools_proposals
from mcp_servers.policy.tools_base import Deps

INSTRUCTIONS = """The shared policy store. Before changing something another team owns, dry-run
it with `evaluate_action`, then `propose` it: the stakeholders' policies answer at once and the
decision says whether to act, on which action (a counter-offer may change it), or that a person
decides (an approval request). `explain_policy` says what a cited rule means; `get_proposal`
shows a transcript; `list_approvals` / `answer_approval` are for approvers; `audit_query` shows who
did what and why. You never say who you are: this server's configuration does."""


def build(settings: PolicySettings, environ: Mapping[str, str] = os.environ) -> FastMCP:
    """The server for `settings`; a ToolError when policies, store or identity are unusable."""
    policies = load(settings.policy_paths(environ))
    claimed = claimed_identity(settings, environ)
    store = StoreThread(lambda: open_store(settings.store, environ))
    try:
        identity = store.call(lambda s: vouched_identity(claimed, settings, s))
    except BaseException:
        store.close()
        raise
    deps = Deps(settings=settings, policies=policies, identity=identity, store=store)
    mcp = new_server("kubecrew-policy", INSTRUCTIONS)
    tools_policies.register(mcp, deps)
    tools_proposals.register_reads(mcp, deps)
    tools_approvals.register_reads(mcp, deps)
    if not settings.read_only:
        tools_proposals.register_propose(mcp, deps)
        if tools_approvals.answers(identity, policies):
            tools_approvals.register_answer(mcp, deps)
    return mcp
