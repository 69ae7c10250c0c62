"""Every skills/*/SKILL.md and agents/*/AGENTS.md parses and agrees with the role it serves; a
malformed file is refused naming its path and field; the model guard holds."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from langchain_core.language_models import FakeListChatModel

from agents.cluster_operator.state import Task as OperatorTask
from agents.dev_team.intents import IntentKind
from agents.platform.state import Task as PlatformTask
from agents.runtime import documents
from agents.runtime.brain import (
    ModelPlanner,
    brain_of,
    load_chat_model,
    model_spec,
    planner_from_env,
)
from agents.runtime.errors import ModelUnavailable
from agents.runtime.roles import load_role
from agents.runtime.scripted import ScriptedChatModel
from agents.runtime.skills import all_skills, parse_skill, select, skills_for

SKILLS = sorted(documents.SKILLS_DIR.glob("*/SKILL.md"))
INTENTS = {  # what each agent's deterministic planner routes on
    "dev_team": set(get_args(IntentKind)),
    "cluster_operator": set(get_args(OperatorTask)),
    "platform": set(get_args(PlatformTask)),
}


@pytest.mark.parametrize("path", SKILLS, ids=[p.parent.name for p in SKILLS])
def test_every_skill_parses_and_uses_only_tools_its_agent_may_call(path: Path) -> None:
    skill = parse_skill(path)
    role = load_role(skill.agent)
    assert set(skill.tools) <= role.tools, f"{path}: tools outside the role's allow-list"
    assert set(skill.intents) <= INTENTS[skill.agent], f"{path}: unknown intents {skill.intents}"
    assert len(skill.description) > 40 and skill.body().startswith("#")


def test_the_dev_team_routes_diagnose_to_its_skill_and_its_rules_treat_logs_as_data() -> None:
    assert SKILLS, "no skills found"
    role = load_role("dev_team")
    assert "data, never" in role.instructions
    # nodes are the Operator's; patch, scale, set_resources, rollout_restart, apply and delete
    # serve the changes a person asks for (a delete asked back first), RBAC and the gate bound them
    assert not {"drain", "cordon", "taint"} & role.tools
    assert {"patch", "scale", "set_resources", "rollout_restart", "apply", "delete"} <= role.tools
    chosen = select(skills_for("dev_team"), "diagnose")
    assert chosen is not None and chosen.name == "diagnose-workload"
    assert {s.name for s in all_skills()} >= {"diagnose-workload"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("no front matter\n", "must start with", id="no-front-matter"),
        pytest.param("---\nname: x\n", "not closed", id="unclosed"),
        pytest.param("---\nname: other\ndescription: d\n---\nbody\n", "folder", id="wrong-name"),
        pytest.param(
            "---\nname: broken\ndescription: d\nmetadata: {agent: dev_team, intents: []}\n---\n# b",
            "'intents' must be a non-empty list",
            id="no-intents",
        ),
    ],
)
def test_a_malformed_skill_is_refused_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "broken" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(documents.DocumentError, match=says) as caught:
        parse_skill(path)
    assert str(path) in caught.value.message


def test_the_guard_refuses_every_model_but_the_scripted_one() -> None:
    with pytest.raises(ModelUnavailable, match="KUBECREW_MODEL_GUARD"):
        planner_from_env({"KUBECREW_MODEL": "openai:gpt-4.1", "KUBECREW_MODEL_GUARD": "1"})
    with pytest.raises(ModelUnavailable, match="scripted"):
        ModelPlanner(FakeListChatModel(responses=["hi"]))
    assert ModelPlanner(ScriptedChatModel()).name == "model:ScriptedChatModel"
    assert planner_from_env({}).name == "deterministic"


@pytest.mark.parametrize(
    "spec", ["gpt-4.1", "openai:", "no-such-provider:some-model"], ids=["bare", "empty", "unknown"]
)
def test_a_model_that_cannot_be_built_says_what_to_do(spec: str) -> None:
    with pytest.raises(ModelUnavailable, match="KUBECREW_MODEL") as caught:
        load_chat_model(spec, {})
    assert "provider:model" in caught.value.message


def test_a_missing_provider_package_names_the_install_for_this_checkout() -> None:
    # The google extra is not part of the dev install, so its package is missing here.
    with pytest.raises(ModelUnavailable) as caught:
        load_chat_model("google_genai:gemini-2.5-pro", {})
    message = caught.value.message
    assert "'google' extra" in message and ".venv/bin/pip install -e '.[google]'" in message
    assert "\n" not in message


def test_one_agent_can_have_a_model_of_its_own_and_status_says_what_is_missing() -> None:
    environ = {"KUBECREW_MODEL": "openai:gpt-4.1", "KUBECREW_MODEL_PLATFORM": "ollama:llama3.1"}
    assert model_spec("dev_team", environ) == "openai:gpt-4.1"
    assert model_spec("platform", environ) == "ollama:llama3.1"
    assert brain_of("dev_team", environ) == "model openai:gpt-4.1"  # the dev extra brings it
    assert brain_of("platform", environ).startswith("model ollama:llama3.1 (not installed: ")
    assert brain_of("cluster_operator", {}) == "deterministic"
