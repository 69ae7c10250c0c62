"""NamespaceBlueprint and ImagePolicy: the Platform agent's documents load strictly, refuse what
the API server or a container runtime would read differently, and mean what they say."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from core.policy.documents.blueprint import NamespaceBlueprint, quantity
from core.policy.documents.images import ImagePolicy, pinned, repository
from core.policy.loading import load_report
from tests.support.policies import POLICIES

HEAD = "apiVersion: kubecrew.io/v1alpha1\nkind: {kind}\nmetadata:\n  name: p\n"
DIGEST = "@sha256:" + "a" * 64


def problems(tmp_path: Path, kind: str, body: str) -> list[str]:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD.format(kind=kind) + body)
    return [str(p).removeprefix(f"{path}:") for p in load_report([path]).problems]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            "spec:\n  requiredLabels: [team]\n",
            "5: document 1 (NamespaceBlueprint p): spec: select namespaces: give namespaces, "
            "namespaceSelector or both",
            id="selects-nothing",
        ),
        pytest.param(
            "spec:\n  namespaces: [shop]\n",
            "5: document 1 (NamespaceBlueprint p): spec: a blueprint sets something: "
            "requiredLabels, resourceQuota, limitRange, networkPolicy or teamAccess",
            id="sets-nothing",
        ),
        pytest.param(
            "spec:\n  namespaces: [shop]\n  resourceQuota: {hard: {requests.cpu: 2 cores}}\n",
            "7: document 1 (NamespaceBlueprint p): spec.resourceQuota.hard['requests.cpu']: "
            "'2 cores' is not a Kubernetes quantity (like 500m, 2, 512Mi or 2Gi)",
            id="bad-quantity",
        ),
        pytest.param(
            "spec:\n  namespaces: [shop]\n  limitRange: {default: {cpu: '2'}, max: {cpu: 1}}\n",
            "7: document 1 (NamespaceBlueprint p): spec.limitRange: default.cpu 2 is above "
            "max.cpu 1",
            id="default-above-max",
        ),
        pytest.param(
            "spec:\n  namespaces: [shop]\n  networkPolicy: {ingress: everyone}\n",
            "7: document 1 (NamespaceBlueprint p): spec.networkPolicy.ingress: input should be "
            "'same-namespace' or 'deny-all' (got 'everyone')",
            id="unknown-ingress",
        ),
    ],
)
def test_a_bad_blueprint_gets_one_precise_problem(tmp_path: Path, body: str, expected: str) -> None:
    assert problems(tmp_path, "NamespaceBlueprint", body) == [expected]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            "spec:\n  allowedRegistries: []\n",
            "6: document 1 (ImagePolicy p): spec.allowedRegistries: list should have at least 1 "
            "item after validation, not 0 (got [])",
            id="empty",
        ),
        pytest.param(
            "spec:\n  allowedRegistries: [https://ghcr.io]\n",
            "6: document 1 (ImagePolicy p): spec.allowedRegistries[0]: 'https://ghcr.io' is not "
            "a registry (a lower-case host such as registry.example.com, optionally with :port "
            "and a /path prefix such as ghcr.io/acme)",
            id="a-url",
        ),
    ],
)
def test_a_bad_image_policy_gets_one_precise_problem(
    tmp_path: Path, body: str, expected: str
) -> None:
    found = problems(tmp_path, "ImagePolicy", body)
    assert len(found) == 1 and found[0].lower() == expected.lower(), found


@pytest.mark.parametrize(
    ("text", "value"),
    [("500m", Decimal("0.5")), ("2", Decimal(2)), ("2Gi", Decimal(2**31)), ("1e3", Decimal(1000)),
     ("128Mi", Decimal(128 * 2**20)), ("0.5", Decimal("0.5")), ("1k", Decimal(1000))],
)  # fmt: skip
def test_quantities_have_the_value_kubernetes_gives_them(text: str, value: Decimal) -> None:
    assert quantity(text) == value


def test_a_number_in_yaml_is_a_quantity_too() -> None:
    blueprint = NamespaceBlueprint.model_validate(
        yaml.safe_load(
            HEAD.format(kind="NamespaceBlueprint") + "spec:\n  namespaces: [a]\n"
            "  resourceQuota: {hard: {pods: 50}}\n"
        )
    )
    assert blueprint.spec.resourceQuota is not None
    assert blueprint.spec.resourceQuota.hard == {"pods": "50"}


@pytest.mark.parametrize(
    ("image", "repo"),
    [
        ("nginx", "docker.io/library/nginx"),
        ("nginx:1.27", "docker.io/library/nginx"),
        ("bitnami/redis:7", "docker.io/bitnami/redis"),
        ("ghcr.io/acme/api:v2" + DIGEST, "ghcr.io/acme/api"),
        ("localhost:5000/app:1", "localhost:5000/app"),
        ("registry.example.com:5000/team/app", "registry.example.com:5000/team/app"),
    ],
)
def test_image_references_are_read_as_a_runtime_pulls_them(image: str, repo: str) -> None:
    assert repository(image) == repo


def test_the_default_image_policy_allows_its_registries_and_no_lookalikes() -> None:
    [policy] = [
        ImagePolicy.model_validate(d)
        for d in yaml.safe_load_all((POLICIES / "images.yaml").read_text())
    ]
    spec = policy.spec
    assert spec.selects("anything", {}) and spec.requireDigest
    assert spec.allows("nginx:1.27") and spec.allows("ghcr.io/kubecrew/shop" + DIGEST)
    assert not spec.allows("ghcr.io/kubecrew-evil/shop") and not spec.allows("evil.io/nginx")
    assert not spec.allows("bitnami/redis")  # docker.io, but not an official image
    assert pinned("nginx" + DIGEST) and not pinned("nginx:1.27")


def test_the_default_blueprint_selects_the_shop_and_the_team_class() -> None:
    [blueprint] = [
        NamespaceBlueprint.model_validate(d)
        for d in yaml.safe_load_all((POLICIES / "blueprint.yaml").read_text())
    ]
    spec = blueprint.spec
    assert spec.selects("shop", {}) and spec.selects("x", {"kubecrew.io/class": "team"})
    assert not spec.selects("scratch", {})
    assert spec.teamAccess is not None and spec.teamAccess.clusterRole == "edit"
