"""What the kube server must never do: leak Secret values, pass injected arguments through,
hide a 403, flood the caller, or reach outside its namespace allow-list."""

from __future__ import annotations

import base64
import json

import pytest

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import Answer, KubeTools
from tests.support.kubectl import Kubectl

VALUE = "s3cr3t-Value-That-Must-Not-Leak"
SECRET = f"""
apiVersion: v1
kind: Secret
metadata: {{name: db, labels: {{app: db}}}}
stringData: {{password: "{VALUE}", user: admin-user-name}}
"""


def leaks(answer: Answer) -> list[str]:
    encoded = base64.b64encode(VALUE.encode()).decode()
    return [form for form in (VALUE, encoded, encoded[:16]) if form in answer.everything]


def test_secret_values_never_appear_in_any_tool_output(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    # kubectl apply also copies the whole manifest into the last-applied-configuration annotation.
    shared_kubectl("apply", "-n", namespace, "-f", "-", input=SECRET)
    shared_kubectl("annotate", "secret", "db", "-n", namespace, "note=checked")
    calls: list[tuple[str, dict[str, object]]] = [
        ("list_resources", {"kind": "secrets", "namespace": namespace}),
        ("list_resources", {"kind": "secret"}),
        ("list_resources", {"kind": "secrets", "namespace": namespace, "output": "yaml"}),
        ("list_resources", {"kind": "secrets", "namespace": namespace, "output": "fields",
                            "fields": ["data", "data.password", "stringData", "metadata"]}),
        ("get_resource", {"kind": "secret", "name": "db", "namespace": namespace}),
        ("get_resource", {"kind": "secret", "name": "db", "namespace": namespace,
                          "output": "fields", "fields": ["data.password", "metadata.annotations"]}),
        ("get_resource", {"kind": "Secret", "name": "db", "namespace": namespace,
                          "output": "summary"}),
        ("describe", {"kind": "secret", "name": "db", "namespace": namespace}),
        ("events", {"namespace": namespace}),
        ("overview", {}),
    ]  # fmt: skip
    for tool, arguments in calls:
        answer = kube.call(tool, **arguments)
        assert not answer.error, (tool, answer.text)
        assert leaks(answer) == [], (tool, arguments)
    described = kube.ok("describe", kind="secret", name="db", namespace=namespace)
    assert described["keys"] == ["password", "user"]
    text = kube.ok("get_resource", kind="secret", name="db", namespace=namespace)["yaml"]
    assert "last-applied-configuration" in text and "redacted" in text


BAD = ["web;rm -rf /", "$(reboot)", "web\nkind: Secret", "../../etc/passwd", "`id`", "a b"]


@pytest.mark.parametrize("bad", BAD, ids=["semicolon", "subshell", "newline", "traversal",
                                          "backtick", "space"])  # fmt: skip
def test_injected_names_are_refused_before_reaching_the_cluster(kube: KubeTools, bad: str) -> None:
    attempts: list[tuple[str, dict[str, object]]] = [
        ("get_resource", {"kind": "pods", "name": bad, "namespace": "default"}),
        ("get_resource", {"kind": "pods", "name": "web", "namespace": bad}),
        ("list_resources", {"kind": bad}),
        ("list_resources", {"kind": "pods", "label_selector": f"app={bad}"}),
        ("describe", {"kind": "deploy", "name": bad}),
        ("logs", {"pod": bad, "namespace": "default"}),
        ("rollout_status", {"name": bad}),
        ("can_i", {"verb": "get", "resource": "pods", "name": bad}),
        ("list_resources", {"kind": "pods", "output": "fields", "fields": [f"status.{bad}"]}),
    ]
    for tool, arguments in attempts:
        message = kube.fails(tool, **arguments)
        if bad == "a b" and "label_selector" in arguments:
            continue  # a space is legal selector grammar; the API server refuses this one (400)
        assert "not a" in message or "characters" in message, (tool, message)


def test_identity_without_rbac_gets_a_permission_error_naming_verb_and_resource(
    nobody: KubeTools, namespace: str
) -> None:
    message = nobody.fails("list_resources", kind="pods", namespace=namespace)
    assert "permission denied" in message
    assert "pods" in message and namespace in message and "list" in message
    message = nobody.fails("get_resource", kind="secret", name="db", namespace=namespace)
    assert "permission denied" in message and "secret" in message and "get" in message
    answer = nobody.ok("can_i", verb="list", resource="pods", namespace=namespace)
    assert answer["allowed"] is False


def test_namespace_allow_list_refuses_others_and_narrows_lists(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "configmap", "mine", "-n", namespace)
    shared_kubectl("create", "configmap", "theirs", "-n", "default")
    kube = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig, namespaces=(namespace,)))
    message = kube.fails("get_resource", kind="cm", name="theirs", namespace="default")
    assert "allow-list" in message and namespace in message
    assert "allow-list" in kube.fails("list_resources", kind="cm", namespace="default")
    assert "allow-list" in kube.fails("events", namespace="default")
    listed = kube.ok("list_resources", kind="configmaps")["items"]
    assert {c["namespace"] for c in listed} == {namespace}
    assert "mine" in {c["name"] for c in listed}
    overview_pods = kube.ok("overview")["unhealthy_pods"]
    assert all(p["namespace"] == namespace for p in overview_pods)
    assert "allow-list" in kube.fails("diagnose", namespace="default")
    assert "may only look at" in kube.fails("diagnose")  # not the whole cluster either
    assert kube.ok("diagnose", namespace=namespace)["scope"]


