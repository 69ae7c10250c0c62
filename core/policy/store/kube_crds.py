"""The policy store's custom resource definitions: what `deploy/crds/policy-store.yaml` holds.

Five namespaced kinds in `kubecrew.io/v1alpha1`, each a thin envelope around the pydantic JSON
the SQLite store keeps (so both backends hold the same documents):

    Proposal         spec.proposal (as proposed), spec.target; status.proposal, .transcript,
                     .decision, .version (the store's), .used, .audit (entries owed)
    ApprovalRequest  spec.proposal; status.request (the ApprovalRequest), status.revision
    PolicyTarget     spec.key, spec.version, spec.proposal, spec.claim (a decision being written)
    AuditRecord      spec = the AuditRecord, named by its zero-padded seq
    AuditHead        `head`: spec.seq, spec.hash, spec.seal, spec.batches, spec.pending

Proposals and approval requests have a status subresource, and everything the store decides
lives in it: the API server drops a status sent with a create and ignores it in an update of
the object, so an identity that may create proposals (an agent) can neither create one decided
nor decide one, and RBAC gives `proposals/status` and `approvalrequests/status` to the store's
identity alone (deploy/rbac/policy-store.yaml).

The schemas are structural but declare only what printer columns and selectors read; the bodies
are kept whole with `x-kubernetes-preserve-unknown-fields`, because the pydantic models are the
schema of record and a second copy here would drift. The YAML file is rendered from `definitions`
(a test holds them equal), so the store can install the CRDs itself without reading a file.
"""

from __future__ import annotations

from typing import Any

GROUP = "kubecrew.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

Column = tuple[str, str, str]  # name, type, jsonPath


def _crd(
    kind: str, plural: str, short: list[str], columns: list[Column], *, status: bool = False
) -> dict[str, Any]:
    schema: dict[str, Any] = {"spec": _part(".spec.", columns)}
    if status:
        schema["status"] = _part(".status.", columns)
    printer = [{"name": name, "type": kind_, "jsonPath": path} for name, kind_, path in columns]
    printer.append({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
    version: dict[str, Any] = {
        "name": VERSION,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": schema}},
        "additionalPrinterColumns": printer,
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": short,
                "categories": ["kubecrew"],
            },
            "versions": [version],
        },
    }


def _part(prefix: str, columns: list[Column]) -> dict[str, Any]:
    """The schema of spec or status: kept whole, typing only the fields columns print."""
    part: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    properties = {
        path.removeprefix(prefix): {"type": kind_}
        for _, kind_, path in columns
        if path.startswith(prefix) and path.count(".") == 2
    }
    if properties:
        part["properties"] = properties
    return part


def definitions() -> list[dict[str, Any]]:
    """The CRDs, in the order they are applied."""
    return [
        _crd(
            "Proposal",
            "proposals",
            ["kcp"],
            [
                ("State", "string", ".status.state"),
                ("Target", "string", ".spec.target"),
                ("Outcome", "string", ".status.outcome"),
                ("Version", "integer", ".status.version"),
            ],
            status=True,
        ),
        _crd(
            "ApprovalRequest",
            "approvalrequests",
            ["kca"],
            [
                ("State", "string", ".status.state"),
                ("Proposal", "string", ".spec.proposal"),
                ("Claimed", "string", ".status.request.claimed_by"),
            ],
            status=True,
        ),
        _crd(
            "PolicyTarget",
            "policytargets",
            ["kct"],
            [
                ("Target", "string", ".spec.key"),
                ("Version", "integer", ".spec.version"),
                ("Proposal", "string", ".spec.proposal"),
            ],
        ),
        _crd(
            "AuditRecord",
            "auditrecords",
            ["kcr"],
            [
                ("Kind", "string", ".spec.kind"),
                ("Subject", "string", ".spec.subject"),
                ("Actor", "string", ".spec.actor"),
                ("Result", "string", ".spec.result"),
            ],
        ),
        _crd(
            "AuditHead",
            "auditheads",
            [],
            [("Seq", "integer", ".spec.seq"), ("Hash", "string", ".spec.hash")],
        ),
    ]


def plurals() -> list[str]:
    return [str(crd["spec"]["names"]["plural"]) for crd in definitions()]
