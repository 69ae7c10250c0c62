"""The front door: one message from a person, handed to the agent it is for or to the store.

Every channel (Slack mentions, DMs and `/kubecrew`, the terminal's `kubecrew chat`) hands a
message here with a conversation key ("C0123:1765000100.000200" for a Slack thread,
"terminal:<session>" for a chat session) and the speaker's identity as that channel vouches for
it. What happens, in order:

1. Approval commands ("approve a-1a2b3c4d", "deny a-1a2b3c4d because ...", "approvals") are
   answered through `core.policy.approvals` as the speaker, so chat grants and refuses
   exactly as the CLI, a Slack button and a PR review do. The text is never trusted for who
   is speaking: an unknown speaker answers nothing.
2. Other messages are routed by what they ask: a change by what it changes ("cordon node-3"
   to the Cluster Operator, "scale web to 3" to the Dev Team); otherwise by intent words:
   nodes, capacity, cost, drain, upgrade go to the Cluster Operator; workloads, deploy,
   failing, logs to the Dev Team; egress, audits, blueprints, compliance and escalations to
   the Platform agent. A conversation keeps its
   agent for follow-ups that name neither; when nothing says which, the answer asks, listing
   the agents, and a reply naming one sends the waiting question there.
3. One conversation key is one LangGraph thread id, kept in `conversations.sqlite` under
   `$KUBECREW_HOME/frontdoor/`, so the agent's SQLite checkpointer holds the whole thread and a
   restarted process carries on. The front door also keeps the thread's last target, so a
   follow-up that names nothing ("is it still failing?") is about the same workload, and a
   reply to "which one?" ("shop") narrows the waiting question to that namespace.

4. "fix web" (a heal: the crew picks the change) is asked back first; "yes" in the same
   conversation runs it. A change the agent's remediation loop gives to a person ("fix
   web" under a ChangePolicy approval) is answered with the request, who may answer it, and
   how; the conversation remembers the request, and "approve <id>" in the same conversation
   grants it and resumes the waiting thread then and there, once: the agent's loop claims the
   answer from the store as that thread, and a second "approve" finds the request ended and
   resumes nothing.

Each agent gets its own servers when the door has `agent_servers` (`kubecrew.crew`: the kube
server's gate and the policy server act as that agent); else every agent shares `servers`.

An agent is found by name in the registry (`agents.runtime.registry`) and loaded when first asked
for; every agent opens and answers through the one contract (`agents.runtime.contract`), so an
agent that is not installed is an answer saying so, not an import error.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from agents.cluster_operator import intents as operator_intents
from agents.cluster_operator import node_changes
from agents.dev_team import intents
from agents.platform import changes as frame_changes
from agents.runtime import questions, registry, requests
from agents.runtime.brain import Planner
from agents.runtime.changes import words as changes
from agents.runtime.contract import Agent, Conversation
from agents.runtime.errors import AgentError, ToolFailed
from agents.runtime.progress import Progress as StepProgress
from agents.runtime.toolbox import OnCall, Servers
from core.errors import ToolError
from core.policy import approvals
from core.policy.proposals import AnswerVerdict, Channel, Identity
from core.policy.store.base import Store

AgentName = Literal["dev_team", "cluster_operator", "platform"]
ReplyKind = Literal["answer", "clarify", "approval", "refused", "unavailable"]
Progress = Callable[[str], None]
AGENTS: dict[AgentName, str] = {
    "dev_team": "the Dev Team agent: workloads (why is web failing, deploys, logs)",
    "cluster_operator": "the Cluster Operator agent: nodes, capacity, cost, drains, upgrades",
    "platform": "the Platform agent: org policy (egress, audits, blueprints, escalations)",
}
_STEMS: dict[AgentName, tuple[str, ...]] = {
    "cluster_operator": (
        "node", "capacity", "cost", "drain", "upgrad", "cordon", "spend", "maintenance",
        "utiliz", "operator", "clusters", "imbalanc", "kubernet", "k8s", "kubelet", "pool",
        "machine", "kernel", "control-plane",
    ),
    "dev_team": (
        "workload", "deploy", "fail", "log", "crash", "broke", "error", "pod", "restart",
        "oom", "rollout", "image", "service", "app", "dev", "wrong", "down", "probe", "slow",
        "fix", "heal", "drift", "rightsiz", "right-siz", "surviv", "resilien", "status",
        "alive", "running",
    ),
    "platform": (
        "egress", "complian", "complies", "audit", "blueprint", "escalat", "arbitrat",
        "governance", "platform", "rbac", "over-grant", "networkpolic", "quota",
    ),
}  # fmt: skip
_NEUTRAL = ("health", "unhealth")  # "healthy" is no heal: a node's health is the Cluster Operator's
_ANSWER = re.compile(
    r"^\s*(?P<verb>approve|grant|deny|reject)\s+(?P<id>a-[0-9a-f]+)\b[\s:,-]*"
    r"(?:because\s+)?(?P<reason>.*?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LIST = re.compile(
    r"^\s*(?:list\s+|pending\s+|show\s+)?approvals(?:\s+pending)?\s*[?.!]?\s*$", re.I
)
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_WORDS = re.compile(r"[a-z0-9][a-z0-9.-]*")


@dataclass(frozen=True)
class Reply:
    text: str  # what the person reads, plain text (the channel renders it)
    kind: ReplyKind
    agent: AgentName | None = None
    thread: str | None = None  # the LangGraph thread the agent answered on
    report: dict[str, Any] = field(default_factory=dict)  # the answer as data, when an agent's


@dataclass
class _Thread:
    """What the front door remembers of one conversation (one row of conversations.sqlite)."""

    key: str
    agent: AgentName | None = None
    thread: str = field(default_factory=lambda: uuid.uuid4().hex)
    question: str = ""  # the last question asked of the agent (or waiting for an agent)
    namespace: str | None = None
    target: dict[str, str] | None = None  # the last target the agent answered about
    options: list[dict[str, str]] = field(default_factory=list)  # when it asked "which one?"
    waiting: str = ""  # the approval request the agent's thread waits for, if any
    confirming: str = ""  # a heal asked in chat, until the person says yes to it


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class _Narration:
    """An agent's run told to a channel's `progress` in words, in three forms: "NODE done" for
    each step of the agent's graph, "tool NAME" for each tool call (never its arguments: they
    may hold what was typed), and what a long step waits for as it says it ("validating: 1/2
    pods ready", `agents.runtime.progress`)."""

    say: Progress | None

    def node(self, node: str) -> None:
        if self.say is not None:
            self.say(f"{node} done")

    def call(self, tool: str, _arguments: dict[str, Any]) -> None:
        if self.say is not None:
            self.say(f"tool {tool}")

    def progress(self, progress: StepProgress) -> None:
        if self.say is not None:
            self.say(str(progress))


@dataclass(frozen=True)
class FrontDoor:
    servers: Servers
    planner: Planner
    home: Path  # the cluster's state folder (core.home): agents/<agent>/ and frontdoor/ in it
    open_store: Callable[[], Store]
    via: Channel  # the channel answers are recorded as given through
    now: Callable[[], datetime] = _utc_now
    agent_servers: Callable[[str], Servers] | None = None  # each agent's own; None: `servers`

    async def handle(
        self, key: str, text: str, person: Identity | None, *, progress: Progress | None = None
    ) -> Reply:
        """The reply to `text` said by `person` in conversation `key` (see the module)."""
        said = _MENTION.sub(" ", text).strip()
        if _LIST.match(said):
            return self._pending()
        answered = _ANSWER.match(said)
        if answered:
            verb = answered["verb"].lower()
            verdict: AnswerVerdict = "grant" if verb in ("approve", "grant") else "deny"
            request = answered["id"].lower()
            reply = self._answer(request, verdict, answered["reason"], person)
            return await self._resume_waiting(key, request, reply, progress)
        remembered = self._load(key)
        agent = route(said, current=remembered.agent)
        if agent is None and remembered.question and not remembered.agent:
            agent = _named_agent(said)  # the answer to "which agent?"
            if agent is not None:
                said = remembered.question
        if agent is None:
            remembered.question = said
            self._save(remembered)
            return Reply(_which_agent(), "clarify")
        if agent != remembered.agent:
            remembered = _Thread(key, agent=agent)
        question, namespace = _in_context(said, remembered)
        confirming, remembered.confirming = remembered.confirming, ""
        if agent == "dev_team" and confirming and changes.affirmative(said):
            question, namespace = confirming, remembered.namespace
        elif agent == "dev_team" and _heals(question):
            remembered.confirming, remembered.namespace = question, namespace
            self._save(remembered)
            return Reply(_confirm_heal(question), "clarify", agent=agent)
        reply = await self._ask(agent, remembered, question, namespace, progress)
        self._save(remembered)
        return reply

    async def _ask(
        self,
        agent: AgentName,
        remembered: _Thread,
        question: str,
        namespace: str | None,
        progress: Progress | None,
    ) -> Reply:
        found = registry.find(agent)
        if found is None:
            return Reply(
                f"{AGENTS[agent].capitalize()}. That agent is not installed here, so I cannot "
                f"ask it; {_which_agent(exclude=agent)}",
                "unavailable",
                agent=agent,
            )

        told = _Narration(progress)
        try:
            async with self._talk(found, remembered, told.call) as talk:
                outcome = await talk.ask(
                    question, namespace=namespace, on_node=told.node, on_progress=told.progress
                )
        except ToolFailed as exc:
            reason = f"no cluster reachable: {exc.reason}" if exc.unreachable else exc.message
            return Reply(reason, "unavailable", agent=agent, thread=remembered.thread)
        except AgentError as exc:
            return Reply(exc.message, "unavailable", agent=agent, thread=remembered.thread)
        report, waits = dict(outcome.data), outcome.waiting
        remembered.question, remembered.namespace = question, namespace
        if outcome.target:
            remembered.target = dict(outcome.target)
        remembered.options = list(report.get("options", [])) if outcome.clarifying else []
        remembered.waiting = waits.request if waits is not None else ""
        if waits is not None:
            text = _waiting_text(waits.request, waits.asked, self.via)
            report = {**report, "waiting_for": waits.request, "asked": waits.asked}
            return Reply(text, "approval", agent=agent, thread=outcome.thread, report=report)
        kind: ReplyKind = "clarify" if outcome.clarifying else "answer"
        return Reply(outcome.answer, kind, agent=agent, thread=outcome.thread, report=report)

    def _talk(
        self, agent: Agent, remembered: _Thread, on_call: OnCall | None
    ) -> AbstractAsyncContextManager[Conversation]:
        """The agent's conversation on the remembered thread, with the agent's own servers."""
        name = cast(AgentName, agent.name)
        servers = self.agent_servers(name) if self.agent_servers else self.servers
        return agent.open(
            servers,
            self.planner,
            home=self.home / "agents" / agent.name,
            thread=remembered.thread,
            on_call=on_call,
        )

    async def _resume_waiting(
        self, key: str, request: str, reply: Reply, progress: Progress | None
    ) -> Reply:
        """After an answer in conversation `key`: its thread, if it waits on `request`, resumed
        once, the answer and what the agent then did in one reply."""
        if reply.report.get("state") not in ("granted", "denied", "expired"):
            return reply
        resumed = await self._resume(key, request, progress)
        if resumed is None:
            return reply
        text = f"{reply.text}\n{resumed.text}"
        return replace(resumed, text=text, report={**reply.report, **resumed.report})

    async def resume_answered(self, *, progress: Progress | None = None) -> list[tuple[str, Reply]]:
        """Every conversation whose waiting request has ended, however it was answered (a Slack
        click, `kubecrew approvals`, a PR review), resumed once: (conversation key, reply)."""
        with closing(self._db()) as db:
            rows = db.execute("SELECT data FROM conversations").fetchall()
        waiting = [t for t in (_Thread(**json.loads(row[0])) for row in rows) if t.waiting]
        if not waiting:
            return []
        with closing(self.open_store()) as store:
            store.expire(now=self.now())
            ended = [t for t in waiting if _ended(store, t.waiting)]
        done = []
        for remembered in ended:
            resumed = await self._resume(remembered.key, remembered.waiting, progress)
            if resumed is not None:
                done.append((remembered.key, resumed))
        return done

    async def _resume(self, key: str, request: str, progress: Progress | None) -> Reply | None:
        remembered = self._take_waiting(key, request)
        if remembered is None or remembered.agent is None:
            return None  # not waiting on it, or another caller took it up first
        found = registry.find(remembered.agent)
        if found is None:
            return None

        told = _Narration(progress)
        try:
            async with self._talk(found, remembered, None) as talk:
                outcome = await talk.resume(on_node=told.node, on_progress=told.progress)
        except (ToolFailed, AgentError) as exc:
            text = f"Resuming the work that waited for {request} failed: {exc}"
            return Reply(text, "unavailable", agent=remembered.agent, thread=remembered.thread)
        waits = outcome.waiting
        if waits is not None:  # asked again (a next fix that also needs a person)
            remembered.waiting = waits.request
            self._save(remembered)
            more = _waiting_text(waits.request, waits.asked, self.via)
        else:
            more = outcome.answer
        data = {"resumed": outcome.thread, "outcome": outcome.data}
        text = f"Resumed the work that waited for {request} (thread {outcome.thread}):\n{more}"
        return Reply(text, "answer", agent=remembered.agent, thread=outcome.thread, report=data)

    def _take_waiting(self, key: str, request: str) -> _Thread | None:
        """The conversation, no longer waiting, if it waited on `request`: one transaction, so
        of two callers (a chat answer and a poll) one resumes it."""
        with closing(self._db()) as db:
            db.isolation_level = None
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT data FROM conversations WHERE key = ?", (key,)).fetchone()
                remembered = None if row is None else _Thread(**json.loads(row[0]))
                if remembered is None or remembered.waiting != request:
                    db.execute("ROLLBACK")
                    return None
                remembered.waiting = ""
                data = json.dumps(remembered.__dict__)
                db.execute("UPDATE conversations SET data = ? WHERE key = ?", (data, key))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return remembered

    def _answer(
        self, request_id: str, verdict: AnswerVerdict, reason: str, person: Identity | None
    ) -> Reply:
        if person is None:
            return Reply(
                f"I do not know who you are here, so you cannot answer {request_id}: ask an "
                "operator to add your account to the people file (people.yaml).",
                "refused",
            )
        with closing(self.open_store()) as store:
            try:
                after = approvals.answer(
                    store, request_id, person, verdict, via=self.via, now=self.now(), reason=reason
                )
                decision = store.get(after.proposal).decision if after.ended else None
            except ToolError as exc:
                return Reply(exc.message, "refused", report={"request": request_id})
        verb = "granted" if verdict == "grant" else "denied"
        lines = [f"{request_id}: {verb} by {person.name}, recorded; the request is {after.state}."]
        if decision is not None:
            lines.append(f"Proposal {after.proposal}: {decision.describe()}")
        data = {"request": request_id, "state": after.state, "proposal": after.proposal}
        return Reply("\n".join(lines), "approval", report=data)

    def _pending(self) -> Reply:
        with closing(self.open_store()) as store:
            store.expire(now=self.now())
            pending = store.approvals(state="pending")
        if not pending:
            return Reply("No approval requests are waiting.", "approval", report={"pending": []})
        lines = [f"{len(pending)} approval request(s) waiting:"]
        lines += [
            f"- {r.id}: {r.action.describe()} (proposal {r.proposal}), for "
            f"{r.approvers.describe()}, until {r.expires_at:%Y-%m-%d %H:%M} UTC"
            for r in pending
        ]
        lines.append("Answer with 'approve <id>' or 'deny <id> because <reason>'.")
        return Reply("\n".join(lines), "approval", report={"pending": [r.id for r in pending]})

    # -- the conversations file ---------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        folder = self.home / "frontdoor"
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / "conversations.sqlite", timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS conversations (key TEXT PRIMARY KEY, data TEXT)")
        return db

    def _load(self, key: str) -> _Thread:
        with closing(self._db()) as db:
            row = db.execute("SELECT data FROM conversations WHERE key = ?", (key,)).fetchone()
        return _Thread(key) if row is None else _Thread(**json.loads(row[0]))

    def _save(self, remembered: _Thread) -> None:
        data = json.dumps(remembered.__dict__)
        with closing(self._db()) as db, db:
            db.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (remembered.key, data))


