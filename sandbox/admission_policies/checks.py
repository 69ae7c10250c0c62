"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding on write: defaults, then checks.

Defaults are Kubernetes' (failurePolicy Fail; matchPolicy Equivalent, empty selectors and scope
"*" in every MatchResources). The checks are the API server's that matter for a policy to run:
required fields, the enumerations, unique names, and every CEL expression compiled, so a typo
is a 422 when the policy is applied (`spec.validations[0].expression: Invalid value: ...:
compilation failed: ...`), not a surprise at the first request it judges.

Parameters are not supported: a policy with `spec.paramKind` or a binding with `spec.paramRef`
is refused here, with a message saying so, rather than stored and silently never enforced.
`auditAnnotations` are accepted (and compiled) but never evaluated: the sandbox keeps no audit
log.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

from sandbox.admission_policies.expressions import CompileError, compiled
from sandbox.errors import Cause, invalid
from sandbox.objects import Objects
from sandbox.registry import ResourceType
from sandbox.store import Obj
from sandbox.validation import causes, names
from sandbox.validation.payload import items, mapping, strings, text

GROUP = "admissionregistration.k8s.io"
POLICY = "ValidatingAdmissionPolicy"
BINDING = "ValidatingAdmissionPolicyBinding"
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized")
ACTIONS = ("Audit", "Deny", "Warn")
_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_NO_PARAMS = (
    "the kubecrew sandbox does not support policy parameters; write the values into the "
    "policy's expressions instead"
)


def admit(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    """The admission hook: defaulted, or a 422 listing every problem."""
    if rt.group != GROUP or rt.kind not in (POLICY, BINDING):
        return obj
    obj = copy.deepcopy(obj)
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return obj  # field validation reports the type
    if rt.kind == POLICY:
        spec.setdefault("failurePolicy", "Fail")
        _default_match(spec.get("matchConstraints"))
        found = _policy(spec)
    else:
        _default_match(spec.get("matchResources"))
        found = _binding(spec)
    if found:
        raise invalid(rt.kind, rt.group, text(mapping(obj, "metadata"), "name"), found)
    return obj


def _default_match(match: Any) -> None:
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def _policy(spec: Mapping[str, Any]) -> list[Cause]:
    found: list[Cause] = []
    if spec.get("paramKind") is not None:
        found.append(causes.forbidden("spec.paramKind", _NO_PARAMS))
    failure = spec.get("failurePolicy")
    if failure not in ("Fail", "Ignore"):
        found.append(causes.not_supported("spec.failurePolicy", failure, ("Fail", "Ignore")))
    if not isinstance(spec.get("matchConstraints"), Mapping):
        found.append(causes.required("spec.matchConstraints"))
    else:
        found += _match(mapping(spec, "matchConstraints"), "spec.matchConstraints", policy=True)
    if not items(spec, "validations") and not items(spec, "auditAnnotations"):
        found.append(
            causes.required(
                "spec.validations",
                "validations or auditAnnotations must contain at least one item",
            )
        )
    for i, validation in enumerate(items(spec, "validations")):
        found += _validation(validation, f"spec.validations[{i}]")
    for i, annotation in enumerate(items(spec, "auditAnnotations")):
        found += _expression(
            annotation, "valueExpression", f"spec.auditAnnotations[{i}]", required=True
        )
    found += _named(spec, "matchConditions", name_check=names.qualified_name)
    found += _named(spec, "variables", name_check=_identifier)
    return found


def _validation(validation: Mapping[str, Any], path: str) -> list[Cause]:
    found = _expression(validation, "expression", path, required=True)
    found += _expression(validation, "messageExpression", path, required=False)
    message = text(validation, "message")
    if "\n" in message:
        found.append(
            causes.invalid(f"{path}.message", message, "message must not contain line breaks")
        )
    reason = validation.get("reason")
    if reason is not None and reason not in REASONS:
        found.append(causes.not_supported(f"{path}.reason", reason, REASONS))
    return found


def _binding(spec: Mapping[str, Any]) -> list[Cause]:
    found: list[Cause] = []
    if spec.get("paramRef") is not None:
        found.append(causes.forbidden("spec.paramRef", _NO_PARAMS))
    if not text(spec, "policyName"):
        found.append(causes.required("spec.policyName"))
    actions = strings(spec, "validationActions")
    if not actions:
        found.append(
            causes.required("spec.validationActions", "at least one validation action is required")
        )
    for i, action in enumerate(actions):
        path = f"spec.validationActions[{i}]"
        if action not in ACTIONS:
            found.append(causes.not_supported(path, action, ACTIONS))
        elif action in actions[:i]:
            found.append(causes.duplicate(path, action))
    if "Deny" in actions and "Warn" in actions:
        found.append(
            causes.invalid(
                "spec.validationActions",
                actions,
                "must not contain both Deny and Warn (repeating the same validation failure "
                "information in the API response and headers serves no purpose)",
            )
        )
    if isinstance(spec.get("matchResources"), Mapping):
        found += _match(mapping(spec, "matchResources"), "spec.matchResources", policy=False)
    return found


def _match(match: Mapping[str, Any], path: str, *, policy: bool) -> list[Cause]:
    found: list[Cause] = []
    if policy and not items(match, "resourceRules"):
        found.append(causes.required(f"{path}.resourceRules"))
    policy_value = match.get("matchPolicy")
    if policy_value not in ("Exact", "Equivalent"):
        found.append(
            causes.not_supported(f"{path}.matchPolicy", policy_value, ("Equivalent", "Exact"))
        )
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(items(match, key)):
            found += _rule(rule, f"{path}.{key}[{i}]")
    return found


def _rule(rule: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    for key in ("operations", "apiGroups", "apiVersions", "resources"):
        values = strings(rule, key)
        if not values:
            found.append(causes.required(f"{path}.{key}"))
        elif "*" in values and len(values) > 1:
            found.append(
                causes.invalid(
                    f"{path}.{key}", values, "if '*' is present, must not specify other values"
                )
            )
    for i, operation in enumerate(strings(rule, "operations")):
        if operation not in OPERATIONS:
            found.append(causes.not_supported(f"{path}.operations[{i}]", operation, OPERATIONS))
    scope = rule.get("scope")
    if scope not in ("*", "Cluster", "Namespaced"):
        found.append(causes.not_supported(f"{path}.scope", scope, ("*", "Cluster", "Namespaced")))
    return found


def _named(
    spec: Mapping[str, Any], key: str, *, name_check: Callable[[str], list[str]]
) -> list[Cause]:
    found: list[Cause] = []
    seen: set[str] = set()
    for i, entry in enumerate(items(spec, key)):
        path = f"spec.{key}[{i}]"
        name = text(entry, "name")
        if not name:
            found.append(causes.required(f"{path}.name"))
        elif name in seen:
            found.append(causes.duplicate(f"{path}.name", name))
        else:
            found += [causes.invalid(f"{path}.name", name, detail) for detail in name_check(name)]
        seen.add(name)
        found += _expression(entry, "expression", path, required=True)
    return found


def _identifier(name: str) -> list[str]:
    if _IDENTIFIER.match(name):
        return []
    return ["name is not a valid CEL identifier"]


def _expression(entry: Mapping[str, Any], key: str, path: str, *, required: bool) -> list[Cause]:
    expression = text(entry, key)
    if not expression.strip():
        return [causes.required(f"{path}.{key}")] if required else []
    try:
        compiled(expression)
    except CompileError as exc:
        return [causes.invalid(f"{path}.{key}", expression, str(exc))]
    return []
