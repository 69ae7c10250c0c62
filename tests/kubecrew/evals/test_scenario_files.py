"""Every scenario in evals/scenarios validates, and a wrong file is refused with every problem
named precisely (`file: field.path: reason`), before any sandbox starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubecrew.evals.format import ScenarioInvalid, discover, load

CORPUS = Path(__file__).resolve().parents[3] / "evals" / "scenarios"
FILES = discover(CORPUS)

GOOD = """\
name: {name}
domain: no-op
description: a healthy web
world:
  namespaces: [shop]
trigger: {{ask: "is web ok"}}
objectives:
  - {{name: answered, answer_mentions: [web]}}
"""


def test_the_corpus_is_not_empty() -> None:
    assert len(FILES) >= 40, FILES


def test_the_corpus_spans_at_least_ten_domains() -> None:
    assert len({load(path).domain for path in FILES}) >= 10


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_scenario_file_validates(path: Path) -> None:
    scenario = load(path)
    assert scenario.name == path.stem


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    assert load(write(tmp_path, "ok", GOOD.format(name="ok"))).domain == "no-op"


BAD = [
    pytest.param(
        GOOD.format(name="x").replace("domain: no-op", "domain: astrology"),
        ["domain: Input should be 'workload-debugging'"],
        id="unknown-domain",
    ),
    pytest.param(
        GOOD.format(name="x").replace('{ask: "is web ok"}', "{ask: hi, heal: web}"),
        [
            "trigger: give exactly one of ask, heal, alert, schedule, chat, pr_comment "
            "(found: ask, heal)"
        ],
        id="two-triggers",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            '{ask: "is web ok"}', "{alert: {alerts: [{labels: {deployment: web}}]}}"
        ),
        ["trigger.alert.alerts[0]: labels need an alertname"],
        id="alert-without-alertname",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            '{ask: "is web ok"}', "{alert: {alerts: [{labels: {alertname: A}}], deliveries: 0}}"
        ),
        ["trigger.alert.deliveries: Input should be greater than or equal to 1"],
        id="alert-never-delivered",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            '{ask: "is web ok"}', "{schedule: {agent: platform, task: capacity}}"
        ),
        [
            "trigger.schedule: platform has no scheduled 'capacity'; it runs: propagate, audit, "
            "blueprints"
        ],
        id="schedule-unknown-task",
    ),
    pytest.param(
        GOOD.format(name="x") + "then: [{schedule: {agent: platform, task: capacity}}]\n",
        ["then[0].schedule: platform has no scheduled 'capacity'"],
        id="then-unknown-task",
    ),
    pytest.param(
        GOOD.format(name="x").replace('{ask: "is web ok"}', "{chat: {text: approve, via: pager}}"),
        ["trigger.chat.as: Field required", "trigger.chat.via: Input should be 'slack' or 'cli'"],
        id="chat-without-a-person-on-an-unknown-channel",
    ),
    pytest.param(
        GOOD.format(name="x").replace('{ask: "is web ok"}', "{pr_comment: {comments: []}}"),
        ["trigger.pr_comment.comments: List should have at least 1 item"],
        id="pr-comment-saying-nothing",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "namespaces: [shop]",
            "people: [{name: a, github: gh}, {name: b, github: gh}]",
        ),
        ["world.people: github 'gh' is given to two people"],
        id="people-sharing-a-login",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "answer_mentions: [web]", "approvals: {count: -1, state: refused}"
        ),
        [
            "objectives[0].approvals.count: Input should be greater than or equal to 0",
            "objectives[0].approvals.state: Input should be 'pending', 'granted'",
        ],
        id="approval-count-negative-in-an-unknown-state",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "answer_mentions: [web]", "approval_answered: {state: refused}"
        ),
        ["objectives[0].approval_answered.state: Input should be 'granted', 'denied' or"],
        id="answer-state-unknown",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "namespaces: [shop]",
            "gitops: {commits: [{message: m, files: {}, "
            "edits: [{kind: Secret, name: s, namespace: shop, set: {}}]}]}",
        ),
        [
            "world.gitops.commits[0].edits[0].kind: Input should be 'Deployment'",
            "world.gitops.commits[0].edits[0].set: Dictionary should have at least 1 item",
        ],
        id="hand-edit-of-a-secret-setting-nothing",
    ),
    pytest.param(
        GOOD.format(name="x").replace("answer_mentions: [web]", "answer_mention: [web]"),
        ["objectives[0].answer_mention: Extra inputs are not permitted"],
        id="misspelt-check",
    ),
    pytest.param(
        GOOD.format(name="x") + "budget: {tool_calls: -1}\n",
        ["budget.tool_calls: Input should be greater than or equal to 0"],
        id="negative-budget",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "namespaces: [shop]", "namespaces: [shop]\n  faults: [{kind: quake}]"
        ),
        ["world.faults[0]: fault: field 'kind': 'quake' is not one of"],
        id="unknown-fault",
    ),
    pytest.param(
        GOOD.format(name="x").replace("namespaces: [shop]", "nodes: [{name: n1, cpu: lots}]"),
        ["world.nodes[0]"],
        id="sandbox-refuses-node",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "answer_mentions: [web]",
            "field: {kind: Node, name: node-1, path: spec.taints, equals: [], excludes: []}",
        ),
        ["objectives[0].field: give exactly one of equals, includes, excludes"],
        id="field-with-two-tests",
    ),
    pytest.param(
        GOOD.format(name="x").replace(
            "answer_mentions: [web]", "object: {kind: Gateway, count: 0}"
        ),
        ["objectives[0].object.kind: 'Gateway' is not a kind the evals read"],
        id="object-of-an-unread-kind",
    ),
    pytest.param(
        GOOD.format(name="x").replace("answer_mentions: [web]", "access: {user: carol, verb: get}"),
        ["objectives[0].access.resource: Field required"],
        id="access-to-nothing",
    ),
    pytest.param(
        GOOD.format(name="x").replace("domain: no-op", "domain: no-op\nintent: Expose It"),
        ["intent: String should match pattern"],
        id="intent-not-a-kind-name",
    ),
    pytest.param(GOOD.format(name="y"), ["name: 'y' must be the file's stem 'x'"], id="name"),
    pytest.param("name: [unclosed", ["not valid YAML"], id="yaml"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_a_wrong_file_names_each_problem(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = write(tmp_path, "x", text)
    with pytest.raises(ScenarioInvalid) as refused:
        load(path)
    for line in expected:
        assert any(p.startswith(f"{path}: ") and line in p for p in refused.value.problems), (
            line,
            refused.value.problems,
        )


@pytest.mark.parametrize(
    ("name", "intent", "problem"),
    [
        pytest.param("change-expose-terse", None, "names its kind of request", id="none"),
        pytest.param("change-expose-terse", "ingress", "want the word(s) after 'change-'",
                     id="other-kind"),
        pytest.param("change-none-vague", "expose", "want 'no-change'", id="none-is-no-change"),
        pytest.param("question-inventory-typo", "inventory", "want 'question-'",
                     id="question-unprefixed"),
        pytest.param("change-expose-nodeport-typo", "expose-nodeport", None, id="good-change"),
        pytest.param("question-inventory-typo", "question-inventory", None, id="good-question"),
        pytest.param("change-none-vague", "no-change", None, id="good-none"),
        pytest.param("service-selector-nothing", None, None, id="other-scenarios-need-none"),
    ],
)  # fmt: skip
def test_a_change_or_question_is_named_for_its_intent(
    tmp_path: Path, name: str, intent: str | None, problem: str | None
) -> None:
    text = GOOD.format(name=name)
    if intent is not None:
        text = text.replace("domain: no-op", f"domain: no-op\nintent: {intent}")
    path = write(tmp_path, name, text)
    if problem is None:
        assert load(path).intent == intent
        return
    with pytest.raises(ScenarioInvalid) as refused:
        load(path)
    [line] = refused.value.problems
    assert line.startswith(f"{path}: intent: ") and problem in line, line
