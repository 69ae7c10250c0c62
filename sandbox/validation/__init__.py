"""Validation of objects on every write, as the Kubernetes API server validates them.

`validate(rt, obj, old=...)` raises `sandbox.errors.Invalid` (422) whose causes name each bad
field in Kubernetes' own words, so kubectl prints what a real cluster would. It is a set of
cheap, hand-written rules per kind (precompiled regexes, no schema walking): schema and
unknown-field checks belong to strict field validation, defaulting and allocation to the
write path. Nothing here knows about HTTP or storage.

    objects.py       the entry point and the per-kind rule tables
    meta.py          metadata and label selectors, shared by every kind
    pods.py          pod specs and templates          workloads.py   apps and batch controllers
    services.py      Services                         config.py      ConfigMaps and Secrets
    cluster.py       Nodes, PVCs, Leases              availability.py  PDBs and HPAs
    rbac.py          roles and bindings               crds.py        CustomResourceDefinitions
    immutable.py     update-only rules
    names.py, quantity.py, cron.py   leaf format checks (names.py is shared with selectors)
    causes.py, payload.py            cause builders and safe reads of raw JSON
"""

from sandbox.validation.objects import problems, validate

__all__ = ["problems", "validate"]
