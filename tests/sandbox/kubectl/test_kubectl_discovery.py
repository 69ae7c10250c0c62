"""kubectl discovering the sandbox: `kubectl version` reports a v1.37 server, and
`api-resources` and `api-versions` list every served group, version and kind with the short
names and scope a real cluster shows.
"""

from __future__ import annotations

import json

import pytest

from sandbox.deprecations import DEPRECATED
from sandbox.registry import BUILTINS
from sandbox.server import Sandbox
from tests.sandbox.kubectl.read_objects import names
from tests.sandbox.kubectl.suite import header, rows
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

GROUPS = sorted({rt.group for rt in BUILTINS})


@pytest.fixture(scope="module")
def api_resources(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> str:
    cache = tmp_path_factory.mktemp("api-resources") / "cache"
    return Kubectl(shared_sandbox.kubeconfig, cache)("api-resources")


def test_version_reports_a_v1_37_server(shared_kubectl: Kubectl) -> None:
    version = json.loads(shared_kubectl("version", "-o", "json"))["serverVersion"]
    assert (version["major"], version["minor"]) == ("1", "37")
    assert "Server Version: v1.37.0" in shared_kubectl("version")


@pytest.mark.parametrize(
    ("name", "short", "api_version", "namespaced", "kind"),
    [
        pytest.param("pods", "po", "v1", "true", "Pod", id="pods"),
        pytest.param("namespaces", "ns", "v1", "false", "Namespace", id="namespaces"),
        pytest.param("nodes", "no", "v1", "false", "Node", id="nodes"),
        pytest.param("deployments", "deploy", "apps/v1", "true", "Deployment", id="deployments"),
        pytest.param("cronjobs", "cj", "batch/v1", "true", "CronJob", id="cronjobs"),
        pytest.param(
            "horizontalpodautoscalers",
            "hpa",
            "autoscaling/v2",
            "true",
            "HorizontalPodAutoscaler",
            id="hpa",
        ),
        pytest.param(
            "customresourcedefinitions",
            "crd,crds",
            "apiextensions.k8s.io/v1",
            "false",
            "CustomResourceDefinition",
            id="crds",
        ),
        pytest.param(
            "clusterroles",
            "",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRole",
            id="clusterroles",
        ),
        pytest.param("pods", "", "metrics.k8s.io/v1beta1", "true", "PodMetrics", id="pod-metrics"),
        pytest.param(
            "nodes", "", "metrics.k8s.io/v1beta1", "false", "NodeMetrics", id="node-metrics"
        ),
    ],
)
def test_api_resources_shows_short_names_scope_and_kind(
    api_resources: str, name: str, short: str, api_version: str, namespaced: str, kind: str
) -> None:
    assert header(api_resources) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    expected = {
        "NAME": name,
        "SHORTNAMES": short,
        "APIVERSION": api_version,
        "NAMESPACED": namespaced,
        "KIND": kind,
    }
    assert expected in rows(api_resources)


@pytest.mark.parametrize("group", GROUPS, ids=[g or "core" for g in GROUPS])
def test_api_resources_lists_every_kind_of_each_served_group(
    shared_kubectl: Kubectl, group: str
) -> None:
    listed = shared_kubectl("api-resources", f"--api-group={group}", "-o", "wide")
    kinds = {row["KIND"] for row in rows(listed)}
    assert kinds == {rt.kind for rt in BUILTINS if rt.group == group}


def test_api_versions_lists_every_served_group_version(shared_kubectl: Kubectl) -> None:
    served = {rt.api_version for rt in BUILTINS} | {d.api_version for d in DEPRECATED}
    assert names(shared_kubectl("api-versions")) == served  # deprecated ones at v1.37 too
