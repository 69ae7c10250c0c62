"""kubectl apply against the sandbox: client-side and server-side apply, directories, kustomize,
diff and field validation, checked on kubectl's output and on the objects the sandbox stores.

Manifests live in tests/sandbox/kubectl/manifests/b/; each test works in a namespace of its own
in the module's shared sandbox.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.sandbox.kubectl.suite import MANIFESTS, rows
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

APPLY = MANIFESTS / "b" / "apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def deployment(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json(
        "get", "deployment", name, "-n", namespace, "--show-managed-fields"
    )
    return found


def images(obj: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["image"] for c in obj["spec"]["template"]["spec"]["containers"]}


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """managedFields by manager name: {manager: {"operation": ..., "fieldsV1": ...}}."""
    return {entry["manager"]: entry for entry in obj["metadata"].get("managedFields", [])}


def owns(entry: dict[str, Any], *path: str) -> bool:
    fields = entry.get("fieldsV1") or {}
    for step in path:
        if step not in fields:
            return False
        fields = fields[step]
    return True


def scaled(name: str, replicas: int) -> str:
    """A partial Deployment naming only spec.replicas: what an autoscaler would apply."""
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {"replicas": replicas},
        }
    )


# -- client-side apply -----------------------------------------------------------------------


def test_second_apply_updates_object_and_last_applied(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    first = shared_kubectl("apply", "-n", namespace, "-f", str(APPLY / "web-v1.yaml"))
    second = shared_kubectl("apply", "-n", namespace, "-f", str(APPLY / "web-v2.yaml"))

    assert first == "deployment.apps/web created\n"
    assert second == "deployment.apps/web configured\n"
    web = deployment(shared_kubectl, namespace, "web")
    assert web["spec"]["replicas"] == 4
    assert images(web) == {"web": "nginx:1.26", "sidecar": "busybox:1.36"}
    assert web["metadata"]["labels"] == {"app": "web"}, "a label removed from the manifest stays"
    recorded = json.loads(web["metadata"]["annotations"][LAST_APPLIED])
    assert recorded["spec"]["replicas"] == 4
    assert recorded["metadata"]["labels"] == {"app": "web"}
    assert recorded["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"


def test_reapplying_the_same_manifest_changes_nothing(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    manifest = str(APPLY / "web-v1.yaml")
    shared_kubectl("apply", "-n", namespace, "-f", manifest)
    # Once rolled out, the controllers stop writing the Deployment's status: any new
    # resourceVersion after this would be the second apply's doing.
    shared_kubectl("rollout", "status", "-n", namespace, "deployment/web", "--timeout=60s")
    before = deployment(shared_kubectl, namespace, "web")

    again = shared_kubectl("apply", "-n", namespace, "-f", manifest)

    assert again == "deployment.apps/web unchanged\n"
    after = deployment(shared_kubectl, namespace, "web")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["metadata"]["generation"] == 1


def test_apply_directory_creates_every_manifest_in_it(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    out = shared_kubectl("apply", "-n", namespace, "-f", str(MANIFESTS / "b" / "bundle"))

    assert out.splitlines() == [  # kubectl reads a directory's files in name order
        "configmap/api-settings created",
        "deployment.apps/api created",
        "service/api created",
    ]
    listed = shared_kubectl("get", "configmaps,deployments,services", "-n", namespace, "-o", "name")
    assert {"configmap/api-settings", "deployment.apps/api", "service/api"} <= set(listed.split())
    service = shared_kubectl.json("get", "service", "api", "-n", namespace)
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    assert service["spec"]["type"] == "ClusterIP"


def test_apply_kustomization_prefixes_labels_and_generates_configmap(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    out = shared_kubectl("apply", "-n", namespace, "-k", str(MANIFESTS / "b" / "kustomize"))

    lines = out.splitlines()
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["created", "created"]
    made = dict(line.rsplit(" ", 1)[0].split("/", 1) for line in lines)
    configmap_name = made["configmap"]
    assert configmap_name.startswith("shop-settings-"), "the generator appends a content hash"
    assert len(configmap_name) == len("shop-settings-") + 10
    assert made["deployment.apps"] == "shop-web"
    web = deployment(shared_kubectl, namespace, "shop-web")
    assert web["metadata"]["labels"] == {"team": "shop"}
    assert web["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    env_from = web["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert env_from == [{"configMapRef": {"name": configmap_name}}]
    settings = shared_kubectl.json("get", "configmap", configmap_name, "-n", namespace)
    assert settings["data"] == {"MODE": "prod"}
    assert settings["metadata"]["labels"] == {"team": "shop"}


def test_apply_accepts_a_list_of_objects(shared_kubectl: Kubectl, namespace: str) -> None:
    docs = list(yaml.safe_load_all((MANIFESTS / "b" / "bundle" / "configmap.yaml").read_text()))
    listed = {"apiVersion": "v1", "kind": "List", "items": docs}

    done = shared_kubectl.run(
        "apply", "-n", namespace, "-f", "-", input=json.dumps(listed), check=False
    )

    assert done.stderr == ""
    assert done.stdout == "configmap/api-settings created\n"


# -- diff ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "code", "changed"),
    [
        pytest.param("web-v1.yaml", 0, [], id="same-exits-0"),
        pytest.param(
            "web-v2.yaml",
            1,
            [
                "-    tier: frontend",
                "-  replicas: 2",
                "+  replicas: 4",
                "-      - image: nginx:1.25",
                "+      - image: nginx:1.26",
            ],
            id="different-exits-1",
        ),
    ],
)
def test_diff_reports_what_apply_would_change(
    shared_kubectl: Kubectl, namespace: str, manifest: str, code: int, changed: list[str]
) -> None:
    shared_kubectl("apply", "-n", namespace, "-f", str(APPLY / "web-v1.yaml"))

    done = shared_kubectl.run("diff", "-n", namespace, "-f", str(APPLY / manifest), check=False)

    assert (done.returncode, done.stderr) == (code, "")
    assert set(changed) <= set(done.stdout.splitlines())
    if not changed:
        assert done.stdout == ""
    live = deployment(shared_kubectl, namespace, "web")
    assert live["spec"]["replicas"] == 2, "diff must not write"


# -- field validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "code", "stdout", "stderr"),
    [
        pytest.param(
            (),
            1,
            "",
            'Error from server (BadRequest): error when creating "STDIN": Deployment in version '
            '"v1" cannot be handled as a Deployment: strict decoding error: unknown field '
            '"spec.replicass"\n',
            id="strict-by-default",
        ),
        pytest.param(
            ("--validate=warn",),
            0,
            "deployment.apps/typo created\n",
            'Warning: unknown field "spec.replicass"\n',
            id="warn",
        ),
        pytest.param(("--validate=false",), 0, "deployment.apps/typo created\n", "", id="off"),
    ],
)
def test_apply_unknown_field_follows_validate_flag(
    shared_kubectl: Kubectl,
    namespace: str,
    flags: tuple[str, ...],
    code: int,
    stdout: str,
    stderr: str,
) -> None:
    manifest = (APPLY / "web-typo.yaml").read_text()

    done = shared_kubectl.run(
        "apply", "-n", namespace, *flags, "-f", "-", input=manifest, check=False
    )

    assert (done.returncode, done.stdout, done.stderr) == (code, stdout, stderr)
    listed = shared_kubectl("get", "deployments", "-n", namespace, "-o", "name")
    assert listed == ("deployment.apps/typo\n" if code == 0 else "")


@pytest.mark.parametrize("validate", ["warn", "false"])
def test_unknown_field_is_dropped_when_not_rejected(
    shared_kubectl: Kubectl, namespace: str, validate: str
) -> None:
    manifest = (APPLY / "web-typo.yaml").read_text()
    shared_kubectl("apply", "-n", namespace, f"--validate={validate}", "-f", "-", input=manifest)

    spec = deployment(shared_kubectl, namespace, "typo")["spec"]

    assert "replicass" not in spec
    assert spec["replicas"] == 1  # the default, as the typo set nothing


# -- server-side apply -----------------------------------------------------------------------


def test_server_side_apply_records_kubectl_as_field_manager(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    out = shared_kubectl(
        "apply", "--server-side", "-n", namespace, "-f", str(APPLY / "web-v1.yaml")
    )

    assert out == "deployment.apps/web serverside-applied\n"
    shown = yaml.safe_load(
        shared_kubectl(
            "get", "deployment", "web", "-n", namespace, "-o", "yaml", "--show-managed-fields"
        )
    )
    kubectl_entry = managers(shown)["kubectl"]
    assert kubectl_entry["operation"] == "Apply"
    assert kubectl_entry["fieldsType"] == "FieldsV1"
    assert owns(kubectl_entry, "f:spec", "f:replicas")
    assert owns(
        kubectl_entry,
        "f:spec",
        "f:template",
        "f:spec",
        "f:containers",
        'k:{"name":"web"}',
        "f:image",
    )
    assert owns(kubectl_entry, "f:metadata", "f:labels", "f:tier")
    hidden = shared_kubectl.json("get", "deployment", "web", "-n", namespace)
    assert "managedFields" not in hidden["metadata"], "kubectl hides managedFields by default"


def test_server_side_apply_conflicts_then_force_takes_ownership(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("apply", "--server-side", "-n", namespace, "-f", str(APPLY / "web-v1.yaml"))

    refused = shared_kubectl.fails(
        "apply",
        "--server-side",
        "--field-manager=autoscaler",
        "-n",
        namespace,
        "-f",
        "-",
        input=scaled("web", 5),
    )
    assert refused.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas\n'
    )
    assert deployment(shared_kubectl, namespace, "web")["spec"]["replicas"] == 2

    forced = shared_kubectl(
        "apply",
        "--server-side",
        "--field-manager=autoscaler",
        "--force-conflicts",
        "-n",
        namespace,
        "-f",
        "-",
        input=scaled("web", 5),
    )

    assert forced == "deployment.apps/web serverside-applied\n"
    web = deployment(shared_kubectl, namespace, "web")
    assert web["spec"]["replicas"] == 5
    assert images(web)["web"] == "nginx:1.25", "fields the autoscaler did not name stay"
    owners = managers(web)
    assert owns(owners["autoscaler"], "f:spec", "f:replicas")
    assert not owns(owners["kubectl"], "f:spec", "f:replicas")
    assert owns(owners["kubectl"], "f:spec", "f:template")


def test_server_side_apply_by_same_manager_never_conflicts(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("apply", "--server-side", "-n", namespace, "-f", str(APPLY / "web-v1.yaml"))

    out = shared_kubectl(
        "apply", "--server-side", "-n", namespace, "-f", str(APPLY / "web-v2.yaml")
    )

    assert out == "deployment.apps/web serverside-applied\n"
    web = deployment(shared_kubectl, namespace, "web")
    assert (web["spec"]["replicas"], images(web)["web"]) == (4, "nginx:1.26")
    assert "tier" not in web["metadata"]["labels"], "a field the manager dropped is removed"
    table = rows(shared_kubectl("get", "deployment", "web", "-n", namespace))
    [row] = table  # READY counts pods the kubelets have made ready so far: any of 0/4 .. 4/4
    assert row["NAME"] == "web" and re.fullmatch(r"[0-4]/4", row["READY"]), row
