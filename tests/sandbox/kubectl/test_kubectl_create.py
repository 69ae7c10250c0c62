"""kubectl creating objects in the sandbox: every typed `kubectl create` subcommand (whose bodies
kubectl sends as protobuf), `create -f` from stdin, tokens, conflicts and dry runs. Each test
checks kubectl's message and the object the sandbox stored."""

from __future__ import annotations

import base64
import ipaddress
import json
from typing import Any

import pytest
import yaml

from tests.sandbox.kubectl.suite import rows, shaped_like
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

RBAC = "rbac.authorization.k8s.io"


def fill(value: Any, namespace: str) -> Any:
    """`value` with every "{ns}" replaced by the test's namespace."""
    return json.loads(json.dumps(value).replace("{ns}", namespace))


TYPED_CREATES = [
    pytest.param(
        ["namespace", "{ns}-new"],
        "namespace/{ns}-new",
        {
            "metadata": {"labels": {"kubernetes.io/metadata.name": "{ns}-new"}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        },
        id="namespace",
    ),
    pytest.param(
        ["deployment", "web", "--image=nginx:1.27", "--replicas=3"],
        "deployment.apps/web",
        {
            "metadata": {"labels": {"app": "web"}, "generation": 1},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{"name": "nginx", "image": "nginx:1.27"}],
                        "restartPolicy": "Always",
                    },
                },
            },
        },
        id="deployment",
    ),
    pytest.param(
        ["configmap", "settings", "--from-literal=color=blue", "--from-literal=size=3"],
        "configmap/settings",
        {"data": {"color": "blue", "size": "3"}},
        id="configmap",
    ),
    pytest.param(
        ["serviceaccount", "robot"],
        "serviceaccount/robot",
        {"metadata": {"name": "robot", "namespace": "{ns}"}},
        id="serviceaccount",
    ),
    pytest.param(
        ["role", "pod-reader", "--verb=get,list", "--resource=pods"],
        f"role.{RBAC}/pod-reader",
        {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
        id="role",
    ),
    pytest.param(
        ["rolebinding", "read-pods", "--role=pod-reader", "--serviceaccount={ns}:robot"],
        f"rolebinding.{RBAC}/read-pods",
        {
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "{ns}"}],
        },
        id="rolebinding",
    ),
    pytest.param(
        ["clusterrole", "{ns}-nodes", "--verb=get,watch", "--resource=nodes,deployments.apps"],
        f"clusterrole.{RBAC}/{{ns}}-nodes",
        {
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "watch"]},
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "watch"]},
            ]
        },
        id="clusterrole",
    ),
    pytest.param(
        ["clusterrolebinding", "{ns}-view", "--clusterrole=view", "--user=alice"],
        f"clusterrolebinding.{RBAC}/{{ns}}-view",
        {
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "alice"}],
        },
        id="clusterrolebinding",
    ),
    pytest.param(
        ["job", "once", "--image=busybox:1.36", "--", "echo", "hi"],
        "job.batch/once",
        {
            "spec": {
                "backoffLimit": 6,
                "completions": 1,
                "parallelism": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "once", "image": "busybox:1.36", "command": ["echo", "hi"]}
                        ],
                    }
                },
            }
        },
        id="job",
    ),
    pytest.param(
        ["cronjob", "nightly", "--image=busybox:1.36", "--schedule=0 3 * * *", "--", "date"],
        "cronjob.batch/nightly",
        {
            "spec": {
                "schedule": "0 3 * * *",
                "concurrencyPolicy": "Allow",
                "suspend": False,
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [{"name": "nightly", "command": ["date"]}],
                            }
                        }
                    }
                },
            }
        },
        id="cronjob",
    ),
    pytest.param(
        ["pdb", "web", "--selector=app=web", "--min-available=1"],
        "poddisruptionbudget.policy/web",
        {"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
        id="pdb",
    ),
    pytest.param(
        ["quota", "limits", "--hard=pods=10,cpu=4,memory=8Gi"],
        "resourcequota/limits",
        {"spec": {"hard": {"pods": "10", "cpu": "4", "memory": "8Gi"}}},
        id="quota",
    ),
    pytest.param(
        ["priorityclass", "{ns}-high", "--value=1000", "--description=urgent work"],
        "priorityclass.scheduling.k8s.io/{ns}-high",
        {
            "value": 1000,
            "description": "urgent work",
            "preemptionPolicy": "PreemptLowerPriority",
        },
        id="priorityclass",
    ),
    pytest.param(
        ["ingress", "web", "--class=nginx", "--rule=example.com/=web:80"],
        "ingress.networking.k8s.io/web",
        {
            "spec": {
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Exact",
                                    "backend": {"service": {"name": "web", "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ],
            }
        },
        id="ingress",
    ),
    pytest.param(
        ["service", "clusterip", "web", "--tcp=80:8080"],
        "service/web",
        {
            "spec": {
                "type": "ClusterIP",
                "selector": {"app": "web"},
                "ports": [{"name": "80-8080", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
            }
        },
        id="service-clusterip",
    ),
]


@pytest.mark.parametrize(("args", "ref", "expected"), TYPED_CREATES)
def test_create_typed_stores_object(
    shared_kubectl: Kubectl, namespace: str, args: list[str], ref: str, expected: dict[str, Any]
) -> None:
    args, ref = fill(args, namespace), fill(ref, namespace)
    # -n goes first: whatever follows `--` is the container's command.
    assert shared_kubectl("create", "-n", namespace, *args) == f"{ref} created\n"
    stored = shared_kubectl.json("get", ref, "-n", namespace)
    assert shaped_like(stored, fill(expected, namespace)) == fill(expected, namespace)
    assert stored["metadata"]["uid"] and stored["metadata"]["creationTimestamp"]


def test_create_secret_stores_base64_data_and_prints_it_like_kubernetes(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl(
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=password=hunter2",
        "--from-literal=user=admin",
        "-n",
        namespace,
    )
    stored = shared_kubectl.json("get", "secret", "db", "-n", namespace)
    assert stored["type"] == "Opaque"
    assert stored["data"] == {
        "password": base64.b64encode(b"hunter2").decode(),
        "user": base64.b64encode(b"admin").decode(),
    }
    printed = shared_kubectl("get", "secret", "db", "-n", namespace, "-o", "yaml")
    assert printed.startswith(
        "apiVersion: v1\ndata:\n  password: aHVudGVyMg==\n  user: YWRtaW4=\nkind: Secret\n"
    )
    assert printed.endswith("type: Opaque\n")
    assert "hunter2" not in printed and "stringData" not in printed
    table = rows(shared_kubectl("get", "secret", "db", "-n", namespace))
    assert [(r["NAME"], r["TYPE"], r["DATA"]) for r in table] == [("db", "Opaque", "2")]


def test_create_service_clusterip_allocates_an_address(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "service", "clusterip", "web", "--tcp=80:8080", "-n", namespace)
    shared_kubectl("create", "service", "clusterip", "api", "--tcp=443", "-n", namespace)
    web = shared_kubectl.json("get", "service", "web", "-n", namespace)["spec"]
    api = shared_kubectl.json("get", "service", "api", "-n", namespace)["spec"]
    for spec in (web, api):
        assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
        assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert web["clusterIP"] != api["clusterIP"]
    assert "10.96.0.1" not in (web["clusterIP"], api["clusterIP"])  # the kubernetes Service's
    [row] = rows(shared_kubectl("get", "service", "web", "-n", namespace))
    assert (row["TYPE"], row["CLUSTER-IP"], row["PORT(S)"]) == (
        "ClusterIP",
        web["clusterIP"],
        "80/TCP",
    )


def test_create_service_nodeport_allocates_a_node_port(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "-n", namespace)
    spec = shared_kubectl.json("get", "service", "web", "-n", namespace)["spec"]
    [port] = spec["ports"]
    assert spec["type"] == "NodePort"
    assert 30000 <= port["nodePort"] <= 32767
    assert (port["port"], port["targetPort"]) == (80, 8080)
    [row] = rows(shared_kubectl("get", "service", "web", "-n", namespace))
    assert row["PORT(S)"] == f"80:{port['nodePort']}/TCP"


def _jwt_claims(token: str) -> dict[str, Any]:
    parts = token.split(".")
    assert len(parts) == 3, f"not a JWT: {token!r}"
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload))
    return claims


def test_create_token_issues_a_service_account_jwt(shared_kubectl: Kubectl, namespace: str) -> None:
    shared_kubectl("create", "serviceaccount", "robot", "-n", namespace)
    token = shared_kubectl("create", "token", "robot", "-n", namespace, "--duration=2h").strip()
    claims = _jwt_claims(token)
    sa = shared_kubectl.json("get", "serviceaccount", "robot", "-n", namespace)
    assert claims["sub"] == f"system:serviceaccount:{namespace}:robot"
    assert claims["exp"] - claims["iat"] == 7200
    assert claims["kubernetes.io"]["serviceaccount"] == {
        "name": "robot",
        "uid": sa["metadata"]["uid"],
    }
    assert claims["kubernetes.io"]["namespace"] == namespace


def test_create_token_for_missing_service_account_is_not_found(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    done = shared_kubectl.fails("create", "token", "ghost", "-n", namespace)
    assert 'serviceaccounts "ghost" not found' in done.stderr


def test_create_from_stdin_creates_each_object(shared_kubectl: Kubectl, namespace: str) -> None:
    manifest = f"""
apiVersion: v1
kind: ConfigMap
metadata: {{name: app-config, namespace: {namespace}}}
data: {{mode: fast}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec: {{containers: [{{name: app, image: "nginx:1.27"}}]}}
"""
    printed = shared_kubectl("create", "-f", "-", input=manifest)
    assert printed == "configmap/app-config created\ndeployment.apps/app created\n"
    assert shared_kubectl.json("get", "cm", "app-config", "-n", namespace)["data"] == {
        "mode": "fast"
    }
    assert shared_kubectl.json("get", "deploy", "app", "-n", namespace)["spec"]["replicas"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # The typed subcommands wrap the server's error; `create namespace` prints it as it is.
        pytest.param(
            ["configmap", "x"],
            'error: failed to create configmap: configmaps "x" already exists',
            id="configmap",
        ),
        pytest.param(
            ["deployment", "x", "--image=nginx"],
            'error: failed to create deployment: deployments.apps "x" already exists',
            id="deployment",
        ),
        pytest.param(
            ["serviceaccount", "x"],
            'error: failed to create serviceaccount: serviceaccounts "x" already exists',
            id="serviceaccount",
        ),
        pytest.param(
            ["namespace", "{ns}"],
            'Error from server (AlreadyExists): namespaces "{ns}" already exists',
            id="namespace",
        ),
    ],
)
def test_create_twice_fails_with_already_exists(
    shared_kubectl: Kubectl, namespace: str, args: list[str], message: str
) -> None:
    args, message = fill(args, namespace), fill(message, namespace)
    if args[0] != "namespace":
        shared_kubectl("create", *args, "-n", namespace)
    before = shared_kubectl.json("get", *args[:2], "-n", namespace)
    done = shared_kubectl.fails("create", *args, "-n", namespace)
    assert done.returncode == 1
    assert done.stderr.strip() == message
    after = shared_kubectl.json("get", *args[:2], "-n", namespace)
    # The object stays the one first created (its controller may still be writing its status).
    # Not compared: its creation stamp, which each read shows on the wall clock as of then
    # (the test sandboxes live faster than that: sandbox/timeframe.py).
    for field in ("uid", "generation"):
        assert after["metadata"].get(field) == before["metadata"].get(field), field
    assert {k: v for k, v in after.items() if k not in ("metadata", "status")} == {
        k: v for k, v in before.items() if k not in ("metadata", "status")
    }


def test_create_from_stdin_twice_names_the_source(shared_kubectl: Kubectl, namespace: str) -> None:
    manifest = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "once", "namespace": namespace},
        }
    )
    shared_kubectl("create", "-f", "-", input=manifest)
    done = shared_kubectl.fails("create", "-f", "-", input=manifest)
    assert done.stderr.strip() == (
        'Error from server (AlreadyExists): error when creating "STDIN": '
        'configmaps "once" already exists'
    )