def test_a_long_list_is_paged_with_a_note_saying_how_to_continue(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    many = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:04d}"}}
            for i in range(600)
        ],
    }
    shared_kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(many))
    first = kube.ok("list_resources", kind="cm", namespace=namespace, label_selector="")
    assert first["total"] >= 600 and len(first["items"]) == 50
    assert "offset=50" in first["note"]
    huge = kube.ok("list_resources", kind="cm", namespace=namespace, limit=100_000)
    assert len(huge["items"]) == 500 and "offset=500" in huge["note"]
    last = kube.ok("list_resources", kind="cm", namespace=namespace, offset=580, limit=100)
    assert len(last["items"]) == first["total"] - 580 and "note" not in last
    assert len(json.dumps(first)) < 20_000


def test_every_read_tool_is_annotated_read_only_and_idempotent(shared_sandbox: Sandbox) -> None:
    # A read-only server has exactly the read tools; the write tools' own hints are checked in
    # test_writes.py.
    tools = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig, read_only=True)).tools()
    assert len(tools) >= 10
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.readOnlyHint is True and hints.destructiveHint is False, tool.name
        assert hints.idempotentHint is True, tool.name


def test_pages_over_several_allowed_namespaces_follow_namespace_then_name(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str
) -> None:
    other = f"{namespace}-b"
    shared_kubectl("create", "namespace", other)
    for ns, count in ((namespace, 30), (other, 40)):
        items = [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:03d}"}}
            for i in range(count)
        ]
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        shared_kubectl("create", "-n", ns, "-f", "-", input=body)
    kube = KubeTools(
        KubeSettings(kubeconfig=shared_sandbox.kubeconfig, namespaces=(other, namespace))
    )
    seen: list[tuple[str, str]] = []
    for offset in range(0, 200, 25):
        answer = kube.ok("list_resources", kind="cm", limit=25, offset=offset)
        seen += [(c["namespace"], c["name"]) for c in answer["items"]]
        if "note" not in answer:
            break
    expected = sorted(
        (ns, name)
        for ns in (namespace, other)
        for name in shared_kubectl(
            "get", "cm", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"
        ).split()
    )
    assert seen == expected and len(seen) >= 70
    assert answer["total"] == len(expected)
