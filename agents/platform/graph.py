"""The Platform graph: understand -> (propagate | compliance | audit | blueprints | escalations |
clarify) -> END.

- understand: a procedure run (`propagate`, on a schedule or when an EgressPolicy changes)
  arrives with its task set; a question is read into its kind, and an audit's or a blueprint
  question's namespace and fix, by `intents` (`read_question`, `read_scope`), or answered with
  what the agent can do (`prompts.UNSUPPORTED`).
- propagate: render, deliver and confirm every covered namespace (`propagation`).
- compliance: the same confirmation from live state, changing nothing.
- audit ("audit the fleet", "audit shop", scheduled): findings with evidence, and a fix PR where
  a manifest fixes one (`audits`).
- blueprints ("sync blueprints" fixes by PR; "is shop on the blueprint?" only looks):
  namespace blueprints compared with live field by field (`blueprints`).
- escalations ("answer escalations", "any escalations?", "arbitrate", scheduled): the pending
  approval requests that name the Platform as the org's arbiter, each granted, denied or left
  to the people from a fresh evaluation of its action (`arbitration`). A scheduled audit of the
  fleet answers them too, after its findings: both are the org's policy kept in force.

Two brains, one graph: with a model brain every node but clarify is `modelsteps.planned`:
the model first reads what it chooses (the org policies, the namespaces they cover, the live
NetworkPolicies and workloads; a procedure run asks it what `prompts.ASKS` says, a question in
its own words) with the role's read tools, until it answers or reaches the step cap, and then
the same procedure runs, rendering and comparing from what it reads itself;
`result.model` keeps the model's calls and the answer ends with its reading. Rendering,
notices, PRs, merges on a decision, gated applies and the confirmation from live state stay
the procedure's, whoever plans.

Propagation, compliance, audits and blueprints read every cluster of the context's `clusters`
(kubeconfig contexts; `fleet`), each row naming its cluster, and change a cluster only through
a repository that syncs to it (`homes`); with none, the kube server's default context alone.

Tools, brain, role and the team repositories' toolboxes travel in the run's `Context`; the
state holds only JSON, checkpointed per thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agents.platform import (
    arbitration,
    audits,
    blueprints,
    changes,
    intents,
    prompts,
    propagation,
    report,
)
from agents.platform.state import PlatformState
from agents.runtime import questions, requests
from agents.runtime.changes import asking, ops, words
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.modelsteps import planned
from agents.runtime.persistence import Durable
from agents.runtime.toolbox import Toolbox
from agents.runtime.wiring import AgentContext

AGENT = "platform"


@dataclass(frozen=True)
class Context(AgentContext):
    repos: Mapping[str, Toolbox] = field(default_factory=dict)  # repo id -> its gitops tools
    clusters: tuple[str, ...] = ()  # the contexts the procedures read; () the default one
    homes: Mapping[str, str] = field(default_factory=dict)  # repo id -> context it syncs to


async def understand(state: PlatformState) -> dict[str, Any]:
    task = state.get("task", "unsupported")
    if task in ("propagate", "audit", "blueprints", "escalations"):
        return {}
    question = state.get("question", "")
    if asking.confirmed(question, state.get("pending")):
        return {"task": "change"}
    read = requests.read(question)
    if changes.asks(read):
        return {"task": "change"}
    task = intents.read_question(question)
    if task in ("audit", "blueprints"):
        namespace, fix = intents.read_scope(state.get("question", ""), task)
        return {"task": task, "namespace": namespace, "fix": fix}
    if task == "unsupported" and read is not None and not isinstance(read, words.Asked):
        task = "question"  # not one of its own questions: one every agent answers the same way
    return {"task": task, "pending": None}


Step = Literal[
    "propagate", "compliance", "audit", "blueprints", "escalations", "change", "question", "clarify"
]  # what follows understanding: each ends the run


def route(state: PlatformState) -> Step:
    task = state.get("task", "unsupported")
    return "clarify" if task == "unsupported" else cast(Any, task)


async def propagate(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    done = await propagation.propagate(
        ctx.toolbox, ctx.repos, clusters=ctx.clusters, homes=ctx.homes
    )
    return {"result": dict(done), "answer": report.propagation(done)}


async def compliance(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    found = await propagation.propagate(
        ctx.toolbox, ctx.repos, deliver=False, clusters=ctx.clusters, homes=ctx.homes
    )
    return {"result": dict(found), "answer": report.propagation(found)}


async def audit(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox = runtime.context.toolbox
    done = await audits.audit(
        toolbox, runtime.context.repos,
        namespace=state.get("namespace") or None, fix=state.get("fix", True),
        clusters=runtime.context.clusters, homes=runtime.context.homes,
    )  # fmt: skip
    answer = report.audit(done)
    if state.get("namespace") or not toolbox.has("answer_approval"):
        return {"result": dict(done), "answer": answer}
    settled = await arbitration.answer_escalations(toolbox)  # the fleet's audit keeps it all
    answer += "\n" + report.escalations(settled)
    return {"result": {**done, "escalations": dict(settled)}, "answer": answer}


async def escalations(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    settled = await arbitration.answer_escalations(runtime.context.toolbox)
    return {"result": dict(settled), "answer": report.escalations(settled)}


async def sync_blueprints(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    done = await blueprints.sync(
        runtime.context.toolbox, runtime.context.repos,
        namespace=state.get("namespace") or None, fix=state.get("fix", True),
        clusters=runtime.context.clusters, homes=runtime.context.homes,
    )  # fmt: skip
    return {"result": dict(done), "answer": report.blueprints(done)}


def asked(state: PlatformState) -> tuple[str, str]:
    """The task kind (which selects the skill the model reads) and what the model is asked;
    a procedure scoped to one namespace says so."""
    task = state.get("task", "unsupported")
    question = state.get("question", "")
    if question:
        return task, question
    scope = f" Only namespace {state['namespace']}." if state.get("namespace") else ""
    return task, prompts.ASKS.get(task, task) + scope


async def change(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A namespace's frame changed as asked (a namespace, a quota, limits, pod security,
    access): policy, dry run, the gated write, validation; a destructive one asked back."""
    toolbox, question = runtime.context.toolbox, state.get("question", "")

    async def make() -> ops.Change | str:
        asked = words.read(question)
        if asked is None:
            return prompts.UNSUPPORTED
        return await changes.typed(toolbox, asked, state.get("namespace") or None)

    done = await asking.turn(toolbox, question, state.get("pending"), make, agent=AGENT,
                             settings=LoopSettings())  # fmt: skip
    return {"result": done.report, "answer": done.answer, "pending": done.pending}


