"""The Dev Team graph: understand -> (clarify | investigate) -> answer.

- understand: the intent grammar reads the question and resolves the name against the cluster
  (through the tools); an ambiguous or unknown name, or an intent this slice does not serve,
  becomes a clarifying question.
- investigate: the brain plans. The deterministic brain runs the selected skill's procedure
  (`investigate.investigate_workload`) in one step. The model brain reads as every agent's
  does (`agents.runtime.modelsteps.read`: think <-> act in a graph of its own, bounded by
  LangGraph's recursion limit): its calls go through the same `Toolbox.run` (`brain.act`: a
  write the model names is refused, never run) until it answers or the step cap is reached.
  Same node, same tools, whichever brain.
- answer: the grounded answer (`report.compose`) from the observations, with similar past
  incidents from long-term memory, and this diagnosis recorded there.

The graph is compiled per run with a SQLite checkpointer (thread id = conversation) and store
(`persistence`); tools, brain and role travel in the run's `Context`, never in the state, so a
checkpoint holds only data. A run interrupted after `investigate` resumes at `answer` without
calling a tool again. The heal intent ("fix web") routes from `understand` to `heal`, the
shared remediation loop (agents/runtime/loop) run as a subgraph; "deploy web to staging" routes
to `deploy` (agents/dev_team/deploy.py: PR, policy, merge, sync, validate) before any name is
resolved, since the app may not exist yet; drift, right-sizing and probing route to `task`, which
runs the work registered for the kind in agents/dev_team/tasks.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agents.dev_team import changing, intents, making, prompts, report, tasks
from agents.dev_team import deploy as deploying
from agents.dev_team.heal import learner
from agents.dev_team.investigate import investigate_workload
from agents.dev_team.state import AGENT, DevTeamState, Observation, TargetRef
from agents.runtime import memory, modelsteps, questions, requests
from agents.runtime.brain import Deterministic, ModelPlanner
from agents.runtime.changes import asking, carry, ops, words
from agents.runtime.errors import AgentError
from agents.runtime.loop.graph import LoopContext
from agents.runtime.loop.graph import builder as loop_builder
from agents.runtime.loop.state import LoopState, Target
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.persistence import Durable
from agents.runtime.skills import select
from agents.runtime.toolbox import Toolbox
from agents.runtime.wiring import AgentContext

UNSUPPORTED = (
    "I answer why a workload is failing ('why is web failing in shop?'), fix one ('fix web'), "
    "change one ('scale web to 3', 'restart web', 'roll back web', 'set LOG_LEVEL=debug on "
    "web', 'give web half a CPU', 'add a readiness probe to web on /healthz'), put things "
    "beside it ('expose web on port 80', 'autoscale web between 2 and 10', 'add a PDB to web', "
    "'only frontend may reach api'), or make new ones ('run redis:7 as cache with 2 replicas', "
    "'create a configmap app-config with MODE=fast'). What would you like me to do?"
)
CANNOT_DELETE = (
    "I do not delete anything: this agent has no delete tool, and nothing changed. I can scale, "
    "restart, roll back or change a workload ('scale web to 0' stops its pods), explain why it "
    "fails, or fix it ('fix web')."
)
PROCEDURES = {"diagnose-workload": investigate_workload}
TASK_KINDS = (
    "drift",
    "rightsize",
    "probe",
    "resilience",
)  # served by agents/dev_team/tasks.py when registered


@dataclass(frozen=True)
class Context(AgentContext):
    settings: LoopSettings = field(default_factory=LoopSettings)  # deploy's validation


async def understand(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """What the question asks and about which object; the evidence and the model's messages of
    the thread's earlier questions are marked as such, so this answer rests on its own."""
    before = {
        "seen_before": len(state.get("observations", [])),
        "said_before": len(state.get("messages", [])),
    }
    return before | await _understood(state, runtime)


