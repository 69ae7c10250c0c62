"""Bad policy documents are refused with the file, line, document, field path and reason.

Each case is a small file; the expected text is the whole problem line a person would read, so
a vaguer message (a lost field path, a wrong line, a traceback-ish reason) fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InvalidArgument
from core.policy.catalog import LoadedPolicy, PolicySet
from core.policy.documents import Ownership, PriorityPolicy
from core.policy.loading import PolicyLoadError, load, load_report

HEAD = "apiVersion: kubecrew.io/v1alpha1\nkind: {kind}\nmetadata:\n  name: {name}\n"


def doc(kind: str, body: str, name: str = "p") -> str:
    return HEAD.format(kind=kind, name=name) + body


CAPACITY = "spec:\n  selector:\n    namespaces: [shop]\n"
WINDOW = (
    "spec:\n  maintenance:\n    actions: [drain]\n    windows:\n"
    "      - name: nights\n        days: [Mon]\n        start: {start}\n        end: {end}\n"
    "        timezone: {zone}\n"
)

CASES = [
    (
        "wrong-kind",
        doc("CapcityPolicy", "spec: {}\n"),
        "F:2: document 1 (CapcityPolicy p): kind: unknown kind 'CapcityPolicy'; "
        "did you mean CapacityPolicy?",
    ),
    (
        "wrong-api-version",
        doc("Ownership", "spec: {team: t, owns: [{}]}\n").replace("v1alpha1", "v1"),
        "F:1: document 1 (Ownership p): apiVersion: 'kubecrew.io/v1' is not kubecrew.io/v1alpha1",
    ),
    (
        "unknown-field",
        doc("CapacityPolicy", CAPACITY + "  minReplica: 3\n"),
        "F:8: document 1 (CapacityPolicy p): spec.minReplica: unknown field 'minReplica'; "
        "did you mean 'minReplicas'?",
    ),
    (
        "string-for-a-number",
        doc("CapacityPolicy", CAPACITY + '  minReplicas: "3"\n'),
        "F:8: document 1 (CapacityPolicy p): spec.minReplicas: input should be a valid integer "
        "(got '3')",
    ),
    (
        "cel-syntax",
        doc(
            "CapacityPolicy",
            CAPACITY + "  rules:\n    - name: r\n      when: 'action.replicas.to <'\n",
        ),
        "F:10: document 1 (CapacityPolicy p): spec.rules[0].when: CEL syntax error at column 21: "
        "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
        "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
    ),
    (
        "cel-unknown-variable",
        doc(
            "CapacityPolicy",
            CAPACITY
            + "  rules:\n    - {name: a, when: 'true'}\n    - {name: b, when: 'acton.pods > 1'}\n",
        ),
        "F:10: document 1 (CapacityPolicy p): spec.rules[1].when: unknown variable 'acton'; "
        "the input has action, target, metrics and now",
    ),
    (
        "cel-unknown-function",
        doc(
            "CapacityPolicy",
            CAPACITY + "  rules:\n    - {name: a, when: 'action.type.lower() == \"x\"'}\n",
        ),
        "F:9: document 1 (CapacityPolicy p): spec.rules[0].when: unknown CEL function 'lower'",
    ),
    (
        "duplicate-rule-name",
        doc(
            "CapacityPolicy",
            CAPACITY + "  rules:\n    - {name: a, when: 'true'}\n    - {name: a, when: 'false'}\n",
        ),
        "F:10: document 1 (CapacityPolicy p): spec.rules[1].name: the name 'a' is used twice in "
        "rules",
    ),
    (
        "built-in-rule-name",
        doc(
            "CapacityPolicy",
            CAPACITY + "  minReplicas: 2\n  rules:\n    - {name: min-replicas, when: 'true'}\n",
        ),
        "F:10: document 1 (CapacityPolicy p): spec.rules[0].name: 'min-replicas' is the name of a "
        "built-in rule of this kind (min-replicas, min-available, max-unavailable); choose another",
    ),
    (
        "window-unquoted-time",
        doc("ChangePolicy", WINDOW.format(start="22:00", end='"06:00"', zone="UTC")),
        "F:11: document 1 (ChangePolicy p): spec.maintenance.windows[0].start: YAML read this "
        'time as the number 1320; quote it: "22:00"',
    ),
    (
        "window-empty",
        doc("ChangePolicy", WINDOW.format(start='"22:00"', end='"22:00"', zone="UTC")),
        "F:9: document 1 (ChangePolicy p): spec.maintenance.windows[0]: start and end are both "
        '22:00: an empty window (for a whole day write start "00:00", end "24:00")',
    ),
    (
        "window-unknown-zone",
        doc("ChangePolicy", WINDOW.format(start='"22:00"', end='"06:00"', zone="Europe/Pariss")),
        "F:13: document 1 (ChangePolicy p): spec.maintenance.windows[0].timezone: unknown time "
        "zone 'Europe/Pariss'; use an IANA name such as Europe/Paris or UTC",
    ),
    (
        "window-bad-day",
        doc("ChangePolicy", WINDOW.format(start='"22:00"', end='"06:00"', zone="UTC")).replace(
            "[Mon]", "[Monday]"
        ),
        "F:10: document 1 (ChangePolicy p): spec.maintenance.windows[0].days[0]: input should be "
        "'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat' or 'Sun' (got 'Monday')",
    ),
    (
        "host-bits-in-cidr",
        doc(
            "EgressPolicy",
            "spec:\n  namespaces: [shop]\n  destinations:\n    - name: api\n"
            "      cidrs: [203.0.113.7/24]\n      ports: [{port: 443}]\n",
        ),
        "F:9: document 1 (EgressPolicy p): spec.destinations[0].cidrs[0]: '203.0.113.7/24' is "
        "not a CIDR network (203.0.113.7/24 has host bits set)",
    ),
    (
        "both-disruption-limits",
        doc("CapacityPolicy", CAPACITY + "  minAvailable: 1\n  maxUnavailable: 50%\n"),
        "F:9: document 1 (CapacityPolicy p): spec.maxUnavailable: give minAvailable or "
        "maxUnavailable, not both (as in a PodDisruptionBudget)",
    ),
    (
        "missing-spec",
        doc("PriorityPolicy", ""),
        "F:1: document 1 (PriorityPolicy p): spec: required field is missing",
    ),
    (
        "key-written-twice",
        doc("CapacityPolicy", CAPACITY + "  minReplicas: 2\n  minReplicas: 3\n"),
        "F:9: document 1 (CapacityPolicy p): spec: the key 'minReplicas' is written twice here",
    ),
    (
        "not-a-mapping",
        "- just\n- a list\n",
        "F:1: document 1: a policy document is a mapping, not a list",
    ),
    (
        "yaml-syntax",
        doc("CapacityPolicy", "spec: {minReplicas: 3\n"),
        "F:6: document 1: not valid YAML: while parsing a flow mapping expected ',' or '}', "
        "but got '<stream end>'",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_document_gets_one_precise_problem(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    problems = [str(problem) for problem in load_report([path]).problems]
    assert problems == [expected.replace("F:", f"{path}:", 1)]


def test_every_problem_of_a_file_is_reported_in_line_order(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        doc(
            "CapacityPolicy",
            CAPACITY + "  minAvailable: 2x\n  rules:\n"
            "    - {name: a, when: 'acton.x', effect: rejct}\n",
        )
        + "---\n"
        + doc("Ownership", "spec: {team: Shop, owns: [{}]}\n")
    )
    problems = [str(p).removeprefix(f"{path}:") for p in load_report([path]).problems]
    assert problems == [
        "8: document 1 (CapacityPolicy p): spec.minAvailable: '2x' is neither a count (0 or more) "
        "nor a percentage like '50%'",
        "10: document 1 (CapacityPolicy p): spec.rules[0].when: unknown variable 'acton'; the "
        "input has action, target, metrics and now",
        "10: document 1 (CapacityPolicy p): spec.rules[0].effect: input should be 'reject' or "
        "'warn' (got 'rejct')",
        "16: document 2 (Ownership p): spec.team: 'Shop' is not a DNS label (lower-case letters, "
        "digits and '-')",
    ]


def test_names_are_unique_per_kind_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(doc("CapacityPolicy", CAPACITY + "  minReplicas: 2\n", "shop"))
    (tmp_path / "b.yaml").write_text(
        doc("CostPolicy", "spec:\n  underused: {below: 0.2, window: 1h}\n", "shop")
        + "---\n"
        + doc("CapacityPolicy", CAPACITY + "  minReplicas: 3\n", "shop")
    )
    with pytest.raises(PolicyLoadError) as raised:
        load([tmp_path])
    assert [str(p) for p in raised.value.problems] == [
        f"{tmp_path / 'b.yaml'}:8: document 2 (CapacityPolicy shop): metadata.name: another "
        f"CapacityPolicy shop is in {tmp_path / 'a.yaml'}:1"
    ]


def test_a_set_holds_one_priority_policy(tmp_path: Path) -> None:
    body = "spec:\n  order: [security, reliability, cost]\n"
    (tmp_path / "p.yaml").write_text(
        doc("PriorityPolicy", body, "org") + "---\n" + doc("PriorityPolicy", body, "team")
    )
    problems = [str(p) for p in load_report([tmp_path]).problems]
    assert problems == [
        f"{tmp_path / 'p.yaml'}:8: document 2 (PriorityPolicy team): metadata.name: one "
        f"PriorityPolicy at most; org is in {tmp_path / 'p.yaml'}:1"
    ]


def test_missing_paths_and_empty_directories_are_problems(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    problems = [str(p) for p in load_report([tmp_path / "nope", tmp_path / "empty"]).problems]
    assert problems == [
        f"{tmp_path / 'nope'}: no such file or directory",
        f"{tmp_path / 'empty'}: holds no policy file (.yaml or .yml)",
    ]


def test_a_set_built_in_code_refuses_what_the_loader_refuses() -> None:
    def ownership(name: str) -> LoadedPolicy:
        spec = {"team": "t", "owns": [{}]}
        return LoadedPolicy(Ownership.model_validate({"metadata": {"name": name}, "spec": spec}))

    def priority(name: str) -> LoadedPolicy:
        spec = {"order": ["cost"]}
        return LoadedPolicy(
            PriorityPolicy.model_validate({"metadata": {"name": name}, "spec": spec})
        )

    with pytest.raises(InvalidArgument, match="two policies are named Ownership x"):
        PolicySet([ownership("x"), ownership("x")])
    with pytest.raises(InvalidArgument, match="at most one PriorityPolicy"):
        PolicySet([priority("a"), priority("b")])
    assert len(PolicySet([ownership("x"), ownership("y"), priority("a")])) == 3


def test_empty_documents_are_skipped_and_a_later_yaml_error_names_its_document(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "---\n---\n" + doc("Ownership", "spec: {team: t, owns: [{}]}\n") + "---\nkind: [a\n"
    )
    report = load_report([path])
    assert [(p.source.document, p.source.line) for p in report.files[0].policies if p.source] == [
        (2, 3)
    ]
    assert [str(p) for p in report.problems] == [
        f"{path}:10: document 3: not valid YAML: while parsing a flow sequence expected ',' or "
        "']', but got '<stream end>'"
    ]
