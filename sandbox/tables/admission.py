"""Rows for admission policies: ValidatingAdmissionPolicies and their bindings, as Kubernetes
prints them (parameters are never set in the sandbox, so those columns read `<unset>`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import UNSET, items, sub
from sandbox.tables.printer import AGE, NAME, Column, Printer, age_of, name_of

_GROUP = "admissionregistration.k8s.io"


def _policy(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    kind = sub(spec, "paramKind")
    param_kind = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if kind else UNSET
    return [name_of(obj), len(items(spec, "validations")), param_kind, age_of(obj, now)]


def _binding(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    ref = sub(spec, "paramRef")
    param_ref = "/".join(str(ref[k]) for k in ("namespace", "name") if ref.get(k)) or UNSET
    return [name_of(obj), str(spec.get("policyName", "")), param_ref, age_of(obj, now)]


PRINTERS: Mapping[tuple[str, str], Printer] = {
    (_GROUP, "ValidatingAdmissionPolicy"): Printer(
        (
            NAME,
            Column("Validations", "The number of validation rules the policy defines.", "integer"),
            Column("ParamKind", "The kind of resources that parameterize the policy."),
            AGE,
        ),
        _policy,
    ),
    (_GROUP, "ValidatingAdmissionPolicyBinding"): Printer(
        (
            NAME,
            Column("PolicyName", "The ValidatingAdmissionPolicy the binding binds."),
            Column("ParamRef", "The parameter resource the binding points at."),
            AGE,
        ),
        _binding,
    ),
}
