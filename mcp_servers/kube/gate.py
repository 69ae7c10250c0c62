"""The kube server's policy gate: each write call judged by the policies before it is sent, and
recorded in the audit log after it was sent or refused.

A call becomes one or more policy `Action`s on live objects (`calls`: one GET each), which
`evaluation.evaluate` judges as the policy server's dry run would. Only a plain allow lets the
call through; a rejection, a counter-offer, an escalation, a required approval or a closed
maintenance window refuse it with PermissionDenied, citing the rules and saying what to do next
(take the counter-offer, or `propose` through the policy server). A call that carries the id of
an approved proposal is let through without evaluating again when the proposal's decided action
is this very call, it is still the latest approval of its target, and it was not applied before:
that is how a negotiated or person-approved change reaches the cluster, once.

After each real write, failed write and refusal, one "mutation" record per target goes into the
policy store's audit log. Its text is built from the actions (kinds, names, replica counts, a
resize's requests) and error messages, never from manifests or patches, so no Secret value can
reach it. A resize is carried only with the approved values (`differs`: the same quantities).

Each call's judgement is one `policy_decision <tool>` span, and each of its actions' verdicts
a count in `kubecrew_policy_decisions_total` (allow, deny, ask; dry runs marked), whoever asked:
core.telemetry knows no gate.

Knows nothing of MCP (`tools_write.guard` wraps the tools with it). The store lives on a thread
of its own (`core.policy.store.thread`), as in the policy server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from core.connection import Json
from core.errors import NotFound, ToolError
from core.policy.actions import Action, EvaluationRequest, TargetRef
from core.policy.audit import AuditEntry
from core.policy.catalog import PolicySet
from core.policy.checks.change import EVICTIONS_METRIC
from core.policy.evaluation import evaluate
from core.policy.findings import EvaluationReport
from core.policy.loading import load
from core.policy.proposals import ProposalRecord, record_id
from core.policy.store import open_store
from core.policy.store.thread import StoreThread
from core.telemetry import PolicyDecision, Ruling, policy_decision
from mcp_servers.kube.calls import Planned, plan_call
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.writes import Writes

_BLOCKING = ("reject", "require-approval", "defer", "error")
TO_A_PERSON = ("needs approval", "escalate")  # verdicts a person may still turn into a yes
NEXT = (
    "To ask for it anyway, `propose` it through the policy server (kubecrew mcp policy): the "
    "owners' policies answer, or a person decides; once it is approved, call this tool again "
    "with the same arguments and proposal=<its id>."
)


@dataclass(frozen=True)
class Admission:
    """What the gate said about one call: let through or refused, and why."""

    tool: str
    planned: tuple[Planned, ...]
    verdict: str  # "allow", "counter replicas=3", "needs approval", ..., "approved: proposal p-1"
    citations: tuple[str, ...] = ()  # the rules that fired, or that shaped the proposal
    refusal: str = ""  # non-empty: refused; the message for the caller
    proposal: str = ""

    def failure(self, exc: BaseException) -> str:
        """The audit result of a write that failed; a Secret's error text is withheld, since an
        API error may quote the value it refused."""
        if any(p.action.target.kind == "Secret" for p in self.planned):
            return f"failed: {type(exc).__name__} (message withheld for a Secret)"
        message = exc.message if isinstance(exc, ToolError) else ""
        first = message.splitlines()[0] if message else type(exc).__name__
        return f"failed: {first[:300]}"

    def as_dict(self) -> Json:
        out: Json = {"verdict": self.verdict, "citations": list(self.citations)}
        if self.proposal:
            out["proposal"] = self.proposal
        if self.refusal:
            out["refused"] = self.refusal
        return out


@dataclass
class Gate:
    writes: Writes
    settings: KubeSettings
    policies: PolicySet
    store: StoreThread
    agent: str
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    @classmethod
    def open(cls, settings: KubeSettings, writes: Writes) -> Gate:
        """The gate the settings ask for; ToolErrors name an unusable policy file or store."""
        policies = load(list(settings.policies))
        store = StoreThread(lambda: open_store(settings.policy_store))
        return cls(writes, settings, policies, store, settings.agent)

    @property
    def actor(self) -> str:
        return f"agent {self.agent}"

    def admit(self, tool: str, arguments: Mapping[str, Any], *, proposal: str = "") -> Admission:
        dry_run = bool(arguments.get("dry_run"))
        with policy_decision(tool, agent=self.agent, by="gate", dry_run=dry_run) as decision:
            planned = tuple(plan_call(self.writes, self.settings, tool, arguments))
            if proposal:
                admission = self._by_proposal(tool, planned, proposal, dry_run=dry_run)
                for each in planned:
                    decision.decided(each.action.type, "deny" if admission.refusal else "allow")
            else:
                admission = self._judge(tool, planned, decision)
            decision.verdict = admission.verdict
            return admission

    def _judge(
        self, tool: str, planned: tuple[Planned, ...], decision: PolicyDecision
    ) -> Admission:
        now = self.clock()
        verdicts, citations, refusals = [], [], []
        for each in planned:
            report = evaluate(self.policies, self._request(each, now))
            verdict, refusal = judged(report, now)
            verdicts.append(verdict)
            decision.decided(each.action.type, decision_of(verdict))
            citations += [
                str(f.citation) for f in report.fired() if str(f.citation) not in citations
            ]
            if refusal:
                refusals.append(refusal)
        blocking = [v for v in verdicts if v != "allow"]
        return Admission(
            tool,
            planned,
            verdict=blocking[0] if blocking else "allow",
            citations=tuple(citations),
            refusal=" ".join(refusals) + (" " + NEXT if refusals else ""),
        )

    def record(self, admission: Admission, result: str) -> None:
        """One mutation record per target of the call, with `result` (applied, refused, failed)."""
        now, by_target = self.clock(), dict[str, list[Action]]()
        for each in admission.planned:
            by_target.setdefault(str(each.action.target), []).append(each.action)
        under = f" under proposal {admission.proposal}" if admission.proposal else ""
        entries = [
            AuditEntry(
                at=now,
                actor=self.actor,
                kind="mutation",
                subject=subject,
                summary=f"{admission.tool}: " + "; ".join(a.describe() for a in actions) + under,
                citations=list(admission.citations),
                result=result,
                details=_details(admission.proposal, actions),
            )
            for subject, actions in by_target.items()
        ]
        self.store.call(lambda store: store.record(entries))

    # -- evaluation --------------------------------------------------------------------------

    def _request(self, planned: Planned, now: datetime) -> EvaluationRequest:
        metrics: dict[str, float] = {}
        if planned.action.pods is not None:
            metrics[EVICTIONS_METRIC] = float(self._evictions_since(now - timedelta(hours=1)))
        return EvaluationRequest(
            action=planned.action,
            target=planned.judged,
            metrics=metrics,
            now=now,
            namespace_labels=planned.namespace_labels,
        )

    def _evictions_since(self, since: datetime) -> int:
        """Pods this gate let evict since `since`, as its own audit records say."""
        records = self.store.call(lambda store: store.audit(kind="mutation"))
        return sum(
            int(record.details.get("pods", 0))
            for record in records
            if record.at >= since and record.result == "applied" and record.actor == self.actor
        )

    # -- approved proposals ------------------------------------------------------------------

    def _by_proposal(
        self, tool: str, planned: tuple[Planned, ...], proposal: str, *, dry_run: bool = False
    ) -> Admission:
        """Admit the call under an approved proposal, taking the approval up (once, in the
        store) unless `dry_run`: admit passes dry_run=True for a dry run, which uses nothing."""
        record_id(proposal, argument="proposal")
        try:
            record = self.store.call(lambda store: store.get(proposal))
        except NotFound as exc:
            return Admission(tool, planned, "refused: unknown proposal", refusal=exc.message)
        decision = record.decision
        citations = tuple(str(c) for c in decision.citations) if decision else ()
        problem = self._unusable(record, planned, dry_run=dry_run)
        if problem:
            return Admission(
                tool, planned, f"refused: proposal {proposal}", citations, problem, proposal
            )
        assert decision is not None  # _unusable said it is approved
        verdict = f"{decision.outcome} by {decision.decided_by} (proposal {proposal})"
        return Admission(tool, planned, verdict, citations, proposal=proposal)

    def _unusable(
        self, record: ProposalRecord, planned: tuple[Planned, ...], *, dry_run: bool = False
    ) -> str:
        """Why this approved-or-not proposal cannot carry this call; "" when it can, and then
        the store has marked it used by this call (`Store.use_approval`, atomic: of concurrent
        calls one gets it), unless `dry_run`."""
        proposal, decision = record.proposal, record.decision
        if decision is None or not decision.approves:
            state = decision.outcome if decision else proposal.state
            return (
                f"proposal {proposal.id} is {state}, not approved, so it cannot carry this call; "
                "get_proposal on the policy server shows why"
            )
        if len(planned) != 1:
            return (
                f"a proposal approves one action, and this call makes {len(planned)}: "
                + "; ".join(p.action.describe() for p in planned)
                + ". Make the approved change alone (scale for a replica count)"
            )
        mismatch = differs(planned[0].action, decision.action)
        if mismatch:
            return (
                f"proposal {proposal.id} approved {decision.action.describe()}, but this call "
                f"is {planned[0].action.describe()} ({mismatch}); call with the approved action, "
                "or propose this one"
            )
        unseen = self._unweighed(record, planned[0])
        if unseen:
            return unseen
        target = decision.action.target
        latest = self.store.call(lambda store: store.target(target)).proposal
        if latest != proposal.id:
            return (
                f"proposal {latest} was approved for {target} after proposal {proposal.id}, "
                f"which it supersedes; use proposal {latest}, or propose again"
            )
        done = self.store.call(lambda store: store.audit(subject=str(target), kind="mutation"))
        applied = [
            r for r in done if r.result == "applied" and r.details.get("proposal") == proposal.id
        ]
        if applied:
            return (
                f"proposal {proposal.id} was applied already (audit record {applied[0].seq} at "
                f"{applied[0].at.isoformat()}); an approval carries one change: propose again"
            )
        try:  # the check above reads the log; this is the one that holds under concurrency
            self.store.call(
                lambda store: store.use_approval(
                    proposal.id, by=self.actor, now=self.clock(), dry_run=dry_run
                )
            )
        except ToolError as exc:  # used already, superseded, or its decision edited (reported)
            return exc.message
        return ""

    def _unweighed(self, record: ProposalRecord, planned: Planned) -> str:
        """Rules that refuse the approved action on the object as the cluster has it (or, for a
        write the server dry-ran, as the write leaves it), and that
        did not fire on the object as the proposal described it: a proposal's own `labels` or
        `target` are the proposer's say, and the decision weighed only what they showed. ""
        when the live object adds nothing that blocks."""
        proposal, now = record.proposal, self.clock()

        def blocking(target: Json | None) -> dict[str, str]:
            request = EvaluationRequest(
                action=proposal.action, target=target, metrics=proposal.metrics, now=now,
                namespace_labels=planned.namespace_labels,
            )  # fmt: skip
            report = evaluate(self.policies, request)
            return {str(f.citation): str(f) for f in report.fired() if f.effect in _BLOCKING}

        claimed, live = blocking(proposal.target), blocking(planned.judged)
        new = [text for citation, text in live.items() if citation not in claimed]
        if not new:
            return ""
        shown = proposal.target if proposal.target is not None else {}
        said = (shown.get("metadata") or {}).get("labels") or proposal.action.labels
        has = ((planned.judged or {}).get("metadata") or {}).get("labels") or {}
        return (
            f"proposal {proposal.id} was judged on labels {said or {}}, but "
            f"{proposal.action.target} has labels {has}, by which: "
            + "; ".join(new)
            + ". Propose it again as the object is"
        )


def _details(proposal: str, actions: list[Action]) -> dict[str, str | int]:
    """What later checks count on: the proposal carried out, the pods evicted."""
    details: dict[str, str | int] = {"proposal": proposal} if proposal else {}
    pods = sum(a.pods or 0 for a in actions)
    return details | ({"pods": pods} if pods else {})


def differs(asked: Action, approved: Action) -> str:
    """What makes the call's action another one than the approved one; "" when it is the same."""
    if asked.type != approved.type:
        return f"{asked.type}, not {approved.type}"
    if not same_target(asked.target, approved.target):
        return f"target {asked.target}, not {approved.target}"
    if approved.replicas is not None and (
        asked.replicas is None or asked.replicas.to != approved.replicas.to
    ):
        got = "no replica count" if asked.replicas is None else f"{asked.replicas.to} replicas"
        return f"{got}, not {approved.replicas.to}"
    if approved.type == "resize":
        mismatch = _other_resources(asked, approved)
        if mismatch:
            return mismatch
    if asked.via != approved.via:
        return f"directly, where the approval says {approved.via}"
    return ""


