"""Judging one request against every bound policy: a refusal, or the warnings to send.

Each binding (in policy, then binding, name order) whose policy exists is tried: the policy's
`matchConstraints` and the binding's `matchResources` must both select the request; then the
policy's `matchConditions` (any false: the policy is skipped; an error: failurePolicy decides),
its `variables` (in order, each seeing the earlier ones as `variables.<name>`; one that fails is
an error only for the expressions that read it), and every validation. A validation whose value
is not true fails with its `messageExpression`'s string, else its `message`, else
`failed expression: <expression>`; one that cannot be evaluated fails with the error under
failurePolicy Fail and is ignored under Ignore.

Failures go where the binding's `validationActions` send them. Deny refuses the request with
the first one, worded as kube-apiserver words it (`jobs.batch "x" is forbidden:
ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`), with the HTTP code
of the validation's `reason` (403 Forbidden, 401 Unauthorized, 413 RequestEntityTooLarge, and
422 Invalid when none is given or the expression failed). Warn sends each as a warning header
(`Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': <message>`). Audit is
accepted and goes nowhere: the sandbox keeps no audit log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cel

from sandbox.admission_policies.checks import GROUP
from sandbox.admission_policies.expressions import Outcome, context, evaluate
from sandbox.admission_policies.matching import matches
from sandbox.admission_policies.request import NAMESPACES, AdmissionRequest
from sandbox.errors import (
    ApiError,
    Cause,
    Forbidden,
    Invalid,
    RequestEntityTooLarge,
    Unauthorized,
    qualified,
)
from sandbox.store import Obj, Store

POLICIES = (GROUP, "validatingadmissionpolicies")
BINDINGS = (GROUP, "validatingadmissionpolicybindings")
MAX_MESSAGE_BYTES = 5000  # a longer messageExpression result falls back to `message`
_REFUSALS: dict[str, type[ApiError]] = {
    "Forbidden": Forbidden,
    "Unauthorized": Unauthorized,
    "RequestEntityTooLarge": RequestEntityTooLarge,
}
_VARIABLE = re.compile(r"\bvariables\.([_a-zA-Z][_a-zA-Z0-9]*)")


@dataclass(frozen=True)
class Failure:
    policy: str
    binding: str
    message: str
    reason: str = ""  # the validation's reason; "" (Invalid) for an evaluation error

    def text(self) -> str:
        return (
            f"ValidatingAdmissionPolicy '{self.policy}' with binding '{self.binding}' denied "
            f"request: {self.message}"
        )


def judge(store: Store, request: AdmissionRequest) -> list[str]:
    """Raise the refusal of the first denying failure; otherwise return the warnings."""
    if request.rt.group == GROUP:
        return []  # policies never judge policies or bindings, so a bad one can be undone
    bindings = store.list(BINDINGS)
    if not bindings:
        return []
    namespace = _namespace(store, request)
    warnings: list[str] = []
    denied: Failure | None = None
    for binding in sorted(bindings, key=lambda b: (_policy_name(b), _name(b))):
        policy = store.get(POLICIES, "", _policy_name(binding))
        if policy is None:
            continue  # a binding to a missing policy is ignored, as in Kubernetes
        actions = _spec(binding).get("validationActions") or ()
        for failure in _failures(policy, binding, request, namespace):
            if "Deny" in actions and denied is None:
                denied = failure
            if "Warn" in actions:
                warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{failure.policy}' with "
                    f"binding '{failure.binding}': {failure.message}"
                )
    if denied is not None:
        raise _refusal(denied, request)
    return warnings


def _failures(
    policy: Obj, binding: Obj, request: AdmissionRequest, namespace: Obj | None
) -> list[Failure]:
    spec = _spec(policy)
    labels = _namespace_labels(request, namespace)
    if not matches(spec.get("matchConstraints"), request, namespace_labels=labels):
        return []
    if not matches(_spec(binding).get("matchResources"), request, namespace_labels=labels):
        return []
    names, fail = (_name(policy), _name(binding)), spec.get("failurePolicy") != "Ignore"
    activation = context(
        {
            "object": request.object,
            "oldObject": request.old_object,
            "request": request.cel(),
            "params": None,
            "namespaceObject": namespace if request.rt.namespaced else None,
        }
    )
    applies, errors = _conditions(spec, activation)
    if not applies:
        return []
    if errors:
        message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return [Failure(*names, message)] if fail else []
    broken = _variables(spec, activation)
    found: list[Failure] = []
    for validation in _entries(spec, "validations"):
        expression = str(validation.get("expression") or "")
        outcome = _run(expression, activation, broken)
        if outcome.error is not None:
            if fail:
                found.append(Failure(*names, outcome.error))
        elif outcome.value is not True:
            message = _message(validation, expression, activation, broken)
            found.append(Failure(*names, message, str(validation.get("reason") or "Invalid")))
    return found


def _conditions(spec: Mapping[str, Any], activation: cel.Context) -> tuple[bool, list[str]]:
    """(False, []) when a matchCondition is false; else (True, the errors met on the way)."""
    errors: list[str] = []
    for condition in _entries(spec, "matchConditions"):
        outcome = evaluate(str(condition.get("expression") or ""), activation)
        if outcome.error is None and outcome.value is False:
            return False, []
        if outcome.error is not None or outcome.value is not True:
            name = condition.get("name")
            errors.append(outcome.error or f"matchCondition '{name}' must evaluate to bool")
    return True, errors


def _variables(spec: Mapping[str, Any], activation: cel.Context) -> dict[str, str]:
    """Evaluate the variables into `variables`; returns why each failed one failed."""
    values: dict[str, Any] = {}
    broken: dict[str, str] = {}
    activation.add_variable("variables", values)
    for variable in _entries(spec, "variables"):
        name = str(variable.get("name") or "")
        outcome = _run(str(variable.get("expression") or ""), activation, broken)
        if outcome.error is not None:
            broken[name] = outcome.reason or outcome.error
        else:
            values[name] = outcome.value
            activation.add_variable("variables", values)
    return broken


def _run(expression: str, activation: cel.Context, broken: Mapping[str, str]) -> Outcome:
    """Evaluate, unless it reads a variable that failed: then that failure is its error."""
    for name in _VARIABLE.findall(expression):
        if name in broken:
            reason = f'composited variable "{name}" fails to evaluate: {broken[name]}'
            return Outcome(
                error=f"expression '{expression}' resulted in error: {reason}", reason=reason
            )
    return evaluate(expression, activation)


def _message(
    validation: Mapping[str, Any],
    expression: str,
    activation: cel.Context,
    broken: Mapping[str, str],
) -> str:
    message_expression = str(validation.get("messageExpression") or "")
    if message_expression:
        outcome = _run(message_expression, activation, broken)
        if outcome.error is None and isinstance(outcome.value, str):
            made = outcome.value.strip()
            if made and "\n" not in made and len(made.encode()) <= MAX_MESSAGE_BYTES:
                return made
    return (
        str(validation.get("message") or "").strip() or f"failed expression: {expression.strip()}"
    )


def _refusal(failure: Failure, request: AdmissionRequest) -> ApiError:
    resource, name = request.resource_name, request.name
    what = qualified(resource, request.rt.group)
    subject = f'{what} "{name}"' if name else what
    refusal = _REFUSALS.get(failure.reason, Invalid)
    return refusal(
        f"{subject} is forbidden: {failure.text()}",
        name=name,
        group=request.rt.group,
        kind=resource,
        causes=[Cause("", failure.text(), "")],
    )


def _namespace(store: Store, request: AdmissionRequest) -> Obj | None:
    if not request.rt.namespaced:
        return None
    return store.get(NAMESPACES, "", request.namespace)


def _namespace_labels(request: AdmissionRequest, namespace: Obj | None) -> Mapping[str, str] | None:
    """The labels a namespaceSelector reads; None for cluster-scoped objects but Namespaces."""
    if request.rt.key == NAMESPACES:
        namespace = request.object or request.old_object
    elif not request.rt.namespaced:
        return None
    labels = ((namespace or {}).get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _spec(obj: Obj) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _policy_name(binding: Obj) -> str:
    return str(_spec(binding).get("policyName") or "")


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _entries(spec: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    found = spec.get(key)
    return [e for e in found if isinstance(e, Mapping)] if isinstance(found, list) else []
