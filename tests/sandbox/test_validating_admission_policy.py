"""ValidatingAdmissionPolicy over real HTTP: kubectl 1.37 and the official Python client.

What is checked is what a real API server answers: which requests a policy and its binding
select (resource rules, subresources, operations, namespace selector, match conditions), a
denial's status code and wording, Warn's warning header, failurePolicy on a CEL error, variables
and messageExpression, the requester's identity in `request.userInfo`, and the checks a policy
gets when it is written. Every test runs as the admin (policies judge the admin too) in its own
namespace of a shared sandbox, with a policy pinned to that namespace so tests never meet
each other's policies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

NAME_LABEL = "kubernetes.io/metadata.name"
CONFIGMAPS = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["configmaps"],
}
DEPLOYMENTS = {
    "apiGroups": ["apps"],
    "apiVersions": ["*"],
    "operations": ["*"],
    "resources": ["deployments"],
}
AT_MOST_FIVE = {"expression": "object.spec.replicas <= 5"}


@pytest.fixture(scope="module")
def api(shared_sandbox: Sandbox) -> Iterator[client.ApiClient]:
    with kubernetes.config.new_client_from_config(str(shared_sandbox.kubeconfig)) as api_client:
        yield api_client


def policy(
    namespace: str,
    *validations: dict[str, Any],
    rules: tuple[dict[str, Any], ...] = (CONFIGMAPS,),
    actions: tuple[str, ...] = ("Deny",),
    namespaces: tuple[str, ...] = (),
    binding_match: dict[str, Any] | None = None,
    **spec: Any,
) -> str:
    """A policy named after `namespace` and its binding, as YAML for `kubectl apply`; the policy
    selects only `namespace` (and `namespaces`) so tests sharing a sandbox stay apart."""
    selector = {
        "matchExpressions": [
            {"key": NAME_LABEL, "operator": "In", "values": [namespace, *namespaces]}
        ]
    }
    definition = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": namespace},
        "spec": {
            "matchConstraints": {"namespaceSelector": selector, "resourceRules": list(rules)},
            "validations": list(validations),
            **spec,
        },
    }
    binding: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{namespace}-binding"},
        "spec": {"policyName": namespace, "validationActions": list(actions)},
    }
    if binding_match is not None:
        binding["spec"]["matchResources"] = binding_match
    return yaml.safe_dump_all([definition, binding])


def definition_of(documents: str) -> str:
    """The policy of `policy()`'s output, without its binding."""
    return yaml.safe_dump(next(yaml.safe_load_all(documents)))


def denied(namespace: str, message: str) -> str:
    return (
        f"ValidatingAdmissionPolicy '{namespace}' with binding '{namespace}-binding' denied "
        f"request: {message}"
    )


def deployment(namespace: str, replicas: int, name: str = "web") -> str:
    labels = {"app": name}
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        }
    )


def refusal(raised: pytest.ExceptionInfo[ApiException]) -> tuple[int, dict[str, Any]]:
    return raised.value.status, json.loads(raised.value.body)


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_denial_is_a_422_worded_as_kube_apiserver_words_it(
    shared_kubectl: Kubectl, namespace: str, api: client.ApiClient
) -> None:
    shared_kubectl("apply", "-f", "-", input=policy(namespace, AT_MOST_FIVE, rules=(DEPLOYMENTS,)))

    done = shared_kubectl.fails("apply", "-f", "-", input=deployment(namespace, 6))
    with pytest.raises(ApiException) as raised:
        client.AppsV1Api(api).create_namespaced_deployment(
            namespace, yaml.safe_load(deployment(namespace, 7))
        )

    message = denied(namespace, "failed expression: object.spec.replicas <= 5")
    assert one_line(done.stderr) == f'The deployments "web" is invalid: : {message}'
    code, status = refusal(raised)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == f'deployments.apps "web" is forbidden: {message}'
    assert (status["details"]["kind"], status["details"]["group"]) == ("deployments", "apps")
    assert "deployment.apps/web created" in shared_kubectl(
        "apply", "-f", "-", input=deployment(namespace, 5)
    )


KEEP = {"expression": "request.operation != 'DELETE'", "message": "web stays"}
TOO_MANY = "failed expression: object.spec.replicas <= 5"