def _other_resources(asked: Action, approved: Action) -> str:
    """Why the call's container values are not the approved ones; "" when they are."""
    if not approved.resources:
        return "the approved resize names no values: propose it with the resources to set"
    shown = "; ".join(c.describe() for c in asked.resources or []) or "no values"
    wanted = "; ".join(c.describe() for c in approved.resources)
    mine = {c.container: c for c in asked.resources or []}
    theirs = {c.container: c for c in approved.resources}
    if set(mine) != set(theirs):
        return f"{shown}, not {wanted}"
    for name, change in theirs.items():
        for part in ("requests", "limits"):
            got, due = getattr(mine[name], part), getattr(change, part)
            if set(got) != set(due) or any(not got[r].same_as(due[r]) for r in due):
                return f"{shown}, not {wanted}"
    return ""


def same_target(one: TargetRef, other: TargetRef) -> bool:
    """The same object in the same cluster (an approval in one cluster carries nothing in
    another of the fleet)."""
    return (one.kind, one.namespace, one.name, one.cluster) == (
        other.kind, other.namespace, other.name, other.cluster
    )  # fmt: skip


def decision_of(verdict: str) -> Ruling:
    """A verdict in the three words the metrics use: allow, ask (a person may say yes: an
    approval or an escalation), deny (a rejection, a counter-offer, a closed window)."""
    if verdict == "allow":
        return "allow"
    return "ask" if verdict in TO_A_PERSON else "deny"


def judged(report: EvaluationReport, now: datetime) -> tuple[str, str]:
    """The verdict in a few words, and the refusal message ("" when the action may go ahead)."""
    verdict = report.verdict
    opens = verdict.not_before if verdict.not_before and verdict.not_before > now else None
    if verdict.outcome == "allow" and not verdict.approvals and opens is None:
        return "allow", ""
    blocking = [f for f in report.fired() if f.effect in _BLOCKING]
    text = f"{report.action.describe()} is refused by policy: " + "; ".join(map(str, blocking))
    words: str = verdict.outcome
    if verdict.counter is not None:
        words = f"counter {verdict.counter.describe()}"
        text += f". Counter-offer: {verdict.counter.describe()}; that call would be allowed"
    elif verdict.outcome == "escalate":
        text += ". A person has to decide"
    if verdict.outcome == "allow" and verdict.approvals:
        words = "needs approval"
        who = ", ".join(
            f"{need.min_approvals} from {need.approvers.describe()}" for need in verdict.approvals
        )
        text += f". It needs approval ({who})"
    if opens is not None:
        words = words if verdict.outcome != "allow" else f"deferred until {opens.isoformat()}"
        text += f". The next maintenance window opens at {opens.isoformat()}: call again then"
    return words, text + "."
