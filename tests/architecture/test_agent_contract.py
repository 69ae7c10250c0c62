"""Every agent is found by name, opens the same way, and LangGraph's own tools can load it."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from agents.runtime import registry
from agents.runtime.contract import Agent

ROOT = Path(__file__).resolve().parents[2]
CREW = ("cluster_operator", "dev_team", "platform")


def test_the_registry_lists_the_three_agents_from_their_entry_points() -> None:
    assert registry.names() == CREW
    assert registry.find("no_such_agent") is None


@pytest.mark.parametrize("name", CREW)
def test_every_agent_opens_a_conversation_the_same_way(name: str) -> None:
    agent = registry.find(name)
    assert isinstance(agent, Agent) and agent.name == name
    parameters = inspect.signature(agent.open).parameters
    assert list(parameters)[:2] == ["servers", "planner"]
    for option in ("home", "thread", "on_call"):
        assert parameters[option].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", CREW)
def test_langgraph_json_names_each_agents_compiled_graph(name: str) -> None:
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    path, _, attribute = graphs[name].partition(":")
    module = ".".join(Path(path).with_suffix("").parts)
    graph = getattr(importlib.import_module(module), attribute)
    assert isinstance(graph, CompiledStateGraph)
    assert graph.name == name
