"""Server-side apply conflicts: a field another manager changed (by update, scale, a subresource
or its own apply) conflicts with the 409 Status Kubernetes sends, listed per manager; applying the
live value shares ownership, force takes the field, and objects without managedFields are owned
by "before-first-apply".
"""

from __future__ import annotations

import copy

import pytest

from sandbox.errors import Conflict
from sandbox.patches import record_update
from tests.sandbox.server_side_apply_objects import (
    DEPLOYMENT,
    T0,
    T2,
    T3,
    apply,
    containers_of,
    deployment,
    owners,
    scaled,
    update,
)


def test_apply_after_an_update_conflicts_on_the_changed_field() -> None:
    created = update(None, deployment(replicas=2), manager="kubectl-client-side-apply", now=T0)
    with pytest.raises(Conflict) as caught:
        apply(created, deployment(replicas=3))
    status = caught.value.status()
    assert status["code"] == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
                "field": ".spec.replicas",
            }
        ]
    }


def test_kubectl_scale_then_apply_conflicts_on_replicas() -> None:
    created = apply(None, deployment(replicas=2))
    after_scale = update(created, scaled(created, 5), manager="kubectl-scale")
    assert ".spec.replicas" in owners(after_scale)["kubectl-scale"]
    assert ".spec.replicas" not in owners(after_scale)["kubectl"]
    with pytest.raises(
        Conflict, match=r'conflict with "kubectl-scale" using apps/v1: \.spec\.replicas'
    ):
        apply(after_scale, deployment(replicas=2), now=T3)


def test_conflict_names_the_subresource_a_manager_wrote_through() -> None:
    created = apply(None, deployment(replicas=2))
    after_scale = record_update(
        created,
        scaled(created, 5),
        manager="kubectl",
        operation="Update",
        now=T2,
        schema=DEPLOYMENT,
        subresource="scale",
    )
    assert after_scale["metadata"]["managedFields"][1]["subresource"] == "scale"
    with pytest.raises(Conflict) as caught:
        apply(after_scale, deployment(replicas=2), now=T3)
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" '
        "using apps/v1: .spec.replicas"
    )


def test_applying_the_live_value_shares_ownership_without_conflict() -> None:
    created = update(None, deployment(replicas=2), manager="kubectl-create", now=T0)
    result = apply(created, deployment(replicas=2))
    assert ".spec.replicas" in owners(result)["kubectl"]
    assert ".spec.replicas" in owners(result)["kubectl-create"]


def test_force_takes_the_field_from_the_other_manager() -> None:
    created = update(None, deployment(replicas=2), manager="other", now=T0)
    result = apply(created, deployment(replicas=3), force=True)
    assert result["spec"]["replicas"] == 3
    assert ".spec.replicas" in owners(result)["kubectl"]
    assert ".spec.replicas" not in owners(result)["other"]


def test_conflict_with_an_applier_names_it_without_api_version() -> None:
    created = apply(None, deployment(replicas=2), manager="other")
    with pytest.raises(Conflict) as caught:
        apply(created, deployment(replicas=4), manager="mine")
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "other": .spec.replicas'
    )


def test_several_conflicts_are_listed_per_manager() -> None:
    created = apply(None, deployment(replicas=2, labels={"app": "web", "tier": "a"}))
    edited = scaled(created, 7)
    containers_of(edited)[0]["image"] = "nginx:9"
    edited = update(created, edited, manager="kubectl-edit")
    relabelled = copy.deepcopy(edited)
    relabelled["metadata"]["labels"]["tier"] = "b"
    relabelled = update(edited, relabelled, manager="kubectl-label", now=T3)
    config = deployment(
        replicas=3,
        labels={"app": "web", "tier": "c"},
        containers=[{"name": "web", "image": "nginx:2"}],
    )
    with pytest.raises(Conflict) as caught:
        apply(relabelled, config, manager="ci", now=T3)
    error = caught.value
    assert error.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "kubectl-edit" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="web"].image\n'
        'conflicts with "kubectl-label" using apps/v1:\n'
        "- .metadata.labels.tier"
    )
    assert [cause.field for cause in error.causes] == [
        ".spec.replicas",
        '.spec.template.spec.containers[name="web"].image',
        ".metadata.labels.tier",
    ]


def test_object_without_managed_fields_is_owned_by_before_first_apply() -> None:
    live = deployment(labels={"app": "web", "keep": "me"})
    result = apply(live, deployment())
    assert result["metadata"]["labels"] == {"app": "web", "keep": "me"}
    assert set(owners(result)) == {"kubectl", "before-first-apply"}
    with pytest.raises(Conflict, match=r'"before-first-apply" using apps/v1: \.spec\.replicas'):
        apply(live, deployment(replicas=9))
