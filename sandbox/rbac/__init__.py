"""Role-based access control, enforced like a real API server's RBAC authorizer.

Each kubecrew agent runs with its own least-privilege ServiceAccount, and `kubectl auth can-i`
must answer truthfully, so the sandbox evaluates Roles, ClusterRoles, RoleBindings and
ClusterRoleBindings with Kubernetes' own semantics and words its 403s the same way.

    attributes   what a request asks for (`Attributes`), the `Decision`, the 403 wording
    rules        one compiled PolicyRule and how it matches
    aggregation  label selectors and aggregated ClusterRoles
    authorizer   `Authorizer`: bindings -> roles -> rules, for one request or for a rules review
    bootstrap    the default roles and bindings of a fresh cluster

Nothing here knows about HTTP or storage; objects are read through `sandbox.auth.ObjectReader`.
"""

from sandbox.rbac.aggregation import aggregated_rules, selector_matches
from sandbox.rbac.attributes import Attributes, Decision, forbidden, forbidden_message
from sandbox.rbac.authorizer import RBAC_GROUP, SYSTEM_MASTERS, Authorizer, VersionedReader
from sandbox.rbac.bootstrap import bootstrap_objects
from sandbox.rbac.rules import Rule

__all__ = [
    "RBAC_GROUP",
    "SYSTEM_MASTERS",
    "Attributes",
    "Authorizer",
    "Decision",
    "Rule",
    "VersionedReader",
    "aggregated_rules",
    "bootstrap_objects",
    "forbidden",
    "forbidden_message",
    "selector_matches",
]