@pytest.mark.parametrize(
    ("change", "validation", "message"),
    [
        pytest.param(
            ("patch", "deployment", "web", "-p", '{"spec":{"replicas":6}}'),
            AT_MOST_FIVE,
            TOO_MANY,
            id="patch",
        ),
        pytest.param(
            ("apply", "--server-side", "--force-conflicts", "-f", "-"),
            AT_MOST_FIVE,
            TOO_MANY,
            id="ssa",
        ),
        pytest.param(
            ("apply", "--dry-run=server", "-f", "-"), AT_MOST_FIVE, TOO_MANY, id="dry-run"
        ),
        pytest.param(("delete", "deployment", "web"), KEEP, "web stays", id="delete"),
    ],
)
def test_updates_patches_and_deletes_are_judged_too(
    shared_kubectl: Kubectl,
    namespace: str,
    change: tuple[str, ...],
    validation: dict[str, str],
    message: str,
) -> None:
    shared_kubectl("apply", "-f", "-", input=deployment(namespace, 2))
    shared_kubectl("apply", "-f", "-", input=policy(namespace, validation, rules=(DEPLOYMENTS,)))

    done = shared_kubectl.fails("-n", namespace, *change, input=deployment(namespace, 6))

    assert denied(namespace, message) in one_line(done.stderr)
    assert shared_kubectl.json("get", "deployment", "web", "-n", namespace)["spec"]["replicas"] == 2


def test_a_rule_names_a_subresource_to_judge_it(shared_kubectl: Kubectl, namespace: str) -> None:
    shared_kubectl("apply", "-f", "-", input=deployment(namespace, 2))
    shared_kubectl("apply", "-f", "-", input=policy(namespace, AT_MOST_FIVE, rules=(DEPLOYMENTS,)))
    shared_kubectl("scale", "deployment", "web", "-n", namespace, "--replicas=8")  # not /scale

    scale = {**DEPLOYMENTS, "resources": ["deployments/scale"]}
    shared_kubectl("apply", "-f", "-", input=policy(namespace, AT_MOST_FIVE, rules=(scale,)))
    done = shared_kubectl.fails("scale", "deployment", "web", "-n", namespace, "--replicas=9")

    assert 'The deployments/scale "web" is invalid' in done.stderr  # the Scale's replicas
    assert denied(namespace, TOO_MANY) in done.stderr


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        pytest.param(None, 422, id="default-invalid"),
        pytest.param("Invalid", 422, id="invalid"),
        pytest.param("Forbidden", 403, id="forbidden"),
        pytest.param("Unauthorized", 401, id="unauthorized"),
        pytest.param("RequestEntityTooLarge", 413, id="too-large"),
    ],
)
def test_the_reason_of_a_validation_is_the_status_code(
    shared_kubectl: Kubectl, namespace: str, api: client.ApiClient, reason: str | None, code: int
) -> None:
    validation = {"expression": "false", "message": "no ConfigMaps here"}
    if reason is not None:
        validation["reason"] = reason
    shared_kubectl("apply", "-f", "-", input=policy(namespace, validation))

    with pytest.raises(ApiException) as raised:
        client.CoreV1Api(api).create_namespaced_config_map(namespace, {"metadata": {"name": "c"}})

    status_code, status = refusal(raised)
    assert (status_code, status["code"], status["reason"]) == (code, code, reason or "Invalid")
    assert status["message"] == (
        f'configmaps "c" is forbidden: {denied(namespace, "no ConfigMaps here")}'
    )


