"""A scripted chat model, shipped beside the real brains: the only fake LLM, so the model brain
runs the real graph and tools in tests, evals and anyone's own checks of an agent.

`ScriptedChatModel(turns=[...])` answers each model call with the next turn. A turn is an
AIMessage (tool calls included, e.g. from `calls(...)`) or a function of the conversation so far
returning one, for a script that must read a tool result (a pod's generated name) to go on.
`bind_tools` records the tool names it was offered and returns the model itself, as a real
provider's binding would offer them; `seen` keeps every conversation it was shown, so a test can
check what reached the model (tool results as ToolMessages); `shown` reads one back as a script
does. `scripted = True` is the mark the model guard (`agents.runtime.brain`) lets through.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
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


def shown(messages: Sequence[BaseMessage], tool: str) -> dict[str, Any]:
    """The latest result of `tool` the model was shown (a ToolMessage whose text is the JSON),
    as a script reads it to go on; {} when the model was shown none, or only a refusal."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage) and message.name == tool:
            if message.status == "error":
                return {}
            content = message.content
            text = content if isinstance(content, str) else "".join(_texts(content))
            value = json.loads(text)
            return value if isinstance(value, dict) else {"result": value}
    return {}


def _texts(blocks: list[Any]) -> list[str]:
    return [b.get("text", "") if isinstance(b, dict) else str(b) for b in blocks]


class ReplayedChatModel(ScriptedChatModel):
    """A script replayed from its first turn in every conversation it is shown: the turn is
    chosen by how often the model has already spoken in that conversation, as each run of a
    real model starts from its prompt. An eval run may hold several conversations (a tick per
    schedule, a `learn` per attempt) with one model."""

    script: list[Any] = Field(default_factory=list)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        spoken = sum(isinstance(m, AIMessage) for m in messages)
        if spoken >= len(self.script):
            raise AssertionError(
                f"the script has {len(self.script)} turns; the model was asked for turn "
                f"{spoken + 1} of a conversation"
            )
        turn = self.script[spoken]
        message = turn(list(messages)) if callable(turn) else turn
        return ChatResult(generations=[ChatGeneration(message=message)])


def from_script(path: Path) -> ReplayedChatModel:
    """The model a script file plays (evals/scripts/*.yaml; the format is in the README there):
    each turn asks for tool calls or answers, and an argument or a word of the answer may be
    read from a result the model was shown (`{from: tool, path, where, unless, take}`).
    A malformed script raises ValueError naming the file and the turn."""
    loaded = yaml.safe_load(Path(path).read_text())
    if not isinstance(loaded, dict) or not isinstance(loaded.get("turns"), list):
        raise ValueError(f"{path}: a script is a mapping with a list of `turns`")
    unknown = set(loaded) - {"description", "turns"}
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}; use description, turns")
    return ReplayedChatModel(
        script=[_turn(t, f"{path}: turn {n}") for n, t in enumerate(loaded["turns"], 1)]
    )


def _turn(spec: Any, where: str) -> Callable[[list[BaseMessage]], AIMessage]:
    if not isinstance(spec, dict) or len({"calls", "answer"} & set(spec)) != 1:
        raise ValueError(f"{where}: give exactly one of calls, answer")
    if set(spec) - {"calls", "answer", "with"} or ("with" in spec and "answer" not in spec):
        raise ValueError(f"{where}: a turn has calls, or an answer with optional `with`")
    if "calls" in spec:
        wanted = spec["calls"]
        if not isinstance(wanted, list) or not wanted or not all(_is_call(c) for c in wanted):
            raise ValueError(f"{where}: calls is a list of {{tool: name, args: {{...}}}}")

        def ask(messages: list[BaseMessage]) -> AIMessage:
            return calls(
                *((c["tool"], _resolved(c.get("args") or {}, messages, where)) for c in wanted)
            )

        return ask
    text, refs = str(spec["answer"]), spec.get("with") or {}

    def say(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(text.format(**_resolved(refs, messages, where)))

    return say


def _is_call(call: Any) -> bool:
    return (
        isinstance(call, dict)
        and isinstance(call.get("tool"), str)
        and set(call) <= {"tool", "args"}
        and isinstance(call.get("args") or {}, dict)
    )


def _resolved(value: Any, messages: list[BaseMessage], where: str) -> Any:
    if isinstance(value, dict) and "from" in value:
        return _read(value, messages, where)
    if isinstance(value, dict):
        return {k: _resolved(v, messages, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, messages, where) for v in value]
    return value


def _read(ref: dict[str, Any], messages: list[BaseMessage], where: str) -> Any:
    """One value read from the latest result of `from`: down `path` (dots; numbers index
    lists), then, in a list, the first item matching `where` and none of `unless`, then its
    `take` field."""
    found: Any = shown(messages, str(ref["from"]))
    for step in str(ref.get("path") or "").split(".") if ref.get("path") else []:
        try:
            found = found[int(step)] if isinstance(found, list) else found[step]
        except (IndexError, KeyError, ValueError) as exc:
            raise AssertionError(f"{where}: {ref} found no {step!r} in what was shown") from exc
    if isinstance(found, list) and {"where", "unless", "take"} & set(ref):
        wanted, unwanted = ref.get("where") or {}, ref.get("unless") or {}
        matches = [
            item for item in found
            if all(item.get(k) == v for k, v in wanted.items())
            and not any(item.get(k) == v for k, v in unwanted.items())
        ]  # fmt: skip
        if not matches:
            raise AssertionError(f"{where}: {ref} matched nothing in what was shown")
        found = matches[0]
    return found[ref["take"]] if "take" in ref else found
