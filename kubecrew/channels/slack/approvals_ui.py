"""How an approval request looks in Slack: Block Kit for the message, and the refusals.

One message per request, rendered from the request alone, so posting it and every later update
(an answer, an end decided in another channel, an expiry) give the same picture of the same
state. A pending request has Approve / Deny buttons whose value is the request id and nothing
else; an ended one has none and says who ended it. A grant is not always the end of the story:
when the target was approved for another proposal while this one waited, the store rejects the
proposal as superseded, and the message says that (the proposal's final decision decides),
not "Granted".

Everything shown comes from the store, and parts of it (a proposal's rationale, a reason) were
written by agents from cluster data: it is escaped as Slack asks (`&`, `<`, `>`), so no text can
mention a channel, forge a link or render as a button. What is shown is never a secret: the
action, the policy reasons and citations, the approvers and the expiry. The approvers shown are
the people who may click; an agent the org lets settle the request (its arbiter) is said apart,
since no one can ask an agent to click.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict

from core.policy import approvals
from core.policy.findings import Citation
from core.policy.proposals import ApprovalAnswer, ApprovalRequest, Decision

GRANT, DENY = "kubecrew-approval-grant", "kubecrew-approval-deny"  # the buttons' action_ids
BLOCK = "kubecrew-approval"
_TEXT_LIMIT = 2900  # Slack refuses a section text over 3000 characters
_ICONS = {"pending": ":raised_hand:", "granted": ":white_check_mark:", "denied": ":no_entry:"}
_ICONS["expired"] = ":hourglass:"
SUPERSEDED = ":twisted_rightwards_arrows:"

Block = dict[str, Any]


class Message(TypedDict):
    text: str  # the notification and screen-reader text
    blocks: list[Block]


def escape(text: str) -> str:
    """Slack's mrkdwn escaping: the text stays text (no mentions, links or formatting tricks)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def message(
    request: ApprovalRequest,
    citations: Sequence[Citation] = (),
    *,
    decision: Decision | None = None,
) -> Message:
    """The message for `request` as it stands: buttons while pending, the outcome once ended;
    `decision` is its proposal's final one (what a grant came to)."""
    summary = f"{escape(request.action.describe())} (proposal `{escape(request.proposal)}`)"
    superseded = _superseded(request, decision)
    icon = SUPERSEDED if superseded else _ICONS[request.state]
    title = headline(request, decision)
    blocks: list[Block] = [
        _section(f"{icon} *{title}* · `{escape(request.id)}`"),
        _section(f"*{summary}*"),
        {
            "type": "section",
            "fields": [
                _mrkdwn(f"*Approvers*\n{_approvers(request)}"),
                _mrkdwn(f"*Expires*\n{_when(request.expires_at)}"),
            ],
        },
    ]
    if request.reasons:
        reasons = "\n".join(f"• {escape(reason)}" for reason in request.reasons)
        blocks.append(_section(f"*Why a person decides*\n{reasons}"))
    if citations:
        cited = "; ".join(escape(str(citation)) for citation in citations)
        blocks.append({"type": "context", "elements": [_mrkdwn(f"Cites: {cited}")]})
    if request.answers:
        said = "\n".join(_answer_line(given) for given in request.answers)
        blocks.append({"type": "context", "elements": [_mrkdwn(said)]})
    if superseded:
        blocks.append(_section(f"*Not carried out*\n{escape(superseded)}"))
    if not request.ended:
        blocks.append(_buttons(request.id))
    text = f"{title}: {request.action.describe()} ({request.id})"
    return Message(text=escape(text), blocks=blocks)


def headline(request: ApprovalRequest, decision: Decision | None = None) -> str:
    """`Approval needed`, or how it ended: `granted by alice`, `denied by bob`, `expired ...`,
    or `granted by alice ... but superseded` when the grant came too late to count."""
    if request.state == "pending":
        return "Approval needed"
    if request.state == "expired":
        return f"Expired unanswered at {_when(request.expires_at)}"
    verdict = "grant" if request.state == "granted" else "deny"
    names = [given.by.name for given in request.answers if given.verdict == verdict]
    channels = sorted({given.via for given in request.answers if given.verdict == verdict})
    said = f"{request.state.capitalize()} by {', '.join(names)} via {', '.join(channels)}"
    return said + (", but superseded" if _superseded(request, decision) else "")


def _superseded(request: ApprovalRequest, decision: Decision | None) -> str:
    """Why a granted request's proposal was still rejected ("" when it was not)."""
    if request.state != "granted" or decision is None or decision.outcome != "rejected":
        return ""
    return next((r for r in decision.reasons if r.startswith("superseded")), decision.describe())


def refusal(text: str) -> Message:
    """An ephemeral reply to the one person whose click was not taken."""
    return Message(text=escape(text), blocks=[_section(f":warning: {escape(text)}")])


def _answer_line(given: ApprovalAnswer) -> str:
    verb = "granted" if given.verdict == "grant" else "denied"
    line = f"{verb} by {given.by.name} via {given.via} at {_when(given.at)}"
    return escape(line + (f": {given.reason}" if given.reason else ""))


def _approvers(request: ApprovalRequest) -> str:
    """The people who may click, and apart what an agent may do (no one clicks for an agent)."""
    people, agents = request.approvers.people(), request.approvers.agents_settle()
    if not people:
        return escape(agents)
    shown = f"{people} ({request.min_approvals} needed)"
    return escape(shown + (f"\n{agents[0].upper()}{agents[1:]}" if agents else ""))


def who_answers(request: ApprovalRequest) -> str:
    """For a person refused: who may answer (people only), and whether an agent may settle it."""
    said = approvals.needs(request.approvers)
    return said if request.approvers.people() else f"{said}; no one answers it here"


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M %Z").strip()


def _buttons(request_id: str) -> Block:
    deny_confirm = {
        "title": _plain("Deny this request?"),
        "text": _plain("The proposal is rejected at once; the agent may propose again."),
        "confirm": _plain("Deny"),
        "deny": _plain("Cancel"),
    }
    return {
        "type": "actions",
        "block_id": BLOCK,
        "elements": [
            {
                "type": "button",
                "action_id": GRANT,
                "text": _plain("Approve"),
                "style": "primary",
                "value": request_id,
            },
            {
                "type": "button",
                "action_id": DENY,
                "text": _plain("Deny"),
                "style": "danger",
                "value": request_id,
                "confirm": deny_confirm,
            },
        ],
    }


def _section(text: str) -> Block:
    clipped = text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"
    return {"type": "section", "text": _mrkdwn(clipped)}


def _mrkdwn(text: str) -> Block:
    return {"type": "mrkdwn", "text": text}


def _plain(text: str) -> Block:
    return {"type": "plain_text", "text": text}