def test_warn_admits_with_a_warning_and_audit_admits_silently(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    labelled = {"expression": "has(object.metadata.labels)", "message": "label your ConfigMaps"}
    shared_kubectl("apply", "-f", "-", input=policy(namespace, labelled, actions=("Warn",)))
    warned = shared_kubectl.run("create", "configmap", "warned", "-n", namespace)

    shared_kubectl("apply", "-f", "-", input=policy(namespace, labelled, actions=("Audit",)))
    audited = shared_kubectl.run("create", "configmap", "audited", "-n", namespace)

    assert warned.stderr == (
        f"Warning: Validation failed for ValidatingAdmissionPolicy '{namespace}' with binding "
        f"'{namespace}-binding': label your ConfigMaps\n"
    )
    assert audited.stderr == ""
    names = shared_kubectl("get", "configmaps", "-n", namespace, "-o", "name").split()
    assert {"configmap/warned", "configmap/audited"} <= set(names)


@pytest.mark.parametrize(
    ("failure_policy", "created"),
    [pytest.param("Fail", False, id="fail"), pytest.param("Ignore", True, id="ignore")],
)
def test_failure_policy_decides_when_an_expression_cannot_be_evaluated(
    shared_kubectl: Kubectl, namespace: str, failure_policy: str, created: bool
) -> None:
    safe = {"expression": "object.data.mode == 'safe'", "message": "mode must be safe"}
    shared_kubectl("apply", "-f", "-", input=policy(namespace, safe, failurePolicy=failure_policy))

    done = shared_kubectl.run(
        "create", "configmap", "nomode", "-n", namespace, "--from-literal=a=b", check=False
    )

    if created:
        assert done.returncode == 0, done.stderr
    else:
        error = "expression 'object.data.mode == 'safe'' resulted in error: no such key: mode"
        assert denied(namespace, error) in one_line(done.stderr)
    refused = shared_kubectl.fails(
        "create", "configmap", "unsafe", "-n", namespace, "--from-literal=mode=fast"
    )
    assert denied(namespace, "mode must be safe") in one_line(refused.stderr)


def test_the_namespace_selector_reads_the_namespace_labels(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    other = f"{namespace[:50]}-b"
    shared_kubectl("create", "namespace", other)
    in_test = {"namespaceSelector": {"matchLabels": {"env": "test"}}}
    shared_kubectl(
        "apply",
        "-f",
        "-",
        input=policy(
            namespace, {"expression": "false"}, namespaces=(other,), binding_match=in_test
        ),
    )
    shared_kubectl("label", "namespace", namespace, "env=test")

    refused = shared_kubectl.fails("create", "configmap", "c", "-n", namespace)
    shared_kubectl("create", "configmap", "c", "-n", other)
    shared_kubectl("label", "namespace", other, "env=test")
    later = shared_kubectl.fails("create", "configmap", "d", "-n", other)

    for done in (refused, later):
        assert denied(namespace, "failed expression: false") in one_line(done.stderr)


def test_object_selector_and_exclude_rules_narrow_a_binding(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    guarded = {
        "objectSelector": {"matchLabels": {"guarded": "yes"}},
        "excludeResourceRules": [{**CONFIGMAPS, "resourceNames": ["allowed"]}],
    }
    refuse = {"expression": "false"}
    shared_kubectl("apply", "-f", "-", input=policy(namespace, refuse, binding_match=guarded))

    def configmap(name: str) -> str:
        meta = {"name": name, "namespace": namespace, "labels": {"guarded": "yes"}}
        return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})

    shared_kubectl("create", "configmap", "free", "-n", namespace)  # no label: not selected
    shared_kubectl("create", "-f", "-", input=configmap("allowed"))  # excluded by name
    selected = shared_kubectl.fails("create", "-f", "-", input=configmap("guarded"))
    labelled = shared_kubectl.fails("label", "configmap", "free", "guarded=yes", "-n", namespace)

    for done in (selected, labelled):
        assert denied(namespace, "failed expression: false") in one_line(done.stderr)


def test_variables_and_message_expressions_shape_the_message(
    shared_kubectl: Kubectl, namespace: str, api: client.ApiClient
) -> None:
    variables = [
        {"name": "containers", "expression": "object.spec.template.spec.containers"},
        {
            "name": "untagged",
            "expression": "variables.containers.filter(c, !c.image.contains(':'))",
        },
    ]
    tagged = {
        "expression": "size(variables.untagged) == 0",
        "messageExpression": "'untagged images: ' + variables.untagged.map(c, c.image).join(', ')",
    }
    fallback = {
        "expression": "object.spec.replicas <= 5",
        "message": "at most 5 replicas",
        "messageExpression": "object.spec.missing",  # fails: the message is used instead
    }
    shared_kubectl(
        "apply",
        "-f",
        "-",
        input=policy(namespace, tagged, fallback, rules=(DEPLOYMENTS,), variables=variables),
    )
    body = yaml.safe_load(deployment(namespace, 9))
    containers = body["spec"]["template"]["spec"]["containers"]
    containers += [{"name": "sidecar", "image": "busybox"}, {"name": "proxy", "image": "envoy"}]

    with pytest.raises(ApiException) as raised:
        client.AppsV1Api(api).create_namespaced_deployment(namespace, body)

    _, status = refusal(raised)  # the first failing validation decides
    assert status["message"].endswith(denied(namespace, "untagged images: busybox, envoy"))
    del containers[1:]  # tagged now; still 9 replicas
    with pytest.raises(ApiException) as second:
        client.AppsV1Api(api).create_namespaced_deployment(namespace, body)
    assert refusal(second)[1]["message"].endswith(denied(namespace, "at most 5 replicas"))


def test_match_conditions_skip_a_policy_or_fail_on_error(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    conditions = [
        {"name": "not-exempt", "expression": "!('exempt' in object.metadata.labels)"},
    ]
    shared_kubectl(
        "apply",
        "-f",
        "-",
        input=policy(namespace, {"expression": "false"}, matchConditions=conditions),
    )
    exempt = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "exempt", "namespace": namespace, "labels": {"exempt": "sure"}},
    }

    shared_kubectl("create", "-f", "-", input=yaml.safe_dump(exempt))
    no_labels = shared_kubectl.fails("create", "configmap", "plain", "-n", namespace)
    exempt["metadata"] = {"name": "judged", "namespace": namespace, "labels": {"team": "a"}}
    judged = shared_kubectl.fails("create", "-f", "-", input=yaml.safe_dump(exempt))

    assert "resulted in error: no such key: labels" in one_line(no_labels.stderr)
    assert denied(namespace, "failed expression: false") in one_line(judged.stderr)


