"""apimachinery's meta/v1 messages: ObjectMeta, selectors, DeleteOptions and friends.

Field numbers are facts from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto; the spec
syntax is described in `sandbox.protobuf.layout`. Every API group embeds these.
"""

from __future__ import annotations

from sandbox.protobuf.layout import Package

META = Package(
    name="io.k8s.apimachinery.pkg.apis.meta.v1",
    alias="meta",
    # client-go sends DeleteOptions under the apiVersion of whatever it deletes.
    kinds=("DeleteOptions",),
    messages={
        "ObjectMeta": (
            "1 name; 2 generateName; 3 namespace; 4 selfLink; 5 uid; 6 resourceVersion;"
            "7 generation int; 8 creationTimestamp Time; 9 deletionTimestamp Time;"
            "10 deletionGracePeriodSeconds int!; 11 labels {string}; 12 annotations {string};"
            "13 ownerReferences []OwnerReference; 14 finalizers [];"
            "17 managedFields []ManagedFieldsEntry"
        ),
        "OwnerReference": (
            "5 apiVersion!; 1 kind!; 3 name!; 4 uid!; 6 controller bool!;7 blockOwnerDeletion bool!"
        ),
        "ManagedFieldsEntry": (
            "1 manager; 2 operation; 3 apiVersion; 4 time Time; 6 fieldsType;"
            "7 fieldsV1 RawJSON; 8 subresource"
        ),
        "LabelSelector": "1 matchLabels {string}; 2 matchExpressions []LabelSelectorRequirement",
        "LabelSelectorRequirement": "1 key!; 2 operator!; 3 values []",
        "FieldSelectorRequirement": "1 key!; 2 operator!; 3 values []",
        "Condition": (
            "1 type!; 2 status!; 3 observedGeneration int; 4 lastTransitionTime Time!;"
            "5 reason!; 6 message!"
        ),
        "DeleteOptions": (
            "1 gracePeriodSeconds int!; 2 preconditions Preconditions; 3 orphanDependents bool!;"
            "4 propagationPolicy string!; 5 dryRun [];"
            "6 ignoreStoreReadErrorWithClusterBreakingPotential bool!"
        ),
        "Preconditions": "1 uid string!; 2 resourceVersion string!",
    },
)