def _heals(question: str) -> bool:
    """A heal ("fix web"): the crew picks the change itself, so the person confirms it first."""
    return changes.read(question) is None and intents.parse(question).kind == "heal"


def _confirm_heal(question: str) -> str:
    return (
        f"{question!r} lets the remediation loop change the cluster: it diagnoses, picks a fix "
        "(a rollback, an image, a pull request where git defines the workload), asks policy, "
        "applies it, validates it and rolls it back if it does not hold. Reply 'yes' to go on, "
        "anything else to leave it."
    )


def _ended(store: Store, request: str) -> bool:
    try:
        return store.approval(request).ended
    except ToolError:  # gone: resuming lets the agent's loop say so and escalate
        return True


def _waiting_text(request: str, asked: str, via: Channel) -> str:
    how = "click Approve on its message, or say" if via == "slack" else "say"
    return "\n".join(
        [
            f"Not done yet: this change waits for approval request {request}.",
            f"Who may answer: {asked}" if asked else f"It waits for {request} to be answered.",
            f"An approver can {how} 'approve {request}' (or 'deny {request} because ...') here;",
            "granted here, the work carries on at once, exactly once.",
        ]
    )


def route(text: str, *, current: AgentName | None = None) -> AgentName | None:
    """The agent `text` is for: a change by what it changes (a node's the Cluster Operator's,
    a workload's the Dev Team's); else by its words, the conversation's agent when they do not
    say or are split; None when nothing says (the caller asks which)."""
    read = requests.read(text)  # "can the operator drain node-2?" asks, and changes nothing
    if isinstance(read, changes.Asked):  # a change names its owner by what it changes
        return owner(read)
    if isinstance(read, questions.Overview):
        return "cluster_operator"  # the cluster at a glance: nodes first, its overview tool
    if operator_intents.read_question(text)[0] in ("upgrade", "upgrade-readiness", "patching"):
        return "cluster_operator"  # the cluster's own version or patches: "bump k8s to v1.38"
    said = _WORDS.findall(text.lower())
    words = [w for w in said if not w.startswith(_NEUTRAL)]
    hits = {
        agent: sum(1 for w in words if any(w.startswith(s) for s in stems))
        for agent, stems in _STEMS.items()
    }
    best = max(hits.values())
    if not best and len(words) < len(said):
        return current or "dev_team"  # "is web healthy?": a workload's health, unless a node's
    if not best and _about_a_workload(text):
        return current or "dev_team"  # "is web up?", "check web": how something named is doing
    leaders = [agent for agent, count in hits.items() if count == best and count > 0]
    if len(leaders) == 1 and (current is None or hits[current] < best):
        return leaders[0]
    if current is None and read is not None:
        return "dev_team"  # a question about the cluster: every agent answers it the same way
    return current if current is not None else None