def test_policies_see_who_asks(shared_kubectl: Kubectl, namespace: str) -> None:
    shared_kubectl(
        "create", "rolebinding", "jane-edits", "--clusterrole=edit", "--user=jane", "-n", namespace
    )
    not_jane = {
        "expression": "request.userInfo.username != 'jane'",
        "messageExpression": "request.userInfo.username + ' of ' + "
        "request.userInfo.groups.filter(g, g.startsWith('team-')).join(',') + ' may not '"
        " + request.operation + ' ' + request.resource.resource + '/' + request.name",
    }
    shared_kubectl("apply", "-f", "-", input=policy(namespace, not_jane))

    done = shared_kubectl.fails(
        "--as=jane", "--as-group=team-shop", "create", "configmap", "x", "-n", namespace
    )
    shared_kubectl("create", "configmap", "x", "-n", namespace)  # the admin is not jane

    message = "jane of team-shop may not CREATE configmaps/x"
    assert denied(namespace, message) in one_line(done.stderr)


def test_policy_objects_are_checked_and_listed(
    shared_kubectl: Kubectl, namespace: str, api: client.ApiClient
) -> None:
    broken = definition_of(policy(namespace, {"expression": "object.spec.replicas <="}))
    syntax = shared_kubectl.fails("apply", "-f", "-", input=broken)
    config_maps = {"apiVersion": "v1", "kind": "ConfigMap"}
    with_params = definition_of(policy(namespace, AT_MOST_FIVE, paramKind=config_maps))
    params = shared_kubectl.fails("apply", "-f", "-", input=with_params)
    admissions = client.AdmissionregistrationV1Api(api)
    both = yaml.safe_load_all(policy(namespace, AT_MOST_FIVE, actions=("Deny", "Warn")))
    definition, binding = list(both)
    admissions.create_validating_admission_policy(definition)
    with pytest.raises(ApiException) as deny_and_warn:
        admissions.create_validating_admission_policy_binding(binding)

    assert "spec.validations[0].expression: Invalid value" in syntax.stderr
    assert "compilation failed: ERROR: <input>:1:24: Syntax error" in syntax.stderr
    assert "the kubecrew sandbox does not support policy parameters" in params.stderr
    status_code, status = refusal(deny_and_warn)
    assert status_code == 422 and "must not contain both Deny and Warn" in status["message"]
    stored = admissions.read_validating_admission_policy(namespace)
    assert stored.spec.failure_policy == "Fail"  # defaulted
    assert stored.spec.match_constraints.match_policy == "Equivalent"
    table = shared_kubectl("get", "validatingadmissionpolicy", namespace)
    assert table.split("\n")[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert table.split("\n")[1].split()[:3] == [namespace, "1", "<unset>"]
