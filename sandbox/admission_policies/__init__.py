"""ValidatingAdmissionPolicy: CEL rules that refuse or warn about requests, as kube-apiserver has.

`admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
are served like every built-in (discovery, OpenAPI, kubectl apply/get) and enforced on every
client's create, update (patches and server-side apply included) and delete, the admin's too:
after defaulting, mutation and validation, before the store, dry runs included. The identity is
the authenticated (or impersonated) user of the request, carried in `WriteOptions.user` /
`DeleteOptions.user`.

Supported, with Kubernetes' semantics: `spec.matchConstraints` and a binding's
`spec.matchResources` (resourceRules and excludeResourceRules with apiGroups, apiVersions,
resources and subresources, operations, "*", resourceNames and scope; namespaceSelector;
objectSelector; matchPolicy), `matchConditions`, `variables`, `validations` (expression,
message, messageExpression, reason), `failurePolicy` Fail/Ignore, and `validationActions`
Deny/Warn/Audit. CEL sees `object`, `oldObject`, `request` (userInfo, name, namespace,
operation, kind, resource, subResource, dryRun, options), `namespaceObject`, `variables` and
`params` (always null).

Not supported, said where it would matter: parameters (a policy with `paramKind` or a binding
with `paramRef` is refused with a 422 that says so: nothing is stored that would silently not
be enforced); `auditAnnotations` and the Audit action record nothing (there is no audit log);
the `authorizer` variable and Kubernetes' own CEL libraries are absent (see `expressions`); no
status (type checking) is written on policies. Where the sandbox differs from a cluster:

- Its own control plane (controllers, kubelet, garbage collector, namespace cleanup) writes
  without a request, so policies do not judge those writes. On a cluster they are judged as
  `system:serviceaccount:kube-system:*` or `system:node:*` identities, which crew-identity
  policies like kubecrew's let through anyway.
- The create-only subresources (pods/eviction, pods/binding, serviceaccounts/token) are not
  judged, and namespaces/finalize is judged as an update of the Namespace.

    request.py      what a policy sees of one request; CEL's `request`
    matching.py     which requests a policy or binding selects
    expressions.py  CEL: compile, evaluate, errors worded as Kubernetes words them
    checks.py       defaults and API validation of the two kinds
    dispatch.py     bindings x policies -> a refusal or warnings
"""

from __future__ import annotations

from sandbox.admission_policies import checks, dispatch
from sandbox.admission_policies.request import AdmissionRequest, Operation
from sandbox.objects import Objects, WriteOptions
from sandbox.registry import ResourceType
from sandbox.store import Obj
from sandbox.subresources import scale_of

__all__ = ["AdmissionRequest", "install"]

_SCALE = ("autoscaling", "v1", "Scale")


def install(objects: Objects) -> None:
    objects.admit.append(checks.admit)
    objects.validating.append(judge)


def judge(
    objects: Objects, rt: ResourceType, new: Obj | None, old: Obj | None, opts: WriteOptions
) -> None:
    """The validating hook: refuse (raise) or add warnings to `opts.warnings`."""
    assert opts.user is not None, "only clients' requests are judged"
    operation: Operation = "DELETE" if new is None else "CREATE" if old is None else "UPDATE"
    kind = ("", "", "")
    if opts.subresource == "scale":  # policies see the Scale a client sent, as on a cluster
        new, old, kind = (scale_of(new) if new else None), (scale_of(old) if old else None), _SCALE
    request = AdmissionRequest(
        operation,
        rt,
        new,
        old,
        opts.user,
        subresource=opts.subresource,
        dry_run=opts.dry_run,
        kind=kind,
    )
    opts.warnings.extend(dispatch.judge(objects.store, request))