def _about_a_workload(text: str) -> bool:
    """Whether the words ask how something they name is doing, with no agent's word in them:
    a workload's, the Dev Team's (a node or the cluster would have said so)."""
    parsed = intents.parse(text)
    return parsed.kind == "diagnose" and bool(parsed.subject)


def owner(change: changes.Asked) -> AgentName:
    """The agent whose change it is: a node's the Cluster Operator's; a namespace's frame
    (the namespace, its quota, limits, pod security, access) the Platform's; the rest (a
    workload and what stands beside it) the Dev Team's."""
    if node_changes.asks(change):
        return "cluster_operator"
    if frame_changes.asks(change):
        return "platform"
    return "dev_team"


def thread_of(home: Path, key: str) -> str | None:
    """The LangGraph thread id conversation `key` runs on, if it has started."""
    path = home / "frontdoor" / "conversations.sqlite"
    if not path.is_file():
        return None
    with closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT data FROM conversations WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(json.loads(row[0])["thread"])


def installed(agent: AgentName) -> bool:
    return registry.find(agent) is not None


def _named_agent(text: str) -> AgentName | None:
    said = text.lower()
    if "operator" in said or "cluster" in said:
        return "cluster_operator"
    if "dev" in said or "workload" in said:
        return "dev_team"
    if "platform" in said or "governance" in said:
        return "platform"
    return None


def _which_agent(*, exclude: AgentName | None = None) -> str:
    listed = [f"- {text}" for agent, text in AGENTS.items() if agent != exclude]
    return "\n".join(
        [
            "Which agent should answer? I can ask:",
            *listed,
            "Say 'dev team', 'cluster operator' or 'platform' (or ask again naming a workload, "
            "nodes or a policy).",
        ]
    )


def _in_context(text: str, remembered: _Thread) -> tuple[str, str | None]:
    """The question to ask and its namespace, with the conversation's context filled in.

    Only the Dev Team's word grammar is known here; other agents get the text as said.
    """
    if remembered.agent != "dev_team" or not remembered.question:
        return text, None
    words = set(_WORDS.findall(text.lower()))
    picked = [o for o in remembered.options if o["namespace"] in words]
    if len({o["namespace"] for o in picked}) == 1:  # "shop" answers "web in shop or staging?"
        return remembered.question, picked[0]["namespace"]
    parsed = intents.parse(text)
    target = remembered.target
    if parsed.subject or target is None:
        return text, None
    if parsed.kind == "unsupported":  # "and now?": the last question, asked again
        return remembered.question, target["namespace"]
    return f"{text} {target['name']}", target["namespace"]
