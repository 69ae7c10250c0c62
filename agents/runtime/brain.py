"""The two brains an agent can run with, and how the one in use is chosen.

- `Deterministic`: no model. The agent's fixed procedures (selected by skill metadata) decide
  which tools to call; answers are reproducible and the product works offline.
- `ModelPlanner`: a LangChain chat model with the role's tools bound plans the calls. It runs in
  the same graph, through the same `Toolbox.run`, under a step cap, so allow-lists and (in later
  slices) policy gates hold whoever plans.

`KUBECREW_MODEL=provider:model` (e.g. `openai:gpt-4.1`, `anthropic:claude-sonnet-4-5`,
`ollama:llama3.1`) picks a model through `langchain.chat_models.init_chat_model`, which the
optional extras bring (`pip install 'kubecrew[openai]'`); unset means deterministic.

The guard: with `KUBECREW_MODEL_GUARD=1` (tests/agents/conftest.py sets it) building a model
from the environment raises, and a `ModelPlanner` refuses any model not marked `scripted`, so a
test can never reach a real provider, whatever its environment holds.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from agents.runtime.errors import ModelUnavailable
from agents.runtime.toolbox import Toolbox

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


@dataclass(frozen=True)
class Deterministic:
    name: str = "deterministic"


@dataclass(frozen=True)
class ModelPlanner:
    model: BaseChatModel
    max_steps: int = MAX_STEPS

    def __post_init__(self) -> None:
        if _guarded(os.environ) and not getattr(self.model, "scripted", False):
            raise ModelUnavailable(
                f"{GUARD_ENV} is set: only a scripted chat model may plan here, "
                f"not {type(self.model).__name__}"
            )

    @property
    def name(self) -> str:
        return f"model:{type(self.model).__name__}"

    async def think(
        self, toolbox: Toolbox, system: str, messages: Sequence[BaseMessage]
    ) -> AIMessage:
        """One model turn with the role's tools bound: an answer, or the tool calls it wants."""
        bound = self.model.bind_tools(list(toolbox.tools.values()))
        reply = await bound.ainvoke([SystemMessage(system), *messages])
        if not isinstance(reply, AIMessage):
            raise ModelUnavailable(f"the model answered {type(reply).__name__}, not a message")
        return reply


Planner = Deterministic | ModelPlanner


def planner_from_env(environ: Mapping[str, str] = os.environ) -> Planner:
    spec = environ.get(MODEL_ENV, "").strip()
    return ModelPlanner(load_chat_model(spec, environ)) if spec else Deterministic()


def load_chat_model(spec: str, environ: Mapping[str, str] = os.environ) -> BaseChatModel:
    """The chat model `provider:model` names, or ModelUnavailable saying what to install."""
    if _guarded(environ):
        raise ModelUnavailable(
            f"{GUARD_ENV} is set, so no real model is built ({MODEL_ENV}={spec!r}); "
            "tests use tests/support/chat_models.py"
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
            f"{MODEL_ENV}={spec!r} needs the {extra!r} extra: pip install 'kubecrew[{extra}]' "
            f"({exc})"
        ) from exc
    except ValueError as exc:
        raise ModelUnavailable(f"{MODEL_ENV}={spec!r}: {exc}") from exc
    if not isinstance(built, BaseChatModel):
        raise ModelUnavailable(f"{MODEL_ENV}={spec!r} did not build a chat model")
    return built


def _guarded(environ: Mapping[str, str]) -> bool:
    return environ.get(GUARD_ENV, "") not in ("", "0")
