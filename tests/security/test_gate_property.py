"""The gate's verdict on a patch is the verdict on the object that patch leaves.

For generated patches of all four types (JSON, merge, strategic merge, server-side apply) on the
shop's web Deployment at its policy minimum (3 replicas), the kube gate's verdict must equal the
policies' verdict on what an independent server-side dry run (the official Python client, not
the gate's own code) says the object becomes: a replica count below 3 refused, one the blast
radius allows let through, anything else judged as the patch it is. Patches the server refuses
do not count among the 500 examples (the write would fail the same way); hypothesis's
statistics say how many there were.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from kubernetes.client.exceptions import ApiException

from core.connection import Clusters
from core.policy.actions import Action, EvaluationRequest, ReplicaChange, TargetRef
from core.policy.evaluation import evaluate
from core.policy.loading import load
from mcp_servers.kube.gate import Gate, judged
from mcp_servers.kube.resources import Catalog
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.writes import Writes
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.policies import POLICIES
from tests.support.shop import WEB

MINIMUM = 3
PATH = "/apis/apps/v1/namespaces/shop/deployments/web"
CONTENT = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
WEB_REF = TargetRef(kind="Deployment", name="web", namespace="shop")

counts = st.one_of(
    st.integers(0, 6),
    st.sampled_from([None, "1", "2", "4", 1.0, 2.0, 4.0, 2.5, -1, True, [3], {"n": 3}]),
)
labels = st.dictionaries(st.sampled_from(["tier", "team", "x"]), st.sampled_from(["a", "b"]))


def _spec(replicas: object, keep: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    }
    return spec | ({"replicas": replicas} if keep else {})


json_ops = st.one_of(
    st.builds(
        lambda op, v: {"op": op, "path": "/spec/replicas", "value": v},
        st.sampled_from(["add", "replace"]),
        counts,
    ),
    st.just({"op": "remove", "path": "/spec/replicas"}),
    st.builds(
        lambda source, op: {"op": op, "from": source, "path": "/spec/replicas"},
        st.sampled_from(
            ["/metadata/generation", "/spec/revisionHistoryLimit", "/spec/minReadySeconds"]
        ),
        st.sampled_from(["copy", "move"]),
    ),
    st.builds(lambda v: {"op": "test", "path": "/spec/replicas", "value": v}, counts),
    st.builds(
        lambda k: {"op": "add", "path": f"/metadata/labels/{k}", "value": "y"},
        st.sampled_from(["tier", "team"]),
    ),
    st.builds(
        lambda v, keep: {"op": "replace", "path": "/spec", "value": _spec(v, keep)},
        counts,
        st.booleans(),
    ),
)


def _merge(replicas: object, keep: bool, extra: dict[str, str], paused: bool | None) -> Any:
    spec: dict[str, Any] = {"replicas": replicas} if keep else {}
    if paused is not None:
        spec["paused"] = paused
    patch: dict[str, Any] = {"spec": spec} if spec else {}
    return patch | ({"metadata": {"labels": extra}} if extra else {})


def _apply(replicas: object, keep: bool) -> Any:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": _spec(replicas, keep),
    }


patches = st.one_of(
    st.tuples(st.just("json"), st.lists(json_ops, min_size=1, max_size=3)),
    st.tuples(
        st.sampled_from(["merge", "strategic"]),
        st.builds(_merge, counts, st.booleans(), labels, st.none() | st.booleans()),
    ),
    st.tuples(st.just("apply"), st.builds(_apply, counts, st.booleans())),
)


@pytest.fixture
def at_minimum(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Iterator[tuple[Gate, Any]]:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", f"--replicas={MINIMUM}")
    options = KubeSettings(
        kubeconfig=sandbox.kubeconfig,
        policies=(POLICIES,),
        policy_store=str(tmp_path / "store.sqlite"),
        agent="dev-team",
    )
    gate = Gate.open(options, Writes(Clusters(sandbox.kubeconfig, None), options, Catalog()))
    with kubernetes.config.new_client_from_config(str(sandbox.kubeconfig)) as client:
        yield gate, client


def dry_run(client: Any, patch_type: str, patch: Any) -> dict[str, Any] | None:
    """The object the patch would leave, by the official client's server-side dry run."""
    query = [("dryRun", "All"), ("fieldManager", "kubecrew")]
    if patch_type == "apply":
        query.append(("force", "true"))
    request = client.param_serialize(
        "PATCH", PATH, query_params=query, body=patch, auth_settings=["BearerToken"],
        header_params={"Content-Type": CONTENT[patch_type], "Accept": "application/json"},
    )  # fmt: skip
    try:
        answer = client.call_api(*request)
        answer.read()
        client.response_deserialize(answer, {"200": "object"})  # raises on an error status
    except ApiException:
        return None
    found: dict[str, Any] = json.loads(answer.data)
    return found


def expected(after: dict[str, Any], live_replicas: int, kind: str) -> bool:
    """Whether the policies allow what the dry run shows: the change, and its replica count."""
    now = datetime.now(UTC)
    actions = [Action(type="apply" if kind == "apply" else "patch", target=WEB_REF)]
    replicas = after["spec"]["replicas"]
    assert type(replicas) is int, f"the API server kept replicas {replicas!r} (not an int32)"
    if replicas != live_replicas:
        change = ReplicaChange(from_=live_replicas, to=replicas)
        actions.append(Action(type="scale", target=WEB_REF, replicas=change))
    policies = load([POLICIES])
    return all(
        judged(evaluate(policies, EvaluationRequest(action=a, target=after, now=now)), now)[0]
        == "allow"
        for a in actions
    )


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(patch=patches)
def test_the_gate_judges_the_object_a_patch_leaves(
    at_minimum: tuple[Gate, Any], patch: tuple[str, Any]
) -> None:
    gate, client = at_minimum
    patch_type, body = patch
    after = dry_run(client, patch_type, body)
    if after is None:
        event("refused by the API server")
    assume(after is not None)  # so 500 examples are 500 compared verdicts
    assert after is not None
    event(f"{patch_type}: replicas {after['spec']['replicas']}")
    if patch_type == "apply":
        arguments = {"manifest": yaml.safe_dump(body), "namespace": "shop", "force": True}
        admission = gate.admit("apply", arguments)
    else:
        arguments = {
            "kind": "deployment", "name": "web", "namespace": "shop",
            "patch": json.dumps(body), "patch_type": patch_type,
        }  # fmt: skip
        admission = gate.admit("patch", arguments)
    allowed = admission.verdict == "allow"
    assert allowed == expected(after, MINIMUM, patch_type), (admission, after["spec"])