async def question(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A question about the cluster (who may do what, what changed, may one do X), answered
    from the read tools with its evidence; it reads only."""
    asked = questions.read(state.get("question", ""), namespace=None)
    if asked is None:
        return {"result": {}, "answer": prompts.UNSUPPORTED}
    answered = await questions.answer(runtime.context.toolbox, asked)
    return {"result": answered.data, "answer": answered.text}


async def clarify(state: PlatformState) -> dict[str, Any]:
    return {"result": {}, "answer": prompts.UNSUPPORTED}


builder = StateGraph(PlatformState, context_schema=Context)
builder.add_node("understand", understand)
builder.add_node("propagate", planned(propagate, ask=asked))
builder.add_node("compliance", planned(compliance, ask=asked))
builder.add_node("audit", planned(audit, ask=asked))
builder.add_node("blueprints", planned(sync_blueprints, ask=asked))
builder.add_node("escalations", planned(escalations, ask=asked))
builder.add_node("change", change)
builder.add_node("question", question)
builder.add_node("clarify", clarify)
builder.add_edge(START, "understand")
builder.add_conditional_edges("understand", route)
for _name in get_args(Step):
    builder.add_edge(_name, END)


def compile_graph(durable: Durable) -> CompiledStateGraph[PlatformState, Context, Any, Any]:
    return builder.compile(checkpointer=durable.checkpointer, store=durable.store, name=AGENT)


# For LangGraph's own tools (langgraph.json); the agent compiles with its durable state.
graph = builder.compile(name=AGENT)