@pytest.mark.parametrize(
    ("args", "ref"),
    [
        pytest.param(["namespace", "{ns}-dry"], "namespace/{ns}-dry", id="namespace"),
        pytest.param(
            ["deployment", "web", "--image=nginx"], "deployment.apps/web", id="deployment"
        ),
        pytest.param(["configmap", "cm", "--from-literal=a=b"], "configmap/cm", id="configmap"),
        pytest.param(["service", "nodeport", "web", "--tcp=80"], "service/web", id="service"),
    ],
)
def test_create_server_dry_run_stores_nothing(
    shared_kubectl: Kubectl, namespace: str, args: list[str], ref: str
) -> None:
    args, ref = fill(args, namespace), fill(ref, namespace)
    printed = shared_kubectl("create", *args, "-n", namespace, "--dry-run=server")
    assert printed == f"{ref} created (server dry run)\n"
    done = shared_kubectl.fails("get", ref, "-n", namespace)
    assert "(NotFound)" in done.stderr


def test_create_server_dry_run_returns_the_defaulted_object(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    printed = shared_kubectl(
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "-n",
        namespace,
        "--dry-run=server",
        "-o",
        "json",
    )
    dry = json.loads(printed)
    assert dry["spec"]["revisionHistoryLimit"] == 10
    assert dry["metadata"]["uid"]
    assert shared_kubectl("get", "deployments", "-n", namespace, "-o", "name") == ""


def test_create_client_dry_run_prints_yaml_and_stores_nothing(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    printed = shared_kubectl(
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
        "-n",
        namespace,
        "--dry-run=client",
        "-o",
        "yaml",
    )
    manifest = yaml.safe_load(printed)
    assert (manifest["kind"], manifest["metadata"]["name"], manifest["spec"]["replicas"]) == (
        "Deployment",
        "web",
        2,
    )
    assert "uid" not in manifest["metadata"]
    assert shared_kubectl("get", "deployments", "-n", namespace, "-o", "name") == ""
    # What the client printed is a valid object: the server takes it as it is.
    created = shared_kubectl("create", "-f", "-", "-n", namespace, input=printed)
    assert created == "deployment.apps/web created\n"


def test_create_from_a_list_manifest_creates_each_item(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    items = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        for name in ("first", "second")
    ]
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    printed = shared_kubectl("create", "-n", namespace, "-f", "-", input=manifest)
    assert printed == "configmap/first created\nconfigmap/second created\n"
    shown = shared_kubectl("get", "configmaps", "-n", namespace, "-o", "name")
    assert set(shown.split()) >= {"configmap/first", "configmap/second"}
