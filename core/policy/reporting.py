"""An evaluation report in words: the dry run as `kubecrew policy check` prints it.

Plain lines (no terminal markup), so the same text serves a terminal, an MCP tool's text
content, and a chat message. The structured report stays the source of truth; this only reads it.
"""

from __future__ import annotations

from core.policy.findings import EvaluationReport, Verdict

_MARK = {
    "reject": "REJECT",
    "support": "SUPPORT",
    "warn": "WARN",
    "require-approval": "APPROVAL",
    "defer": "DEFER",
    "error": "ERROR",
    "pass": "pass",
}


def render(report: EvaluationReport, *, passed: bool = True) -> list[str]:
    """The report as lines; `passed=False` leaves out the rules that did not fire."""
    lines = [f"Action: {report.action.describe()}"]
    for holder in report.stakeholders:
        role = "owner" if holder.owner else "stakeholder"
        people = f"; {holder.humans.describe()}" if holder.humans else ""
        agent = f"agent {holder.agent}" if holder.agent else "no agent"
        lines.append(f"{role.capitalize()}: team {holder.team} ({agent}{people})")
    if not report.stakeholders:
        lines.append("Owner: none (no Ownership selects this target)")
    lines.append("Policies that apply:")
    lines += [f"  {a.kind} {a.policy}: {a.reason}" for a in report.applicable] or ["  none"]
    shown = report.findings if passed else report.fired()
    lines.append("Rules:")
    for found in shown:
        concern = found.concern or "change"
        lines.append(f"  {_MARK[found.effect]:<8} {concern:<11} {found}")
    if not shown:
        lines.append("  none fired")
    lines.append(f"Concerns, by {report.priority_source}: {' > '.join(report.priority)}")
    for verdict in report.concerns:
        note = f" ({verdict.note})" if verdict.note else ""
        lines.append(f"  {verdict.concern:<11} {verdict.opinion}{note}")
    return [*lines, *verdict_lines(report.verdict)]


def verdict_lines(verdict: Verdict) -> list[str]:
    headline: str = verdict.outcome
    if verdict.counter is not None:
        headline += f" {verdict.counter.describe()}"
    lines = [f"Verdict: {headline}"]
    lines += [
        f"  needs {need.min_approvals} approval(s) from {need.approvers.describe()} "
        f"({need.citation})"
        for need in verdict.approvals
    ]
    if verdict.not_before is not None:
        lines.append(f"  not before {verdict.not_before.isoformat()} (maintenance window)")
    lines += [f"  because {reason}" for reason in verdict.reasons]
    return lines