async def _understood(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    pending = state.get("pending")
    if pending and words.affirmative(state["question"]):  # the answer to "reply yes"
        change = ops.from_json(pending)
        return {"intent": "change", "change": pending, "pending": None,
                "target": _ref_of(change.target)}  # fmt: skip
    read = requests.read(state["question"], namespace=state.get("namespace"))
    own = intents.parse(state["question"]).kind
    if read is not None and not isinstance(read, words.Asked) and own in _ANSWERED:
        return {"intent": "question", "pending": None}  # inventory, access, history, ...
    asked = read if isinstance(read, words.Asked) else None
    if asked is not None and (asked.op in changing.NODE_OPS or asked.kind == "Node"):
        node = " ".join(asked.subject) or "the node"
        text = (f"Nodes are the Cluster Operator's: ask it to {asked.op} {node} (in chat or "
                "Slack that goes to it).")  # fmt: skip
        return {"intent": "change", "clarification": text, "options": [], "pending": None}
    if asked is not None and (asked.op in changing.FRAME_OPS or asked.kind == "Namespace"):
        text = ("Namespaces, their quotas, limits and pod security, and who may do what in them "
                "are the Platform agent's: ask it (in chat or Slack that goes to it).")  # fmt: skip
        return {"intent": "change", "clarification": text, "options": [], "pending": None}
    if asked is None and own == "deploy" and not runtime.context.toolbox.has("find_manifest"):
        asked = deploying.as_create(state["question"])  # no GitOps repository: a create
    if asked is not None and (
        asked.op in changing.WORKLOAD_OPS or asked.op in making.NEW_OBJECT_OPS
    ):
        return {"pending": None} | await _change_asked(state, runtime, asked)
    return {"pending": None} | await _read_asked(state, runtime)


async def _change_asked(
    state: DevTeamState, runtime: Runtime[Context], asked: words.Asked
) -> dict[str, Any]:
    """A change: its object resolved (or, for something new, its parts), made precise, and
    asked back when destructive."""
    toolbox = runtime.context.toolbox
    if asked.op == "delete" and not toolbox.has("delete"):
        return {"intent": "change", "clarification": CANNOT_DELETE, "options": []}
    if asked.problem:  # said before any object is looked for: one found must not be the one
        return {"intent": "change", "clarification": f"Not done: {asked.problem}", "options": []}
    target: TargetRef | None = None
    if asked.op in making.NEW_OBJECT_OPS:
        change = await making.typed(toolbox, asked, state.get("namespace"))
    else:
        intent = intents.Intent("change", asked.subject, asked.namespace or state.get("namespace"),
                                state["question"])  # fmt: skip
        resolved = (
            await changing.switched_service(toolbox, asked.params["to"], intent.namespace)
            if asked.op == "service" and not asked.subject and asked.params.get("to")
            else await intents.resolve(intent, toolbox, kinds=changing.kinds_for(asked))
        )
        if isinstance(resolved, intents.Clarify) and asked.namespace:
            # "set MODE in web from ...": the word after "in" named the workload, not a namespace
            named = intents.Intent("change", (asked.namespace, *asked.subject),
                                   state.get("namespace"), state["question"])  # fmt: skip
            retried = await intents.resolve(named, toolbox, kinds=changing.kinds_for(asked))
            resolved = resolved if isinstance(retried, intents.Clarify) else retried
        if isinstance(resolved, intents.Clarify):
            options = [_ref(t) for t in resolved.options]
            return {"intent": "change", "clarification": resolved.question, "options": options}
        target = _ref(resolved)
        if isinstance(runtime.context.planner, ModelPlanner) and resolved.kind in ops.ROLLED:
            return {"intent": "change", "target": target, "commanded": True,
                    "skill": "diagnose-workload"}  # fmt: skip
        change = await changing.typed(toolbox, asked, target)
    if isinstance(change, changing.Unclear):
        return {"intent": "change", "target": target, "clarification": change.question,
                "options": []}  # fmt: skip
    target = _ref_of(change.target)
    stop = asking.held(change, toolbox)
    if stop is not None:
        return {"intent": "change", "target": target, "clarification": stop.answer,
                "options": [], "pending": stop.pending}  # fmt: skip
    return {"intent": "change", "target": target, "change": change.model_dump(mode="json")}


async def _read_asked(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    intent = intents.parse(state["question"], namespace=state.get("namespace"))
    if intent.kind == "unsupported" or (
        intent.kind in TASK_KINDS and intent.kind not in tasks.TASKS
    ):
        said = await _what_i_can_do(intent, runtime.context.toolbox)
        return {"intent": intent.kind, "clarification": said, "options": []}
    if intent.kind == "deploy":
        return {"intent": intent.kind}
    if intent.kind == "sweep":
        return {"intent": "sweep", "namespace": intent.namespace}
    skill = select(list(runtime.context.skills), intent.kind)
    resolved = await intents.resolve(intent, runtime.context.toolbox)
    if isinstance(resolved, intents.Clarify):
        options = [_ref(t) for t in resolved.options]
        return {"intent": intent.kind, "clarification": resolved.question, "options": options}
    return {"intent": intent.kind, "target": _ref(resolved), "skill": skill.name if skill else ""}


# What else a request may name, when it names no workload (see prompts.CAN_DO)
_BESIDE = (("configmaps", "ConfigMap"),)
_CLUSTER = (("nodes", "Node"), ("namespaces", "Namespace"))


async def _what_i_can_do(intent: intents.Intent, toolbox: Toolbox) -> str:
    """For a request no grammar reads: what can be done with the object it names, with
    examples in that object's own name; the general menu when it names none."""
    if not intent.subject:
        return UNSUPPORTED
    found = await intents.resolve(intent, toolbox)
    if isinstance(found, intents.Clarify):  # not a workload: a node, a ConfigMap, a namespace?
        found = await intents.resolve(intent, toolbox, kinds=_BESIDE, pods=False)
    if isinstance(found, intents.Clarify):
        found = await intents.resolve(replace(intent, namespace=None), toolbox, kinds=_CLUSTER,
                                      pods=False)  # fmt: skip
    if isinstance(found, intents.Clarify):
        return UNSUPPORTED
    examples = prompts.CAN_DO.get(found.kind, prompts.CAN_DO["Deployment"])
    said = ", ".join(f"'{e.format(name=found.name)}'" for e in examples)
    return (f"I did not understand that as something I do. For {found} I can, for example: "
            f"{said}. Nothing changed.")  # fmt: skip


# Its own intents that a question about the cluster answers better: the rest (drift,
# right-sizing, probers, resilience, heals, deploys) are work of its own, whatever words they share.
_ANSWERED = frozenset({"diagnose", "unsupported", "sweep"})


def after_understand(
    state: DevTeamState,
) -> Literal["clarify", "investigate", "heal", "deploy", "task", "change", "sweep", "question"]:
    if state.get("clarification"):
        return "clarify"
    intent = state.get("intent", "")
    if intent == "question":
        return "question"
    if intent == "change" and state.get("commanded") and not state.get("change"):
        return "investigate"  # a model brain plans the change asked for
    if intent == "change":
        return "change"
    if intent == "sweep":
        return "sweep"
    if intent in tasks.TASKS:
        return "task"
    return "heal" if intent == "heal" else "deploy" if intent == "deploy" else "investigate"


async def task(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Drift, right-sizing or a prober for the resolved workload (agents/dev_team/tasks.py)."""
    context = runtime.context
    asked = state["question"]
    request = tasks.Request(context.toolbox, _target(state), asked, AGENT, context.settings,
                            wondering=requests.wonders(asked))  # fmt: skip
    done = await tasks.TASKS[state["intent"]](request)
    return {"answer": done.summary, "report": done.report}


async def deploy(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    asked = deploying.read_request(state["question"])
    if isinstance(asked, str):
        return {"answer": asked, "clarification": asked, "report": {"clarification": asked}}
    context = runtime.context
    done = await deploying.deploy(context.toolbox, asked, agent=AGENT, settings=context.settings)
    return {"answer": done.summary, "report": done.report()}


async def heal(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The remediation loop as a subgraph: it inherits this graph's checkpointer and store, so a
    heal asked in a conversation is as durable as one `kubecrew heal` runs."""
    target = _target(state)
    context = runtime.context
    loop = loop_builder.compile(name="remediation-loop")
    values = await loop.ainvoke(
        LoopState(target=Target(**target), attempts=[]),
        context=LoopContext(context.toolbox, learner(context.planner), AGENT, context.thread),
    )
    data = {"outcome": values.get("outcome", ""), "attempts": values.get("attempts", [])}
    return {"answer": values.get("summary", ""), "report": data}


async def change(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The change asked for, one way: policy, dry run, PR or gated write, validation, rollback
    (agents/runtime/changes/carry.py)."""
    context = runtime.context
    done = await asking.carried(context.toolbox, ops.from_json(state["change"]), agent=AGENT,
                                settings=context.settings, question=state["question"])  # fmt: skip
    return {"answer": done.answer, "report": done.report}


async def question(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A question about the cluster (what runs, who may, what changed, how full, may I),
    answered from what the read tools show, with its evidence; it reads only."""
    asked = questions.read(state["question"], namespace=state.get("namespace"))
    if asked is None:
        raise AgentError("the question was read in understand but not again")
    answered = await questions.answer(runtime.context.toolbox, asked)
    return {"answer": answered.text, "report": answered.data}


async def sweep(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """ "Is anything broken in shop?": the namespace's (or the cluster's) findings, one line per
    object, worst first; it reads only."""
    namespace = state.get("namespace")
    found = await runtime.context.toolbox.call("diagnose", namespace=namespace, limit=50)
    findings = [f for f in found.get("findings", []) if f.get("severity") != "low"]
    where = f"in {namespace}" if namespace else "in the cluster"
    if not findings:
        text = f"Nothing looks wrong {where}: diagnose found no problem. I changed nothing."
        return {"answer": text, "report": {"scope": found.get("scope"), "findings": []}}
    lines, seen = [f"{len(findings)} problem(s) {where}, worst first:"], set()
    for finding in findings:
        ref = finding.get("ref") or {}
        what = f"{ref.get('kind', '')} {ref.get('name', '')}".strip()
        if (what, finding.get("code")) in seen:
            continue
        seen.add((what, finding.get("code")))
        lines.append(f"- {what}: {finding.get('summary')} ({finding.get('code')})")
    lines.append(
        "Ask 'why is <name> failing?' for the evidence, or 'fix <name>'. I changed nothing."
    )
    return {"answer": "\n".join(lines), "report": {"scope": found.get("scope"),
                                                   "findings": findings}}  # fmt: skip


async def clarify(state: DevTeamState) -> dict[str, Any]:
    pending = state.get("pending")
    if pending and not state.get("clarification"):  # the model's destructive change, asked back
        change = ops.from_json(pending)
        text = asking.confirm_text(change)
        return {"answer": text, "clarification": text,
                "report": {"clarification": text, "options": [], "confirm": pending}}  # fmt: skip
    data: dict[str, Any] = {"clarification": state["clarification"],
                            "options": state.get("options", [])}  # fmt: skip
    if state.get("pending"):
        data["confirm"] = state["pending"]  # a destructive change waits for "yes"
    return {"answer": state["clarification"], "report": data}


async def investigate(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evidence for the question: the skill's procedure, or the model's reads (the
    `modelsteps.reads` graph, under its own step limit) after the thread's earlier turns."""
    context, target = runtime.context, _target(state)
    if isinstance(context.planner, Deterministic):
        procedure = PROCEDURES.get(state.get("skill", ""))
        if procedure is None:
            raise AgentError(f"no skill of the {AGENT} agent serves {state.get('intent')!r}")
        return {"observations": await procedure(context.toolbox, target)}
    chosen = next((s for s in context.skills if s.name == state.get("skill")), None)
    system = prompts.system_prompt(
        context.role, list(context.skills), chosen, context.planner.max_steps
    )
    reading = await modelsteps.read(
        context.planner,
        context.toolbox,
        system=system,
        task=prompts.task(state["question"], target),
        history=state.get("messages", []),
        proposes=True,
    )
    seen = [cast(Observation, call) for call in reading.calls]  # the same four keys
    done: dict[str, Any] = {"messages": list(reading.messages), "observations": seen}
    return done | _model_change(state, reading.proposed, context)


def _model_change(
    state: DevTeamState, proposed: tuple[dict[str, Any], ...], context: Context
) -> dict[str, Any]:
    """What the model's change request becomes: carried out when the person's words were the
    command and it is not destructive; otherwise shown and asked back ("reply yes")."""
    if not proposed:
        return {}
    change = ops.from_json(proposed[0])
    if carry.beyond(context.toolbox, change):
        why = carry.beyond(context.toolbox, change)
        return {"model_refused": f"the model asked to {change.describe()}, but {why}: not done"}
    if state.get("commanded") and not change.destructive:
        return {"change": proposed[0]}
    return {"pending": proposed[0]}


def after_investigate(state: DevTeamState) -> Literal["change", "clarify", "answer"]:
    if state.get("change"):
        return "change"
    if state.get("commanded") and state.get("pending"):
        return "clarify"
    return "answer"


async def answer(state: DevTeamState, runtime: Runtime[Context]) -> dict[str, Any]:
    target, thread = _target(state), runtime.context.thread
    observations = state.get("observations", [])[state.get("seen_before", 0) :]
    findings = report.concerning(target, report._all(observations, "diagnose", "findings"))
    cause = findings[0] if findings else None
    past: list[memory.Incident] = []
    store = runtime.store
    if cause is not None and store is not None:
        where = f"{target['kind']} {target['name']} in {target['namespace']}"
        past = await memory.recall(
            store, AGENT, code=cause["code"], target=where, exclude_thread=thread
        )
    text, data = report.compose(target, observations, past=past, model_note=_model_note(state))
    if cause is not None and store is not None:
        ref = cause["ref"]
        fix = data["fix"]
        incident = memory.Incident(
            fingerprint=memory.fingerprint(
                cause["code"], ref["kind"], ref["namespace"], ref["name"]
            ),
            code=cause["code"],
            target=f"{ref['kind']} {ref['name']} in {ref['namespace']}",
            summary=cause["summary"],
            fix=fix["title"] if fix else "",
            thread=thread,
            at=memory.now(),
        )
        await memory.remember(store, AGENT, incident)
    pending, refused = state.get("pending"), state.get("model_refused")
    if pending:  # the model's change, for a question: shown, never made unasked
        suggested = ops.from_json(pending).describe()
        text += (f"\n\nThe model suggests: {suggested}. Nothing changed; reply 'yes' to carry "
                 "it out (policy, a dry run, validation, rollback).")  # fmt: skip
        data = {**data, "confirm": pending}
    if refused:
        text += f"\n\nNote: {refused}."
    return {"answer": text, "report": data}


def _model_note(state: DevTeamState) -> str:
    for message in reversed(state.get("messages", [])[state.get("said_before", 0) :]):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return message.text
    return ""


def _target(state: DevTeamState) -> TargetRef:
    target = state.get("target")
    if target is None:
        raise AgentError("investigate ran without a resolved target")
    return target


def _ref_of(target: ops.Object) -> TargetRef:
    return TargetRef(kind=target.kind, name=target.name, namespace=target.namespace)


def _ref(target: intents.Target) -> TargetRef:
    return TargetRef(kind=target.kind, name=target.name, namespace=target.namespace)


builder = StateGraph(DevTeamState, context_schema=Context)
builder.add_node("understand", understand)
builder.add_node("clarify", clarify)
builder.add_node("investigate", investigate)
builder.add_node("answer", answer)
builder.add_node("heal", heal)
builder.add_node("deploy", deploy)
builder.add_node("task", task)
builder.add_node("change", change)
builder.add_node("sweep", sweep)
builder.add_node("question", question)
builder.add_edge(START, "understand")
builder.add_conditional_edges("understand", after_understand)
builder.add_edge("clarify", END)
builder.add_conditional_edges("investigate", after_investigate)
builder.add_edge("answer", END)
builder.add_edge("heal", END)
builder.add_edge("deploy", END)
builder.add_edge("task", END)
builder.add_edge("change", END)
builder.add_edge("sweep", END)
builder.add_edge("question", END)


def compile_graph(durable: Durable) -> CompiledStateGraph[DevTeamState, Context, Any, Any]:
    return builder.compile(checkpointer=durable.checkpointer, store=durable.store, name=AGENT)


# For LangGraph's own tools (langgraph.json); the agent compiles with its durable state.
graph = builder.compile(name=AGENT)
