"""The two brains an agent can run with, and how the one in use is chosen.

- `Deterministic`: no model. The agent's fixed procedures (selected by skill metadata) decide
  which tools to call; answers are reproducible and the product works offline.
- `ModelPlanner`: a LangChain chat model plans the calls. It runs in the same graph, through the
  same `Toolbox.run`, under a step cap, so allow-lists and policy gates hold whoever plans.
  The model plans reads, and may propose changes, never make them: it is offered the role's
  read-only tools (the servers' `readOnlyHint`), and `act` refuses a write it names anyway,
  before any server sees it. Where the graph allows it, it is also offered `request_change`
  (agents/runtime/modelsteps.py), which only records a typed change for the graph; the change
  then goes the one way every change goes (agents/runtime/changes/carry.py: policy, dry run,
  pull request or gated write, validation, rollback). A model's own `set_image` or `merge_pr`
  would skip every one of them.

Each model turn is measured (`core.telemetry.model_call`): a `chat <model>` span by the GenAI
conventions, and the model calls, their duration and the tokens the provider reported as
`kubecrew_model_*` metrics; a write a model names counts as a `model_write` safeguard refusal.

`KUBECREW_MODEL=provider:model` (e.g. `openai:gpt-4.1`, `anthropic:claude-sonnet-4-5`,
`ollama:llama3.1`) picks a model through `langchain.chat_models.init_chat_model`, which the
optional extras bring (in a checkout `.venv/bin/pip install -e '.[openai]'`); unset means
deterministic. `KUBECREW_MODEL_DEV_TEAM` (and _CLUSTER_OPERATOR, _PLATFORM) gives one agent a
model of its own.

The guard: with `KUBECREW_MODEL_GUARD=1` (tests/conftest.py sets it) building a model
from the environment raises, and a `ModelPlanner` refuses any model not marked `scripted`, so a
test can never reach a real provider, whatever its environment holds.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import os
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from agents.runtime.errors import ModelUnavailable
from agents.runtime.toolbox import CallRecord, Toolbox
from core import telemetry

MODEL_ENV = "KUBECREW_MODEL"
GUARD_ENV = "KUBECREW_MODEL_GUARD"
MAX_STEPS = 8  # model turns per question: enough to read a diagnosis, events, logs and history
_EXTRAS = {
    "openai": "openai",
    "azure_openai": "openai",
    "anthropic": "anthropic",
    "google_genai": "google",
    "google": "google",
    "ollama": "ollama",
}
_PACKAGES = {  # the package each extra brings the provider's chat model in
    "openai": "langchain_openai",
    "anthropic": "langchain_anthropic",
    "google": "langchain_google_genai",
    "ollama": "langchain_ollama",
}


@dataclass(frozen=True)
class Deterministic:
    name: str = "deterministic"


@dataclass(frozen=True)
class ModelPlanner:
    model: BaseChatModel
    max_steps: int = MAX_STEPS

    def __post_init__(self) -> None:
        if guarded(os.environ) and not getattr(self.model, "scripted", False):
            raise ModelUnavailable(
                f"{GUARD_ENV} is set: only a scripted chat model may plan here, "
                f"not {type(self.model).__name__}"
            )

    @property
    def name(self) -> str:
        return f"model:{type(self.model).__name__}"

    async def think(
        self,
        toolbox: Toolbox,
        system: str,
        messages: Sequence[BaseMessage],
        *,
        proposing: Sequence[BaseTool] = (),
    ) -> AIMessage:
        """One model turn with the role's read tools bound (and `proposing`, the tools that
        only record a proposal for the graph): an answer, or the calls it wants."""
        bound = self.model.bind_tools([*reads(toolbox).values(), *proposing])
        turn = bound.ainvoke([SystemMessage(system), *messages])
        model, provider = _model_of(self.model)
        with telemetry.model_call(model, provider=provider, agent=toolbox.role.name) as measured:
            try:
                scripted = getattr(self.model, "scripted", False)
                reply = await (turn if scripted else _on_model_loop(turn))
            except Exception as exc:  # the provider's errors (HTTP status, timeouts, bad replies)
                raise ModelUnavailable(
                    f"the model ({self.name}{_endpoint(self.model)}) failed to answer: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if not isinstance(reply, AIMessage):
                raise ModelUnavailable(f"the model answered {type(reply).__name__}, not a message")
            usage = reply.usage_metadata
            measured.usage(
                usage["input_tokens"] if usage else 0,
                usage["output_tokens"] if usage else 0,
                response_model=str(reply.response_metadata.get("model_name") or ""),
            )
        return reply


def _model_of(model: BaseChatModel) -> tuple[str, str]:
    """The model's name as its provider knows it, and the provider (`openai`, `anthropic`):
    what traces and metrics call it."""
    name = next(
        (
            value
            for attribute in ("model_name", "model", "model_id")
            if isinstance(value := getattr(model, attribute, None), str) and value
        ),
        type(model).__name__,
    )
    package = type(model).__module__.split(".")[0]
    provider = package.removeprefix("langchain_") if package.startswith("langchain_") else ""
    return name, provider or model._llm_type


def _endpoint(model: BaseChatModel) -> str:
    """ " at URL" for a model served at a base URL someone chose (a local Ollama or vLLM)."""
    client = getattr(model, "root_async_client", None)  # OpenAI's, whichever way it was set
    for url in (getattr(client, "base_url", None), getattr(model, "base_url", None)):
        if url:
            return f" at {url}"
    return ""


Planner = Deterministic | ModelPlanner
T = TypeVar("T")


@functools.cache
def _model_loop() -> asyncio.AbstractEventLoop:
    """The one event loop, on a thread of its own, that every real model call of the process
    runs on. Provider clients pool connections bound to the loop that opened them
    (langchain-openai keeps one async HTTP client per process), while `kubecrew chat`, Slack and
    `run` start a loop per message: on those, the second message would find the pooled
    connection's loop closed."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="kubecrew-model", daemon=True).start()
    return loop


