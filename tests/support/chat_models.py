"""A scripted chat model: the only fake LLM, so the model brain runs the real graph and tools.

`ScriptedChatModel(turns=[...])` answers each model call with the next turn. A turn is an
AIMessage (tool calls included, e.g. from `calls(...)`) or a function of the conversation so far
returning one, for a script that must read a tool result (a pod's generated name) to go on.
`bind_tools` records the tool names it was offered and returns the model itself, as a real
provider's binding would offer them; `seen` keeps every conversation it was shown, so a test can
check what reached the model (tool results as ToolMessages). `scripted = True` is the mark the
model guard (`agents.runtime.brain`) lets through.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

Turn = AIMessage | Callable[[list[BaseMessage]], AIMessage]
_ids = itertools.count(1)


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> AIMessage:
    """A model turn that asks for these tool calls."""
    return AIMessage(
        content="",
        tool_calls=[
            ToolCall(name=name, args=args, id=f"scripted-{next(_ids)}") for name, args in tool_calls
        ],
    )


class ScriptedChatModel(BaseChatModel):
    turns: list[Any] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    offered: list[str] = Field(default_factory=list)
    scripted: bool = True

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        self.offered = sorted(getattr(tool, "name", str(tool)) for tool in tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        if not self.turns:
            raise AssertionError("the scripted model was called more often than scripted")
        turn = self.turns.pop(0)
        message = turn(list(messages)) if callable(turn) else turn
        return ChatResult(generations=[ChatGeneration(message=message)])
