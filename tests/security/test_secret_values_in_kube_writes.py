"""A Secret's values stay hidden when a write moves them or the cluster refuses it.

Reproductions from an attacker's review: a JSON patch that copies or moves `/data/password` into
the Secret's own metadata returned the value in the dry run's diff; `test`, `move` and copies the
cluster refuses quoted it in the error text (the API server's, or the YAML parser's as we passed
it on); a Secret manifest the cluster refuses did the same through `apply`. Every call here is a
dry run: nothing changes, yet each answer (result or error) once held the value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import InvalidArgument
from mcp_servers.common.secret_values import watching
from mcp_servers.common.watched import WatchedClusters
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools, identity_kubeconfig
from tests.support.kubectl import Kubectl
from tests.support.secret_forms import canary, leaks

VALUE = canary()
COPIED = "/metadata/annotations/copied"

PATCHES: dict[str, list[dict[str, Any]]] = {
    "copy into an annotation": [{"op": "copy", "from": "/data/password", "path": COPIED}],
    "move into an annotation": [{"op": "move", "from": "/data/password", "path": COPIED}],
    "copy over the whole annotations": [
        {"op": "copy", "from": "/data/password", "path": "/metadata/annotations"}
    ],
    "test of the value": [{"op": "test", "path": "/data/password", "value": "a guess"}],
    "test of all data": [{"op": "test", "path": "/data", "value": {}}],
    "move onto the name": [{"op": "move", "from": "/data/password", "path": "/metadata/name"}],
    "copy onto the immutable type": [{"op": "copy", "from": "/data/password", "path": "/type"}],
    "copy onto generateName": [
        {"op": "copy", "from": "/data/password", "path": "/metadata/generateName"}
    ],
}


@pytest.fixture(scope="module")
def kube(shared_sandbox: Sandbox) -> KubeTools:
    return KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig))


@pytest.fixture
def secret(shared_kubectl: Kubectl, namespace: str) -> str:
    shared_kubectl(
        "create", "secret", "generic", "db", "-n", namespace, f"--from-literal=password={VALUE}"
    )
    shared_kubectl("annotate", "secret", "db", "-n", namespace, "note=checked")
    return namespace


@pytest.mark.parametrize("operations", PATCHES.values(), ids=PATCHES.keys())
def test_a_json_patch_moving_a_secret_value_never_shows_it(
    kube: KubeTools, secret: str, operations: list[dict[str, Any]]
) -> None:
    for patch in (operations, json.dumps(operations)):
        answer = kube.call(
            "patch", kind="secret", name="db", namespace=secret, patch=patch,
            patch_type="json", dry_run=True,
        )  # fmt: skip
        assert leaks(answer.everything, VALUE) == [], answer.everything


def test_a_dry_run_copy_still_says_what_it_would_change(kube: KubeTools, secret: str) -> None:
    copy = PATCHES["copy into an annotation"]
    changes = kube.ok(
        "patch", kind="secret", name="db", namespace=secret, patch=copy, patch_type="json",
        dry_run=True,
    )["changes"]  # fmt: skip
    assert [c["path"] for c in changes] == ["metadata.annotations.copied"]
    assert changes[0]["old"] is None and "redacted" in changes[0]["new"]


def manifest(**metadata: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db2", **metadata},
            "stringData": {"password": VALUE},
        }
    )


MANIFESTS = {
    # The YAML parser quotes the lines around where it stopped.
    "broken YAML": (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db2}\n"
        f'stringData:\n  password: "{VALUE}\n'
    ),
    "broken YAML, value first": f'stringData: {{password: "{VALUE}"}}\napiVersion: v1\n  kind: [\n',
    # The API server quotes an invalid value (the password, pasted into the wrong field).
    "value in a label": manifest(labels={"copy": VALUE}),
    "value as an annotation key": manifest(annotations={VALUE: "x"}),
    "value as generateName": manifest(generateName=VALUE),
}


@pytest.mark.parametrize("text", MANIFESTS.values(), ids=MANIFESTS.keys())
def test_applying_a_refused_secret_manifest_never_shows_its_values(
    kube: KubeTools, secret: str, text: str
) -> None:
    answer = kube.call("apply", manifest=text, namespace=secret, dry_run=True)
    assert answer.error, answer.data
    assert leaks(answer.everything, VALUE) == [], answer.text


def test_applying_a_secret_manifest_shows_which_keys_change(kube: KubeTools, secret: str) -> None:
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db", "annotations": {"mirror": VALUE}},
            "stringData": {"password": VALUE + "-rotated"},
        }
    )
    answer = kube.call("apply", manifest=text, namespace=secret, dry_run=True)
    assert not answer.error, answer.text
    assert leaks(answer.everything, VALUE) == [], answer.text
    paths = [c["path"] for c in answer.data["objects"][0]["changes"]]
    assert "data.password" in paths, paths


GUESS = [{"op": "test", "path": "/data/password", "value": "a guess"}]


def test_a_refused_write_to_a_secret_the_identity_cannot_read_withholds_the_message(
    shared_kubectl: Kubectl, shared_sandbox: Sandbox, secret: str, tmp_path: Path
) -> None:
    """An identity that may patch a Secret but not read it: the API server's refusal quotes
    the live value, which the server cannot know to scrub, so the message is withheld."""
    path = f"/api/v1/namespaces/{secret}/secrets/db"
    for args in (
        ("serviceaccount", "patcher"),
        ("role", "patcher", "--verb=patch", "--resource=secrets"),
        ("rolebinding", "patcher", "--role=patcher", f"--serviceaccount={secret}:patcher"),
    ):
        shared_kubectl("create", *args, "-n", secret)
    token = shared_kubectl("create", "token", "patcher", "-n", secret).strip()
    patcher = identity_kubeconfig(shared_sandbox.kubeconfig, token, tmp_path / "patcher")
    request = {
        "body": GUESS, "content_type": "application/json-patch+json", "query": {"dryRun": "All"}
    }  # fmt: skip
    with watching() as touched, pytest.raises(InvalidArgument) as admin:
        WatchedClusters(shared_sandbox.kubeconfig).api().request("PATCH", path, **request)
    assert leaks(admin.value.message, VALUE), "the API server no longer quotes the value"
    assert leaks(touched.scrub(admin.value.message), VALUE) == []
    with watching(), pytest.raises(InvalidArgument) as refused:
        WatchedClusters(patcher).api().request("PATCH", path, **request)
    assert leaks(refused.value.message, VALUE) == [] and "withheld" in refused.value.message
