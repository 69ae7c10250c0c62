"""The structural schemas and printer columns of the Cluster API kinds the sandbox serves.

In a management cluster these kinds are CustomResourceDefinitions, so the sandbox serves them the
way it serves CRDs (the registry marks them `custom`): writes are pruned of fields these schemas
do not name and checked against them, `kubectl get` prints the columns below (those of Cluster
API v1beta1), OpenAPI publishes the schemas, and strategic merge patch is refused as for any
custom resource. The schemas name every field the sandbox reads or writes, and a few more that
manifests written for a real Cluster API commonly carry (`bootstrap`, `failureDomain`,
`clusterNetwork`, `topology`, a KubeadmControlPlane's `machineTemplate` and `remediationStrategy`,
and its `kubeadmConfigSpec`, whose unknown fields are all preserved), kept as they are.
Descriptions are left out: `kubectl explain` shows the field names and types.

Plain data, built once at import; nothing here knows of the store or of HTTP.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

_STRING: Schema = {"type": "string"}
_INT: Schema = {"type": "integer", "format": "int32"}
_COUNT: Schema = {"type": "integer", "format": "int32", "minimum": 0}
_BOOL: Schema = {"type": "boolean"}
_TIME: Schema = {"type": "string", "format": "date-time"}
_STRINGS_MAP: Schema = {"type": "object", "additionalProperties": _STRING}
_ANYTHING: Schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_INT_OR_STRING: Schema = {
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}


def _object(properties: dict[str, Schema], *, required: tuple[str, ...] = ()) -> Schema:
    found: Schema = {"type": "object", "properties": properties}
    if required:
        found["required"] = list(required)
    return found


def _array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def _enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


_REFERENCE = _object(
    {
        key: _STRING
        for key in (
            "apiVersion",
            "kind",
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "fieldPath",
        )
    }
)
_SELECTOR = _object(
    {
        "matchLabels": _STRINGS_MAP,
        "matchExpressions": _array(
            _object(
                {"key": _STRING, "operator": _STRING, "values": _array(_STRING)},
                required=("key", "operator"),
            )
        ),
    }
)
_CONDITIONS = _array(
    _object(
        {
            "type": _STRING,
            "status": _STRING,
            "severity": _STRING,
            "reason": _STRING,
            "message": _STRING,
            "lastTransitionTime": _TIME,
        },
        required=("type", "status"),
    )
)
_FAILURE = {"failureReason": _STRING, "failureMessage": _STRING}
_TEMPLATE_METADATA = _object({"labels": _STRINGS_MAP, "annotations": _STRINGS_MAP})
_MACHINE_SPEC = _object(
    {
        "clusterName": {"type": "string", "minLength": 1},
        "version": _STRING,
        "infrastructureRef": _REFERENCE,
        "bootstrap": _object({"configRef": _REFERENCE, "dataSecretName": _STRING}),
        "providerID": _STRING,
        "failureDomain": _STRING,
        "nodeDrainTimeout": _STRING,
        "nodeDeletionTimeout": _STRING,
    },
    required=("clusterName", "infrastructureRef"),
)
_MACHINE_TEMPLATE = _object({"metadata": _TEMPLATE_METADATA, "spec": _MACHINE_SPEC})
_SET_COUNTS = {
    "replicas": _INT,
    "fullyLabeledReplicas": _INT,
    "readyReplicas": _INT,
    "availableReplicas": _INT,
    "observedGeneration": {"type": "integer", "format": "int64"},
    "selector": _STRING,
    "conditions": _CONDITIONS,
}


def _root(spec: Schema, status: Schema | None = None) -> Schema:
    properties: dict[str, Schema] = {
        "apiVersion": _STRING,
        "kind": _STRING,
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if status is not None:
        properties["status"] = status
    return _object(properties)


CLUSTER = _root(
    _object(
        {
            "paused": _BOOL,
            "clusterNetwork": _ANYTHING,
            "controlPlaneEndpoint": _object({"host": _STRING, "port": _INT}),
            "controlPlaneRef": _REFERENCE,
            "infrastructureRef": _REFERENCE,
            "topology": _ANYTHING,
        }
    ),
    _object(
        {
            "phase": _STRING,
            "infrastructureReady": _BOOL,
            "controlPlaneReady": _BOOL,
            "observedGeneration": {"type": "integer", "format": "int64"},
            "conditions": _CONDITIONS,
            **_FAILURE,
        }
    ),
)

MACHINE_DEPLOYMENT = _root(
    _object(
        {
            "clusterName": {"type": "string", "minLength": 1},
            "replicas": _COUNT,
            "selector": _SELECTOR,
            "template": _MACHINE_TEMPLATE,
            "strategy": _object(
                {
                    "type": _enum("RollingUpdate"),
                    "rollingUpdate": _object(
                        {
                            "maxSurge": _INT_OR_STRING,
                            "maxUnavailable": _INT_OR_STRING,
                            "deletePolicy": _enum("Random", "Newest", "Oldest"),
                        }
                    ),
                }
            ),
            "minReadySeconds": _COUNT,
            "revisionHistoryLimit": _COUNT,
            "progressDeadlineSeconds": _COUNT,
            "paused": _BOOL,
        },
        required=("clusterName", "selector", "template"),
    ),
    _object(
        {
            **_SET_COUNTS,
            "updatedReplicas": _INT,
            "unavailableReplicas": _INT,
            "phase": _STRING,
        }
    ),
)

MACHINE_SET = _root(
    _object(
        {
            "clusterName": {"type": "string", "minLength": 1},
            "replicas": _COUNT,
            "minReadySeconds": _COUNT,
            "deletePolicy": _enum("Random", "Newest", "Oldest"),
            "selector": _SELECTOR,
            "template": _MACHINE_TEMPLATE,
        },
        required=("clusterName", "selector", "template"),
    ),
    _object(_SET_COUNTS),
)

MACHINE = _root(
    _MACHINE_SPEC,
    _object(
        {
            "phase": _STRING,
            "nodeRef": _REFERENCE,
            "nodeInfo": _ANYTHING,
            "addresses": _array(_object({"type": _STRING, "address": _STRING})),
            "lastUpdated": _TIME,
            "bootstrapReady": _BOOL,
            "infrastructureReady": _BOOL,
            "observedGeneration": {"type": "integer", "format": "int64"},
            "conditions": _CONDITIONS,
            **_FAILURE,
        }
    ),
)

KUBEADM_CONTROL_PLANE = _root(
    _object(
        {
            "replicas": _INT,
            "version": _STRING,
            "machineTemplate": _object(
                {
                    "metadata": _TEMPLATE_METADATA,
                    "infrastructureRef": _REFERENCE,
                    "nodeDrainTimeout": _STRING,
                    "nodeVolumeDetachTimeout": _STRING,
                    "nodeDeletionTimeout": _STRING,
                }
            ),
            "kubeadmConfigSpec": _ANYTHING,
            "rolloutStrategy": _object(
                {
                    "type": _enum("RollingUpdate"),
                    "rollingUpdate": _object({"maxSurge": _INT_OR_STRING}),
                }
            ),
            "rolloutAfter": _TIME,
            "remediationStrategy": _ANYTHING,
        },
        required=("version",),
    ),
    _object(
        {
            "selector": _STRING,
            "replicas": _INT,
            "version": _STRING,
            "updatedReplicas": _INT,
            "readyReplicas": _INT,
            "unavailableReplicas": _INT,
            "initialized": _BOOL,
            "ready": _BOOL,
            "observedGeneration": {"type": "integer", "format": "int64"},
            "conditions": _CONDITIONS,
            **_FAILURE,
        }
    ),
)

_TAINT = _object(
    {
        "key": _STRING,
        "value": _STRING,
        "effect": _enum("NoSchedule", "PreferNoSchedule", "NoExecute"),
    },
    required=("key", "effect"),
)
SANDBOX_MACHINE_TEMPLATE = _root(
    _object(
        {
            "template": _object(
                {
                    "metadata": _TEMPLATE_METADATA,
                    "spec": _object(
                        {
                            "cpu": _INT_OR_STRING,
                            "memory": _INT_OR_STRING,
                            "gpus": _COUNT,
                            "kernelVersion": _STRING,
                            "osImage": _STRING,
                            "containerRuntimeVersion": _STRING,
                            "provisionSeconds": _COUNT,
                            "labels": _STRINGS_MAP,
                            "taints": _array(_TAINT),
                        }
                    ),
                },
                required=("spec",),
            )
        },
        required=("template",),
    )
)

SCHEMAS: dict[str, Schema] = {
    "Cluster": CLUSTER,
    "MachineDeployment": MACHINE_DEPLOYMENT,
    "MachineSet": MACHINE_SET,
    "Machine": MACHINE,
    "KubeadmControlPlane": KUBEADM_CONTROL_PLANE,
    "SandboxMachineTemplate": SANDBOX_MACHINE_TEMPLATE,
}


def _column(
    name: str, path: str, description: str, kind: str = "string", priority: int = 0
) -> Schema:
    found: Schema = {"name": name, "type": kind, "jsonPath": path, "description": description}
    if priority:
        found["priority"] = priority
    return found


_AGE = _column("Age", ".metadata.creationTimestamp", "Time duration since creation", "date")
_CLUSTER = _column("Cluster", ".spec.clusterName", "Cluster")

PRINTER_COLUMNS: dict[str, tuple[Schema, ...]] = {
    "Cluster": (
        _column("ClusterClass", ".spec.topology.class", "ClusterClass of this Cluster"),
        _column(
            "Phase", ".status.phase", "Cluster status such as Pending/Provisioning/Provisioned"
        ),
        _AGE,
        _column("Version", ".spec.topology.version", "Kubernetes version of this Cluster"),
    ),
    "MachineDeployment": (
        _CLUSTER,
        _column("Desired", ".spec.replicas", "Machines desired", "integer", priority=10),
        _column("Replicas", ".status.replicas", "Non-terminated machines", "integer"),
        _column("Ready", ".status.readyReplicas", "Machines whose node is Ready", "integer"),
        _column(
            "Updated", ".status.updatedReplicas", "Machines of the current template", "integer"
        ),
        _column("Unavailable", ".status.unavailableReplicas", "Machines unavailable", "integer"),
        _column("Phase", ".status.phase", "ScalingUp/ScalingDown/Running"),
        _AGE,
        _column("Version", ".spec.template.spec.version", "Kubernetes version of the machines"),
    ),
    "MachineSet": (
        _CLUSTER,
        _column("Desired", ".spec.replicas", "Machines desired", "integer", priority=10),
        _column("Replicas", ".status.replicas", "Non-terminated machines", "integer"),
        _column("Ready", ".status.readyReplicas", "Machines whose node is Ready", "integer"),
        _column("Available", ".status.availableReplicas", "Machines available", "integer"),
        _AGE,
        _column("Version", ".spec.template.spec.version", "Kubernetes version of the machines"),
    ),
    "Machine": (
        _CLUSTER,
        _column("NodeName", ".status.nodeRef.name", "Node name associated with this machine"),
        _column("ProviderID", ".spec.providerID", "Provider ID"),
        _column("Phase", ".status.phase", "Pending/Provisioning/Running/Deleting/Failed"),
        _AGE,
        _column("Version", ".spec.version", "Kubernetes version of this Machine"),
    ),
    "KubeadmControlPlane": (
        _column("Cluster", ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", "Cluster"),
        _column(
            "Initialized",
            ".status.initialized",
            "Whether the control plane has its kubeadm-config ConfigMap",
            "boolean",
        ),
        _column(
            "API Server Available",
            ".status.ready",
            "Whether the API server is ready to receive requests",
            "boolean",
        ),
        _column("Desired", ".spec.replicas", "Machines desired", "integer", priority=10),
        _column("Replicas", ".status.replicas", "Non-terminated machines", "integer"),
        _column("Ready", ".status.readyReplicas", "Machines fully running and ready", "integer"),
        _column("Updated", ".status.updatedReplicas", "Machines of the current spec", "integer"),
        _column("Unavailable", ".status.unavailableReplicas", "Machines unavailable", "integer"),
        _AGE,
        _column("Version", ".spec.version", "Kubernetes version of this control plane"),
    ),
    "SandboxMachineTemplate": (_AGE,),
}
