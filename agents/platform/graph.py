"""The Platform graph: understand -> (propagate | compliance | audit | blueprints | escalations |
clarify) -> END.

- understand: a procedure run (`propagate`, on a schedule or when an EgressPolicy changes)
  arrives with its task set; a question is read as a compliance question ("which namespaces are
  not compliant with the egress policy?") or answered with what the agent can do.
- propagate: render, deliver and confirm every covered namespace (`propagation`).
- compliance: the same confirmation from live state, changing nothing.
- audit ("audit the fleet", "audit shop", scheduled): findings with evidence, and a fix PR where
  a manifest fixes one (`audits`).
- blueprints ("sync blueprints" fixes by PR; "is shop on the blueprint?" only looks):
  namespace blueprints compared with live field by field (`blueprints`), in every cluster of
  the context's `clusters` (kubeconfig contexts), each fixed only through a repository that
  syncs to it (`homes`).
- escalations ("answer escalations", "any escalations?", "arbitrate", scheduled): the pending
  approval requests that name the Platform as the org's arbiter, each granted, denied or left
  to the people from a fresh evaluation of its action (`arbitration`). A scheduled audit of the
  fleet answers them too, after its findings: both are the org's policy kept in force.

Two brains, one graph: with a model brain every node but clarify is `modelsteps.planned`:
the model first reads what it chooses (the org policies, the namespaces they cover, the live
NetworkPolicies and workloads) with the role's read tools, until it answers or reaches the step
cap, and then the same procedure runs, rendering and comparing from what it reads itself;
`result.model` keeps the model's calls and the answer ends with its reading. Rendering,
notices, PRs, merges on a decision, gated applies and the confirmation from live state stay
the procedure's, whoever plans.

Tools, brain, role and the team repositories' toolboxes travel in the run's `Context`; the
state holds only JSON, checkpointed per thread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agents.platform import arbitration, audits, blueprints, propagation, report
from agents.platform.state import PlatformState, Task
from agents.runtime.modelsteps import planned
from agents.runtime.persistence import Durable
from agents.runtime.toolbox import Toolbox
from agents.runtime.wiring import AgentContext

AGENT = "platform"
UNSUPPORTED = (
    "I look after org policy. Ask me 'which namespaces are not compliant with the egress "
    "policy?', 'audit the fleet', 'audit shop', 'sync blueprints', 'is shop on the "
    "blueprint?' or 'answer escalations', or run a propagation (`propagate`) to render, "
    "deliver and confirm egress."
)
_AUDIT = re.compile(r"\baudit\b", re.IGNORECASE)
_ESCALATIONS = re.compile(r"\b(escalations?|escalated|arbitrat\w*)\b", re.IGNORECASE)
_AUDIT_OF = re.compile(
    r"\baudit(?:\s+of)?\s+(?:the\s+)?(?:namespace\s+)?([a-z0-9][-a-z0-9]*)", re.IGNORECASE
)
_BLUEPRINT = re.compile(r"\bblueprints?\b", re.IGNORECASE)
_ON_BLUEPRINT = re.compile(
    r"\b([a-z0-9][-a-z0-9]*)\s+(?:on|match(?:es|ing)?)\s+(?:the\s+|its\s+)?blueprint"
)
_BLUEPRINT_OF = re.compile(r"blueprints?\s+(?:for|of|in)\s+(?:namespace\s+)?([a-z0-9][-a-z0-9]*)")
_FIX = re.compile(r"\b(sync|fix|enforce|apply|reconcile)\b", re.IGNORECASE)
_FLEET = frozenset({"fleet", "cluster", "clusters", "everything", "all", "namespaces", "me"})
_EGRESS = re.compile(r"\b(egress|network ?polic(y|ies)|netpol)\b", re.IGNORECASE)
_STATE = re.compile(r"\b(complian\w*|enforc\w*|in force|missing|drift\w*)\b", re.IGNORECASE)


ASKS: dict[str, str] = {
    "propagate": (
        "Propagate the org's egress policies: read each EgressPolicy, the namespaces it covers "
        "(by name or by their labels) and the NetworkPolicies live in them."
    ),
    "audit": (
        "Audit the fleet: read the role bindings, the workloads (their limits, probes, "
        "budgets, security contexts and images) and the ImagePolicy."
    ),
    "blueprints": (
        "Check the namespaces against their NamespaceBlueprint: read the blueprints and the "
        "quotas, limit ranges, network policies and role bindings live in the namespaces."
    ),
    "escalations": (
        "Answer the escalations org policy settles: read the pending approval requests that "
        "name you, their proposals, and the PriorityPolicy."
    ),
}  # what the model is asked to read for a procedure; a question is asked in its own words


@dataclass(frozen=True)
class Context(AgentContext):
    repos: Mapping[str, Toolbox] = field(default_factory=dict)  # repo id -> its gitops tools
    clusters: tuple[str, ...] = ()  # the contexts blueprints are kept in; () the default one
    homes: Mapping[str, str] = field(default_factory=dict)  # repo id -> context it syncs to


def read_question(question: str) -> Task:
    if _ESCALATIONS.search(question):
        return "escalations"
    if _AUDIT.search(question):
        return "audit"
    if _BLUEPRINT.search(question):
        return "blueprints"
    if _EGRESS.search(question) or _STATE.search(question):
        return "compliance"
    return "unsupported"


def read_scope(question: str, task: Task) -> tuple[str, bool]:
    """The one namespace a question names ("" for the fleet), and whether to fix: an audit
    fixes what a PR can; blueprints are fixed when asked to sync, else only looked at."""
    if task == "audit":
        found = _AUDIT_OF.search(question)
        named = found.group(1).lower() if found else ""
        return ("" if named in _FLEET else named), True
    found = _ON_BLUEPRINT.search(question) or _BLUEPRINT_OF.search(question)
    named = found.group(1).lower() if found else ""
    return ("" if named in _FLEET or named == "namespace" else named), bool(_FIX.search(question))


async def understand(state: PlatformState) -> dict[str, Any]:
    task = state.get("task", "unsupported")
    if task in ("propagate", "audit", "blueprints", "escalations"):
        return {}
    task = read_question(state.get("question", ""))
    if task in ("audit", "blueprints"):
        namespace, fix = read_scope(state.get("question", ""), task)
        return {"task": task, "namespace": namespace, "fix": fix}
    return {"task": task}


def route(
    state: PlatformState,
) -> Literal["propagate", "compliance", "audit", "blueprints", "escalations", "clarify"]:
    task = state.get("task", "unsupported")
    return "clarify" if task == "unsupported" else cast(Any, task)


async def propagate(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    done = await propagation.propagate(runtime.context.toolbox, runtime.context.repos)
    return {"result": dict(done), "answer": report.propagation(done)}


async def compliance(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    found = await propagation.propagate(
        runtime.context.toolbox, runtime.context.repos, deliver=False
    )
    return {"result": dict(found), "answer": report.propagation(found)}


async def audit(state: PlatformState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox = runtime.context.toolbox
    done = await audits.audit(
        toolbox, runtime.context.repos,
        namespace=state.get("namespace") or None, fix=state.get("fix", True),
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
    return task, ASKS.get(task, task) + scope


async def clarify(state: PlatformState) -> dict[str, Any]:
    return {"result": {}, "answer": UNSUPPORTED}


builder = StateGraph(PlatformState, context_schema=Context)
builder.add_node("understand", understand)
builder.add_node("propagate", planned(propagate, ask=asked))
builder.add_node("compliance", planned(compliance, ask=asked))
builder.add_node("audit", planned(audit, ask=asked))
builder.add_node("blueprints", planned(sync_blueprints, ask=asked))
builder.add_node("escalations", planned(escalations, ask=asked))
builder.add_node("clarify", clarify)
builder.add_edge(START, "understand")
builder.add_conditional_edges("understand", route)
for _name in ("propagate", "compliance", "audit", "blueprints", "escalations", "clarify"):
    builder.add_edge(_name, END)


def compile_graph(durable: Durable) -> CompiledStateGraph[PlatformState, Context, Any, Any]:
    return builder.compile(checkpointer=durable.checkpointer, store=durable.store, name=AGENT)


# For LangGraph's own tools (langgraph.json); the agent compiles with its durable state.
graph = builder.compile(name=AGENT)
