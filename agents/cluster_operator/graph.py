"""The Cluster Operator graph: understand -> (patrol | capacity | fleet | nodes | drain_preview |
savings | maintenance | readiness | upgrade_readiness | upgrade | node_change | question |
clarify) -> END.

- understand: a procedure run (`patrol`, `capacity`, `fleet`) arrives with its task set; a
  question is read into its kind by `intents.read_question` ("which nodes are unhealthy?",
  "what would draining node X do?", "where can we save cost?", "plan maintenance of node-3 for
  a kernel upgrade", "are the nodes ready to serve?", "how are the clusters?", "are we ready to
  upgrade to 1.38?"); anything else
  becomes the clarifying answer (`prompts.UNSUPPORTED`).
- patrol: node readiness enforced (`readiness`: the taint follows the declared rules), the
  unhealthy nodes (`nodes`) each taken as far as they may go now (`migration.migrate`, with the
  node's queued maintenance folded in), the nodes whose pods' restarts rise alone moved off
  the same way (`restarts`; the first patrol only records), then the maintenance queue
  (`maintenance.run`: in the window, one node out at once), drained pool nodes taken out of
  their pool (`removal`), an upgrade under way carried on (`upgrading.advance`), nodes below
  a PatchPolicy rolled onto its template the same way (`patching`), and pods the
  scheduler cannot place answered with a pool's scale-up (`provisioning`); capacity: the underused
  workloads proposed and, as decided, applied (`capacity`; a workload that cannot lose replicas
  gets its CPU requests right-sized the same way, `rightsizing`), and the emptiest underused node
  whose pods fit elsewhere proposed for draining (`consolidation`); fleet: every cluster's
  health and load, an imbalance answered with a proposal (`fleet`). All write only through
  gated tools; other teams' workloads only under approved proposals.
- maintenance: the reason queued against the node (one entry per node), the window told; the
  patrol does the work.
- upgrade ("upgrade the cluster to 1.38"): read and refused with the reason, or planned and
  asked back; on "yes" carried out (`upgrading`: the control plane, then each pool, the canary
  first) as far as it goes now; "continue the upgrade" carries it on, "how is the upgrade
  going?" reads it. nodes / drain_preview / savings / readiness / upgrade_readiness
  (`upgrades`: skew, removed APIs in git, drain blockers): readings, nothing changed.

Two brains, one graph: with a model brain every node but clarify is `modelsteps.planned`:
the model first reads what it chooses (nodes, pods, drain plans, usage, policies; a procedure
run asks it what `prompts.ASKS` says, a question in its own words) with the role's read tools,
until it answers or reaches the step cap, and then the same procedure runs, reading what it
decides on from the servers itself; `result.model` keeps the model's calls and the answer ends
with its reading. Proposals, the policy store's decisions, cordons, drains and scales stay the
procedure's, behind the same gates, whoever plans.

Tools, brain and role travel in the run's `Context`; the state holds only JSON, checkpointed
per thread, and the in-flight intents and the maintenance queue live in the store
(`runtime.store`), so a later patrol on another thread carries on what an earlier one started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from agents.cluster_operator import (
    capacity,
    consolidation,
    fleet,
    intents,
    maintenance,
    migration,
    node_changes,
    nodes,
    patching,
    prompts,
    provisioning,
    readiness,
    removal,
    report,
    restarts,
    rightsizing,
    upgrade_said,
    upgrades,
    upgrading,
)
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.state import OperatorState
from agents.runtime import questions, requests
from agents.runtime.changes import asking, ops, words
from agents.runtime.changes.words import affirmative
from agents.runtime.errors import AgentError
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.modelsteps import planned
from agents.runtime.persistence import Durable
from agents.runtime.wiring import AgentContext

AGENT = "cluster_operator"


@dataclass(frozen=True)
class Context(AgentContext):
    counters: Literal["accept", "refuse"] = "accept"  # how capacity proposals take counters
    clusters: tuple[str, ...] = ()  # the kubeconfig contexts the fleet survey covers
    git_home: str | None = None  # the context the crew's GitOps repository syncs to, if any


async def understand(state: OperatorState) -> dict[str, Any]:
    if state.get("task") in ("patrol", "capacity", "fleet"):
        return {}
    question = state.get("question", "")
    if upgrading.waits_for_yes(state.get("pending")) and affirmative(question):
        return {"task": "upgrade"}
    if asking.confirmed(question, state.get("pending")):
        return {"task": "node-change"}
    read = requests.read(question)
    if node_changes.asks(read):
        return {"task": "node-change"}
    task, node, reason = intents.read_question(question)
    if task == "upgrade-readiness" and isinstance(read, words.Asked):
        task = "unsupported"  # "upgrade web to 1.28": a workload's image, the Dev Team's
    elif task == "upgrade-readiness" and not (
        requests.asks(question) or intents.assesses(question)
    ):
        task = "upgrade"  # "upgrade the cluster to 1.38": asked back before it starts
    if task == "unsupported" and read is not None and not isinstance(read, words.Asked):
        task = "question"  # not one of its own questions: one every agent answers the same way
    return {"task": task, "node": node, "reason": reason, "pending": None}


async def question(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A question about the cluster (how full, which nodes are under pressure, what runs),
    answered from the read tools with its evidence; it reads only."""
    asked = questions.read(state.get("question", ""), namespace=None)
    if asked is None:
        raise AgentError("the question was read in understand but not again")
    answered = await questions.answer(runtime.context.toolbox, asked)
    return {"result": answered.data, "answer": answered.text}


