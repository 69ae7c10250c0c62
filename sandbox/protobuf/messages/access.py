"""Access-control messages: rbac/v1 roles and bindings, authentication/v1 TokenRequest and
SelfSubjectReview, authorization/v1 access and rules reviews.

Field numbers are facts from each group's k8s.io/api generated.proto; the spec syntax is
described in `sandbox.protobuf.layout`.
"""

from __future__ import annotations

from sandbox.protobuf.layout import Package

RBAC = Package(
    name="io.k8s.api.rbac.v1",
    alias="rbac",
    api_version="rbac.authorization.k8s.io/v1",
    kinds=("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"),
    messages={
        "Role": "1 metadata meta.ObjectMeta; 2 rules []PolicyRule!",
        "ClusterRole": (
            "1 metadata meta.ObjectMeta; 2 rules []PolicyRule!; 3 aggregationRule AggregationRule"
        ),
        "AggregationRule": "1 clusterRoleSelectors []meta.LabelSelector",
        "PolicyRule": (
            "1 verbs []!; 2 apiGroups []; 3 resources []; 4 resourceNames []; 5 nonResourceURLs []"
        ),
        "RoleBinding": "1 metadata meta.ObjectMeta; 2 subjects []Subject; 3 roleRef RoleRef",
        "ClusterRoleBinding": "1 metadata meta.ObjectMeta; 2 subjects []Subject; 3 roleRef RoleRef",
        "RoleRef": "1 apiGroup!; 2 kind!; 3 name!",
        "Subject": "1 kind!; 2 apiGroup; 3 name!; 4 namespace",
    },
)

AUTHENTICATION = Package(
    name="io.k8s.api.authentication.v1",
    alias="authentication",
    api_version="authentication.k8s.io/v1",
    kinds=("TokenRequest", "SelfSubjectReview"),
    messages={
        "TokenRequest": (
            "1 metadata meta.ObjectMeta; 2 spec TokenRequestSpec; 3 status TokenRequestStatus"
        ),
        "TokenRequestSpec": (
            "1 audiences []!; 4 expirationSeconds int!; 3 boundObjectRef BoundObjectReference"
        ),
        "BoundObjectReference": "1 kind; 2 apiVersion; 3 name; 4 uid",
        "TokenRequestStatus": "1 token!; 2 expirationTimestamp Time!",
        "SelfSubjectReview": "1 metadata meta.ObjectMeta; 2 status SelfSubjectReviewStatus",
        "SelfSubjectReviewStatus": "1 userInfo UserInfo",
        "UserInfo": "1 username; 2 uid; 3 groups []; 4 extra {Strings}",
    },
)

_ACCESS_REVIEWS = {
    "SelfSubjectAccessReview": (
        "1 metadata meta.ObjectMeta; 2 spec SelfSubjectAccessReviewSpec;"
        "3 status SubjectAccessReviewStatus"
    ),
    "SelfSubjectAccessReviewSpec": (
        "1 resourceAttributes ResourceAttributes; 2 nonResourceAttributes NonResourceAttributes"
    ),
    "SubjectAccessReview": (
        "1 metadata meta.ObjectMeta; 2 spec SubjectAccessReviewSpec;"
        "3 status SubjectAccessReviewStatus"
    ),
    "LocalSubjectAccessReview": (
        "1 metadata meta.ObjectMeta; 2 spec SubjectAccessReviewSpec;"
        "3 status SubjectAccessReviewStatus"
    ),
    "SubjectAccessReviewSpec": (
        "1 resourceAttributes ResourceAttributes; 2 nonResourceAttributes NonResourceAttributes;"
        "3 user; 4 groups []; 5 extra {Strings}; 6 uid"
    ),
    "ResourceAttributes": (
        "1 namespace; 2 verb; 3 group; 4 version; 5 resource; 6 subresource; 7 name;"
        "8 fieldSelector FieldSelectorAttributes; 9 labelSelector LabelSelectorAttributes"
    ),
    "FieldSelectorAttributes": "1 rawSelector; 2 requirements []meta.FieldSelectorRequirement",
    "LabelSelectorAttributes": ("1 rawSelector; 2 requirements []meta.LabelSelectorRequirement"),
    "NonResourceAttributes": "1 path; 2 verb",
    "SubjectAccessReviewStatus": "1 allowed bool!; 4 denied bool; 2 reason; 3 evaluationError",
}

_RULES_REVIEWS = {
    "SelfSubjectRulesReview": (
        "1 metadata meta.ObjectMeta; 2 spec SelfSubjectRulesReviewSpec;"
        "3 status SubjectRulesReviewStatus"
    ),
    "SelfSubjectRulesReviewSpec": "1 namespace",
    "SubjectRulesReviewStatus": (
        "1 resourceRules []ResourceRule!; 2 nonResourceRules []NonResourceRule!;"
        "3 incomplete bool!; 4 evaluationError"
    ),
    "ResourceRule": "1 verbs []!; 2 apiGroups []; 3 resources []; 4 resourceNames []",
    "NonResourceRule": "1 verbs []!; 2 nonResourceURLs []",
}

AUTHORIZATION = Package(
    name="io.k8s.api.authorization.v1",
    alias="authorization",
    api_version="authorization.k8s.io/v1",
    kinds=(
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
        "SubjectAccessReview",
        "LocalSubjectAccessReview",
    ),
    messages={**_ACCESS_REVIEWS, **_RULES_REVIEWS},
)
