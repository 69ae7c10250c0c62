"""The policy store's custom resource definitions: what `deploy/crds/policy-store.yaml` holds.

Five namespaced kinds in `kubecrew.io/v1alpha1`, each a thin envelope around the pydantic JSON
the SQLite store keeps (so both backends hold the same documents):

    Proposal         spec.proposal, spec.transcript, spec.decision; spec.version (the store's)
    ApprovalRequest  spec.request (the ApprovalRequest), spec.settled
    PolicyTarget     spec.key, spec.version, spec.proposal, spec.claim (a decision being written)
    AuditRecord      spec = the AuditRecord, named by its zero-padded seq
    AuditHead        `head`: spec.seq, spec.hash, spec.batches, spec.pending (records being added)

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


def _crd(kind: str, plural: str, short: list[str], columns: list[Column]) -> dict[str, Any]:
    spec_schema: dict[str, Any] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    properties = {
        path.removeprefix(".spec."): {"type": kind_}
        for _, kind_, path in columns
        if path.startswith(".spec.") and path.count(".") == 2
    }
    if properties:
        spec_schema["properties"] = properties
    printer = [{"name": name, "type": kind_, "jsonPath": path} for name, kind_, path in columns]
    printer.append({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
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
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec_schema},
                        }
                    },
                    "additionalPrinterColumns": printer,
                }
            ],
        },
    }


def definitions() -> list[dict[str, Any]]:
    """The CRDs, in the order they are applied."""
    return [
        _crd(
            "Proposal",
            "proposals",
            ["kcp"],
            [
                ("State", "string", ".spec.state"),
                ("Target", "string", ".spec.target"),
                ("Outcome", "string", ".spec.outcome"),
                ("Version", "integer", ".spec.version"),
            ],
        ),
        _crd(
            "ApprovalRequest",
            "approvalrequests",
            ["kca"],
            [
                ("State", "string", ".spec.state"),
                ("Proposal", "string", ".spec.proposal"),
                ("Claimed", "string", ".spec.request.claimed_by"),
            ],
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