async def _on_model_loop(call: Coroutine[Any, Any, T]) -> T:
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, _model_loop()))


def reads(toolbox: Toolbox) -> dict[str, BaseTool]:
    """The toolbox's tools that change nothing, as their servers declare (`readOnlyHint`)."""
    return {
        name: tool
        for name, tool in toolbox.tools.items()
        if (tool.metadata or {}).get("readOnlyHint") is True
    }


async def act(toolbox: Toolbox, call: ToolCall) -> ToolMessage:
    """One tool call a model planned, run through `Toolbox.run`; a write of the role is refused
    here and recorded, so the model reads the refusal and a test sees it. A tool outside the
    allow-list goes on to `Toolbox.run`, which refuses it in its own words."""
    name = call["name"]
    if not toolbox.has(name) or name in reads(toolbox):
        return await toolbox.run(call)
    refused = (
        f"tool {name!r} changes things, and a model plans reads only; nothing was called. "
        "Ask for a change with request_change where it is offered (it then goes through "
        "policy, a dry run, a pull request where git defines the object or a gated write, and "
        "validation); otherwise the remediation loop makes changes (ask to fix or heal the "
        "workload)"
    )
    telemetry.safeguard_refused("model_write", f"the model planned {name}")
    toolbox.calls.append(CallRecord(name, dict(call["args"]), refused))
    return ToolMessage(refused, tool_call_id=call.get("id") or "", name=name, status="error")


def model_spec(agent: str | None = None, environ: Mapping[str, str] = os.environ) -> str:
    """The `provider:model` an agent plans with: `KUBECREW_MODEL_<AGENT>` (DEV_TEAM,
    CLUSTER_OPERATOR, PLATFORM) when set, else `KUBECREW_MODEL`; "" for deterministic."""
    if agent:
        own = environ.get(f"{MODEL_ENV}_{agent.upper().replace('-', '_')}", "").strip()
        if own:
            return own
    return environ.get(MODEL_ENV, "").strip()


def planner_from_env(
    environ: Mapping[str, str] = os.environ, *, agent: str | None = None
) -> Planner:
    spec = model_spec(agent, environ)
    return ModelPlanner(load_chat_model(spec, environ)) if spec else Deterministic()


def brain_of(agent: str | None = None, environ: Mapping[str, str] = os.environ) -> str:
    """What an agent plans with, in words, without building anything: its model, and whether
    the package that model needs is installed."""
    spec = model_spec(agent, environ)
    if not spec:
        return "deterministic"
    extra = _EXTRAS.get(spec.partition(":")[0])
    if extra is None:
        return f"model {spec} (unknown provider: it will not start)"
    if importlib.util.find_spec(_PACKAGES[extra]) is None:
        return f"model {spec} (not installed: {_install_hint(extra)})"
    return f"model {spec}"


def load_chat_model(spec: str, environ: Mapping[str, str] = os.environ) -> BaseChatModel:
    """The chat model `provider:model` names, or ModelUnavailable saying what to install."""
    if guarded(environ):
        raise ModelUnavailable(
            f"{GUARD_ENV} is set, so no real model is built ({MODEL_ENV}={spec!r}); "
            "tests use agents.runtime.scripted"
        )
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise ModelUnavailable(
            f"{MODEL_ENV}={spec!r} is not provider:model; e.g. openai:gpt-4.1 or "
            "ollama:llama3.1, or unset it for the deterministic planner"
        )
    extra = _EXTRAS.get(provider)
    if extra is None:
        raise ModelUnavailable(
            f"{MODEL_ENV}={spec!r}: unknown provider {provider!r}; use provider:model with one "
            f"of {', '.join(sorted(_EXTRAS))}"
        )
    try:
        chat_models: Any = importlib.import_module("langchain.chat_models")
        built = chat_models.init_chat_model(model, model_provider=provider)
    except ImportError as exc:
        raise ModelUnavailable(
            f"{MODEL_ENV}={spec!r} needs the {extra!r} extra, not installed here: "
            f"{_install_hint(extra)}"
        ) from exc
    except ValueError as exc:
        raise ModelUnavailable(f"{MODEL_ENV}={spec!r}: {exc}") from exc
    if not isinstance(built, BaseChatModel):
        raise ModelUnavailable(f"{MODEL_ENV}={spec!r} did not build a chat model")
    return built


def _install_hint(extra: str) -> str:
    """How to install an extra here: into the checkout's venv, or as a package."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return f"cd {root} && .venv/bin/pip install -e '.[{extra}]'"
    return f"pip install 'kubecrew[{extra}]'"


def guarded(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the test guard is on: only a scripted chat model may plan."""
    return environ.get(GUARD_ENV, "") not in ("", "0")
