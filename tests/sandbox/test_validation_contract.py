"""What object validation promises as a whole: valid objects and variants of every built-in
kind pass, one Invalid lists every problem as a 422 Status, custom resources get metadata checks
only, reviews are not validated, inputs are never modified and malformed input never crashes it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.errors import Invalid
from sandbox.registry import BUILTINS, ResourceType
from sandbox.validation import problems, validate
from tests.sandbox.validation_objects import (
    CONTAINER,
    EXTERNAL,
    GOOD,
    TYPES,
    edit,
    params,
    reported,
)


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_valid_objects_of_every_kind_pass(kind: str) -> None:
    assert reported(kind, GOOD[kind]) == []
    validate(TYPES[kind], GOOD[kind])


_HEADLESS = {"spec.clusterIP": "None", "spec.clusterIPs": None, "spec.type": "ClusterIP"}

# fmt: off
GOOD_VARIANTS: list[tuple[Any, ...]] = [
    ("headless-service-without-ports", "Service", {**_HEADLESS, "spec.ports": None}),
    ("external-name-service", "Service",
     {**EXTERNAL, "spec.externalName": "db.example.com.", "spec.ports": None}),
    ("single-anonymous-port", "Service", {"spec.ports": [{"port": 80}]}),
    ("generate-name-only", "ConfigMap", {"metadata.name": None, "metadata.generateName": "cfg-"}),
    ("job-on-failure", "Job", {"spec.template.spec.restartPolicy": "OnFailure"}),
    ("cron-descriptor", "CronJob", {"spec.schedule": "@hourly"}),
    ("cron-every", "CronJob", {"spec.schedule": "@every 1h30m"}),
    ("cron-question-mark-and-step", "CronJob", {"spec.schedule": "0 0 ? * 0-6/2"}),
    ("cron-lists-and-names", "CronJob", {"spec.schedule": "0,30 9-17 1,15 jan-jun,DEC SUN"}),
    ("deployment-recreate", "Deployment", {"spec.strategy": {"type": "Recreate"}}),
    ("deployment-defaults-not-yet-applied", "Deployment", {"spec.strategy": None}),
    ("expression-selector", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
    ("basic-auth-string-data", "Secret",
     {"type": "kubernetes.io/basic-auth", "data": None, "stringData": {"username": "u"}}),
    ("opaque-empty-value", "Secret", {"type": None, "data": {"k": ""}}),
    ("pdb-max-unavailable", "PodDisruptionBudget",
     {"spec": {"maxUnavailable": 1}}),
    ("aggregated-clusterrole", "ClusterRole",
     {"rules": None, "aggregationRule": {"clusterRoleSelectors": [{}]}}),
    ("group-without-api-group", "RoleBinding", {"subjects": [{"kind": "Group", "name": "devs"}]}),
    ("quantities", "Pod",
     {"spec.containers": [{**CONTAINER, "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
                                               "requests": {"cpu": "1500m",
                                                            "memory": "1e3"}}}]}),
    ("numeric-storage", "PersistentVolumeClaim", {"spec.resources.requests.storage": 1073741824}),
    ("same-taint-key-other-effect", "Node",
     {"spec.taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]}),
    ("ipv6-cluster-ip", "Service", {"spec.clusterIP": "fd00::10", "spec.clusterIPs": None}),
    ("wrongly-typed-fields-are-left-to-schema-checks", "Deployment",
     {"spec.replicas": "3", "spec.strategy": "fast", "metadata.labels": ["a"]}),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes"), params(GOOD_VARIANTS))
def test_valid_variants_pass(kind: str, changes: dict[str, Any]) -> None:
    assert reported(kind, edit(GOOD[kind], changes)) == []


def test_validate_raises_one_invalid_listing_every_problem() -> None:
    obj = edit(GOOD["Deployment"], {"spec.replicas": -1, "spec.selector": None})
    with pytest.raises(Invalid) as caught:
        validate(TYPES["Deployment"], obj)
    status = caught.value.status()
    assert status["code"] == 422
    assert status["details"]["kind"] == "Deployment"
    assert status["details"]["group"] == "apps"
    assert status["details"]["name"] == "web"
    assert status["message"] == (
        'Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0, spec.selector: Required value]"
    )
    assert [c["reason"] for c in status["details"]["causes"]] == [
        "FieldValueInvalid",
        "FieldValueRequired",
    ]


def test_custom_resources_get_metadata_checks_only() -> None:
    widget = ResourceType("example.com", "v1", "widgets", "Widget", True, custom=True)
    assert problems(widget, {"metadata": {"name": "w", "namespace": "default"}, "spec": 1}) == []
    (cause,) = problems(widget, {"metadata": {"name": "W", "namespace": "default"}})
    assert cause.field == "metadata.name"


def test_reviews_are_not_validated() -> None:
    review = next(rt for rt in BUILTINS if rt.kind == "SelfSubjectAccessReview")
    validate(review, {"spec": {"resourceAttributes": {"verb": "get"}}})


def test_a_namespace_on_a_cluster_scoped_object_is_ignored() -> None:
    assert reported("Namespace", {"metadata": {"name": "shop", "namespace": "Bad_Ns"}}) == []


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_validation_never_mutates_its_inputs(kind: str) -> None:
    obj = edit(GOOD[kind], {"metadata.uid": "u1"})
    old = edit(obj, {"spec.replicas": 7, "spec.nodeName": "n", "immutable": True})
    before = copy.deepcopy((obj, old))
    problems(TYPES[kind], obj, old=old)
    assert (obj, old) == before


_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70000) | st.sampled_from(["", "x", "None", "1Gi"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["name", "image", "type", "app", "key", "x"]), inner)
    ),
    max_leaves=8,
)
_PLACES = [
    "spec", "metadata", "metadata.labels", "data", "type", "roleRef", "subjects", "rules",
    "spec.selector", "spec.template", "spec.template.spec", "spec.template.spec.containers",
    "spec.containers", "spec.ports", "spec.strategy", "spec.versions", "spec.names",
    "spec.jobTemplate", "spec.taints", "spec.resources", "spec.minAvailable", "spec.clusterIP",
]  # fmt: skip


@given(st.sampled_from(sorted(GOOD)), st.sampled_from(_PLACES), _junk)
def test_malformed_objects_never_crash_validation(kind: str, place: str, junk: Any) -> None:
    bad = edit(GOOD[kind], {place: junk})
    for obj, old in ((bad, None), (bad, GOOD[kind]), (GOOD[kind], bad)):
        assert isinstance(problems(TYPES[kind], obj, old=old), list)
