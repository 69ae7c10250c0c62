"""What the person's words ask of drift: restore git (the default), adopt the live state (an
intentional edit), or only look; and how a drifted field is traced to the manager that wrote it
through managedFields."""

from __future__ import annotations

import pytest

from agents.dev_team.drift import Mode, mode_of, ownership


@pytest.mark.parametrize(
    ("question", "mode"),
    [
        pytest.param("has web drifted from git?", "reconcile", id="question"),
        pytest.param("reconcile web", "reconcile", id="reconcile"),
        pytest.param("why does web keep drifting from git?", "reconcile", id="keep-drifting"),
        pytest.param("someone edited web by hand; keep it", "adopt", id="keep-it"),
        pytest.param("web was hand-edited, it was a hotfix", "adopt", id="hotfix"),
        pytest.param("the edit of web was on purpose, adopt it", "adopt", id="on-purpose"),
        pytest.param("someone hotfixed web by hand, revert it", "reconcile", id="revert-wins"),
        pytest.param("has web drifted? just check", "report", id="just-check"),
        pytest.param("has web drifted? don\u2019t change anything", "report", id="dont-change"),
    ],
)
def test_the_words_choose_what_to_do(question: str, mode: Mode) -> None:
    assert mode_of(question) == mode


EDITED = {
    "manager": "kubectl-edit",
    "operation": "Update",
    "time": "2026-01-02T03:04:05Z",
    "fieldsV1": {
        "f:spec": {
            "f:replicas": {},
            "f:template": {
                "f:spec": {"f:containers": {'k:{"name":"web"}': {"f:image": {}}}},
            },
        },
        "f:metadata": {"f:labels": {"f:app.kubernetes.io/tier": {}}},
    },
}
SCALED = {"manager": "kubectl-scale", "subresource": "scale", "fieldsV1": {"f:spec": {}}}


@pytest.mark.parametrize(
    ("path", "manager"),
    [
        pytest.param("spec.template.spec.containers[name=web].image", "kubectl-edit", id="image"),
        pytest.param("spec.replicas", "kubectl-edit", id="replicas"),
        pytest.param('metadata.labels["app.kubernetes.io/tier"]', "kubectl-edit", id="label"),
        pytest.param("spec.template.spec.containers[name=api].image", None, id="other-container"),
        pytest.param("spec.template.spec.containers[0].image", None, id="positional"),
    ],
)
def test_a_drifted_field_is_traced_to_its_manager(path: str, manager: str | None) -> None:
    owner = ownership([SCALED, EDITED], path)
    assert (owner or {}).get("manager") == manager