async def node_change(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A node change asked in words (cordon, drain, taint, label): policy, dry run, the gated
    write, the node read back; a drain is asked back first."""
    toolbox, question = runtime.context.toolbox, state.get("question", "")

    async def make() -> ops.Change | str:
        asked = words.read(question)
        return await node_changes.typed(toolbox, asked) if asked else prompts.UNSUPPORTED

    done = await asking.turn(toolbox, question, state.get("pending"), make, agent=AGENT,
                             settings=LoopSettings())  # fmt: skip
    return {"result": done.report, "answer": done.answer, "pending": done.pending}


Route = Literal[
    "patrol", "capacity", "fleet", "nodes", "drain_preview", "savings", "maintenance",
    "readiness", "upgrade_readiness", "upgrade", "patching", "node_change", "question",
    "clarify",
]  # fmt: skip


def route(state: OperatorState) -> Route:
    task = state.get("task", "unsupported")
    return "clarify" if task == "unsupported" else cast(Route, task.replace("-", "_"))


async def patrol(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox, store = runtime.context.toolbox, _store(runtime)
    ready = await readiness.enforce(toolbox)
    issues = await nodes.unhealthy(toolbox)
    moved = [
        await migration.migrate(
            toolbox, store, issue, also=await maintenance.reasons_for(store, issue["node"])
        )
        for issue in issues
    ]
    sick = frozenset(i["node"] for i in issues)
    degrading, handed = await restarts.patrol(toolbox, store, skip=sick)
    queue = await maintenance.run(toolbox, store, migrated={m["node"]: m for m in moved + handed})
    removed = await removal.release(toolbox, store, queue)
    upgraded = await upgrading.advance(toolbox, store)
    patched = await patching.patrol(toolbox, store)
    busy = upgrading.rolling(upgraded) | upgrading.rolling(patched["roll"])
    provisioned = await provisioning.review(toolbox, store, busy=busy)
    result = {
        "readiness": ready, "nodes": issues, "migrations": moved, "maintenance": queue,
        "degrading": degrading, "restart_migrations": handed, "pool_removals": removed,
        "provisioning": provisioned, "upgrade": upgraded, "patching": patched,
    }  # fmt: skip
    answer = report.patrol(issues, moved)
    extra = [
        restarts.said(degrading, handed),
        report.readiness(ready, applied=True),
        report.maintenance(queue),
        report.pool_removals(removed),
        report.provisioning(provisioned),
        upgrade_said.said_pass(upgraded) if upgraded["steps"] else "",
        patching.said(patched),
    ]
    return {"result": result, "answer": "\n\n".join([answer, *(e for e in extra if e)])}


async def fleet_survey(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Every cluster's health and load; a procedure run proposes a move for an imbalance."""
    toolbox, clusters = runtime.context.toolbox, list(runtime.context.clusters) or [""]
    health = await fleet.survey(toolbox, clusters)
    moves = (
        await fleet.balance(toolbox, _store(runtime), health, git_home=runtime.context.git_home)
        if state.get("task") == "fleet" and not state.get("question")
        else []
    )
    return {
        "result": {
            "clusters": health,
            "moves": moves,
            "imbalance": fleet.imbalance(health) is not None,
        },
        "answer": report.fleet(health, moves),
    }


async def plan_maintenance(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox, store, node = runtime.context.toolbox, _store(runtime), state["node"]
    at = await cluster_now(toolbox)
    entry = await maintenance.queue(store, node, state.get("reason") or "maintenance", at=at)
    plan = await toolbox.call("drain_plan", node=node)
    pods = sum(1 for p in plan["pods"] if p["action"] == "evict")
    opens = await maintenance.window(toolbox, node, pods, at=at)
    result = {"entry": entry, "pods": pods, "opens_at": opens, "plan": plan}
    return {"result": result, "answer": report.queued(entry, pods, opens)}


async def check_readiness(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    found = await readiness.enforce(runtime.context.toolbox, apply=False)
    return {"result": {"readiness": found}, "answer": report.readiness(found, applied=False)}


async def upgrade_readiness(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """What stands between each cluster (the fleet's, else the one) and the minor version asked
    (else its next): skew, removed APIs, drain blockers, warnings; read only."""
    question, context = state.get("question", ""), runtime.context
    target = upgrades.target_in(question)
    home = context.git_home or ""
    found = [
        await upgrades.readiness(context.toolbox, target=target, cluster=c, git=c == home)
        for c in context.clusters or ("",)
    ]
    answer = "\n\n".join(upgrades.said(f) for f in found)
    result = {"upgrade": found[0]} if len(found) == 1 else {"clusters": found}
    return {"result": result, "answer": answer}


async def upgrade(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """An upgrade of the cluster: planned and asked back, started on "yes", carried on when it
    is under way ("continue the upgrade"), told when asked how it goes (then only read)."""
    toolbox, store, question = runtime.context.toolbox, _store(runtime), state.get("question", "")
    pending, under_way = state.get("pending"), await upgrading.current(store)
    going = under_way is not None and under_way["state"] not in ("done", "rolled-back")
    if going and not upgrading.waits_for_yes(pending):
        if requests.asks(question):
            told = upgrading.told(under_way)
            return {"result": {"upgrade": under_way}, "answer": upgrade_said.said_pass(told)}
        done = await upgrading.drive(toolbox, store)
        return {"result": {"upgrade": done}, "answer": upgrade_said.said_pass(done)}
    if pending is None and intents.read_question(question)[0] == "upgrade":
        told = upgrading.told(under_way)
        return {"result": {"upgrade": under_way}, "answer": upgrade_said.said_pass(told)}
    release = str((pending or {}).get("upgrade") or "") or upgrade_said.release_in(
        question, await upgrading.served(toolbox)
    )
    found, planned, refusals = await upgrading.plan(toolbox, release)
    if planned is None:
        answer = upgrade_said.said_refused(found, refusals)
        if found["refused"] or upgrades.blockers(found):  # the reading says why: show it
            answer += "\n\n" + upgrades.said(found)
        return {"result": {"readiness": found, "refused": refusals}, "answer": answer,
                "pending": None}  # fmt: skip
    if not upgrading.waits_for_yes(pending):  # asked back: a front door asks "Go on?"
        asked, said = {"upgrade": release}, upgrade_said.said_plan(planned, found)
        return {"result": {"readiness": found, "plan": planned, "clarification": said,
                           "confirm": asked}, "answer": said, "pending": asked}  # fmt: skip
    await upgrading.start(store, planned)
    done = await upgrading.drive(toolbox, store)
    return {"result": {"upgrade": done}, "answer": upgrade_said.said_pass(done), "pending": None}


async def patch(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Security patching asked in words: a question ("which nodes need patching?") is told the
    nodes below their PatchPolicy and writes nothing; a command ("patch the nodes") runs the
    patrol's patching now, the org's standing decision carried out through the same gate."""
    toolbox, store, question = runtime.context.toolbox, _store(runtime), state.get("question", "")
    if requests.asks(question) or intents.assesses(question):
        found = await patching.findings(toolbox, store)
    else:
        found = await patching.patrol(toolbox, store)
    return {"result": {"patching": found}, "answer": patching.said(found, asked=True)}


async def capacity_review(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox, store = runtime.context.toolbox, _store(runtime)
    meter = capacity.Meter(toolbox)
    found = await capacity.underused(toolbox, meter)
    done = [
        await capacity.propose_and_apply(toolbox, store, s, counters=runtime.context.counters)
        for s in found
    ]
    skip = frozenset(s["workload"] for s in found)
    resized = [
        await rightsizing.propose_and_apply(toolbox, store, r, counters=runtime.context.counters)
        for r in await rightsizing.oversized(toolbox, skip=skip, meter=meter)
    ]
    nodes_out = await consolidation.review(toolbox, store)
    waiting = await consolidation.in_progress(store)
    told = [
        report.savings(done, proposed=True) if done or not resized else "",
        report.rightsizing(resized, proposed=True),
    ]
    answer = "\n\n".join([*(t for t in told if t), consolidation.said(nodes_out, waiting=waiting)])
    result = {"savings": done, "rightsizing": resized, "consolidation": nodes_out}
    return {"result": result, "answer": answer}


async def list_nodes(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    issues = await nodes.unhealthy(runtime.context.toolbox)
    return {"result": {"nodes": issues}, "answer": report.patrol(issues, [])}


async def drain_preview(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    plan = await runtime.context.toolbox.call("drain_plan", node=state["node"])
    return {"result": {"plan": plan}, "answer": report.drain_preview(plan)}


async def savings(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox = runtime.context.toolbox
    meter = capacity.Meter(toolbox)
    found = await capacity.underused(toolbox, meter)
    skip = frozenset(s["workload"] for s in found)
    resized = await rightsizing.oversized(toolbox, skip=skip, meter=meter)
    told = [
        report.savings(found, proposed=False) if found or not resized else "",
        report.rightsizing(resized, proposed=False),
    ]
    return {
        "result": {"savings": found, "rightsizing": resized},
        "answer": "\n\n".join(t for t in told if t),
    }


async def clarify(state: OperatorState) -> dict[str, Any]:
    return {"result": {}, "answer": prompts.UNSUPPORTED}


def asked(state: OperatorState) -> tuple[str, str]:
    """The task kind (which selects the skill the model reads) and what the model is asked."""
    task = state.get("task", "unsupported")
    return task, state.get("question") or prompts.ASKS.get(task, task)


def _store(runtime: Runtime[Context]) -> BaseStore:
    if runtime.store is None:
        raise AgentError("the Cluster Operator needs its store (open_durable) to remember intents")
    return runtime.store


builder = StateGraph(OperatorState, context_schema=Context)
builder.add_node("understand", understand)
builder.add_node("patrol", planned(patrol, ask=asked))
builder.add_node("capacity", planned(capacity_review, ask=asked))
builder.add_node("nodes", planned(list_nodes, ask=asked))
builder.add_node("drain_preview", planned(drain_preview, ask=asked))
builder.add_node("savings", planned(savings, ask=asked))
builder.add_node("fleet", planned(fleet_survey, ask=asked))
builder.add_node("maintenance", planned(plan_maintenance, ask=asked))
builder.add_node("readiness", planned(check_readiness, ask=asked))
builder.add_node("upgrade_readiness", planned(upgrade_readiness, ask=asked))
builder.add_node("upgrade", upgrade)
builder.add_node("patching", patch)
builder.add_node("node_change", node_change)
builder.add_node("question", question)
builder.add_node("clarify", clarify)
builder.add_edge(START, "understand")
builder.add_conditional_edges("understand", route)
for _name in get_args(Route):
    builder.add_edge(_name, END)


def compile_graph(durable: Durable) -> CompiledStateGraph[OperatorState, Context, Any, Any]:
    return builder.compile(checkpointer=durable.checkpointer, store=durable.store, name=AGENT)


# For LangGraph's own tools (langgraph.json); the agent compiles with its durable state.
graph = builder.compile(name=AGENT)
