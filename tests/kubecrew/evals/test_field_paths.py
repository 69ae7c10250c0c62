"""The dotted paths objectives and hand edits name fields by: list indexes as numbers, and a
key that itself holds a dot (a quota's `requests.cpu`) written with `\\.`."""

from __future__ import annotations

from typing import Any

import pytest

from kubecrew.evals.observe import field_at, set_at

QUOTA: dict[str, Any] = {
    "spec": {"hard": {"requests.cpu": "4", "pods": "50"}},
    "containers": [{"name": "web", "image": "nginx:1.27"}],
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(r"spec.hard.requests\.cpu", "4", id="dot-inside-a-key"),
        pytest.param("spec.hard.requests.cpu", None, id="unescaped-dot-is-a-level"),
        pytest.param("containers.0.image", "nginx:1.27", id="list-index"),
        pytest.param("containers.3.image", None, id="index-past-the-end"),
    ],
)
def test_a_path_reads_the_field_it_names(path: str, value: Any) -> None:
    assert field_at(QUOTA, path) == value


def test_a_hand_edit_sets_the_field_it_names_and_nothing_else() -> None:
    edited: dict[str, Any] = {"spec": {"hard": {"requests.cpu": "4"}, "replicas": 1}}
    set_at(edited, r"spec.hard.requests\.cpu", "64")
    set_at(edited, "spec.template.spec.paused", True)  # maps made on the way
    assert edited == {
        "spec": {
            "hard": {"requests.cpu": "64"},
            "replicas": 1,
            "template": {"spec": {"paused": True}},
        }
    }
