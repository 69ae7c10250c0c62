"""Workload messages: apps/v1 Deployment, batch/v1 Job and CronJob, policy/v1, autoscaling/v2
HorizontalPodAutoscaler (what `kubectl autoscale` sends in 1.37) and scheduling/v1.

Field numbers are facts from each group's k8s.io/api generated.proto; the spec syntax is
described in `sandbox.protobuf.layout`. Pod templates come from the core tables.
"""

from __future__ import annotations

from sandbox.protobuf.layout import Package

APPS = Package(
    name="io.k8s.api.apps.v1",
    alias="apps",
    api_version="apps/v1",
    kinds=("Deployment",),
    messages={
        "Deployment": (
            "1 metadata meta.ObjectMeta; 2 spec DeploymentSpec; 3 status DeploymentStatus"
        ),
        "DeploymentSpec": (
            "1 replicas int!; 2 selector meta.LabelSelector; 3 template core.PodTemplateSpec;"
            "4 strategy DeploymentStrategy; 5 minReadySeconds int; 6 revisionHistoryLimit int!;"
            "7 paused bool; 9 progressDeadlineSeconds int!"
        ),
        "DeploymentStrategy": "1 type; 2 rollingUpdate RollingUpdateDeployment",
        "RollingUpdateDeployment": "1 maxUnavailable IntOrString; 2 maxSurge IntOrString",
        "DeploymentStatus": (
            "1 observedGeneration int; 2 replicas int; 3 updatedReplicas int;"
            "7 readyReplicas int; 4 availableReplicas int; 5 unavailableReplicas int;"
            "9 terminatingReplicas int!; 6 conditions []DeploymentCondition;"
            "8 collisionCount int!"
        ),
        "DeploymentCondition": (
            "1 type!; 2 status!; 6 lastUpdateTime Time; 7 lastTransitionTime Time; 4 reason;"
            "5 message"
        ),
    },
)

BATCH = Package(
    name="io.k8s.api.batch.v1",
    alias="batch",
    api_version="batch/v1",
    kinds=("Job", "CronJob"),
    messages={
        "Job": "1 metadata meta.ObjectMeta; 2 spec JobSpec; 3 status JobStatus",
        "JobSpec": (
            "1 parallelism int!; 2 completions int!; 3 activeDeadlineSeconds int!;"
            "11 podFailurePolicy PodFailurePolicy; 16 successPolicy SuccessPolicy;"
            "7 backoffLimit int!; 12 backoffLimitPerIndex int!; 13 maxFailedIndexes int!;"
            "4 selector meta.LabelSelector; 5 manualSelector bool!;"
            "6 template core.PodTemplateSpec; 8 ttlSecondsAfterFinished int!;"
            "9 completionMode string!; 10 suspend bool!; 14 podReplacementPolicy string!;"
            "15 managedBy string!"
        ),
        "PodFailurePolicy": "1 rules []PodFailurePolicyRule!",
        "PodFailurePolicyRule": (
            "1 action!; 2 onExitCodes PodFailurePolicyOnExitCodesRequirement;"
            "3 onPodConditions []PodFailurePolicyOnPodConditionsPattern"
        ),
        "PodFailurePolicyOnExitCodesRequirement": (
            "1 containerName string!; 2 operator!; 3 values []int!"
        ),
        "PodFailurePolicyOnPodConditionsPattern": "1 type!; 2 status",
        "SuccessPolicy": "1 rules []SuccessPolicyRule!",
        "SuccessPolicyRule": "1 succeededIndexes string!; 2 succeededCount int!",
        "JobStatus": (
            "1 conditions []JobCondition; 2 startTime Time; 3 completionTime Time; 4 active int;"
            "5 succeeded int; 6 failed int; 11 terminating int!; 7 completedIndexes;"
            "10 failedIndexes string!; 8 uncountedTerminatedPods UncountedTerminatedPods;"
            "9 ready int!"
        ),
        "JobCondition": (
            "1 type!; 2 status!; 3 lastProbeTime Time; 4 lastTransitionTime Time; 5 reason;"
            "6 message"
        ),
        "UncountedTerminatedPods": "1 succeeded []; 2 failed []",
        "CronJob": "1 metadata meta.ObjectMeta; 2 spec CronJobSpec; 3 status CronJobStatus",
        "CronJobSpec": (
            "1 schedule!; 8 timeZone string!; 2 startingDeadlineSeconds int!;"
            "3 concurrencyPolicy; 4 suspend bool!; 5 jobTemplate JobTemplateSpec;"
            "6 successfulJobsHistoryLimit int!; 7 failedJobsHistoryLimit int!"
        ),
        "JobTemplateSpec": "1 metadata meta.ObjectMeta; 2 spec JobSpec",
        "CronJobStatus": (
            "1 active []core.ObjectReference; 4 lastScheduleTime Time; 5 lastSuccessfulTime Time"
        ),
    },
)

POLICY = Package(
    name="io.k8s.api.policy.v1",
    alias="policy",
    api_version="policy/v1",
    kinds=("PodDisruptionBudget", "Eviction"),
    messages={
        "PodDisruptionBudget": (
            "1 metadata meta.ObjectMeta; 2 spec PodDisruptionBudgetSpec;"
            "3 status PodDisruptionBudgetStatus"
        ),
        "PodDisruptionBudgetSpec": (
            "1 minAvailable IntOrString; 2 selector meta.LabelSelector;"
            "3 maxUnavailable IntOrString; 4 unhealthyPodEvictionPolicy string!"
        ),
        "PodDisruptionBudgetStatus": (
            "1 observedGeneration int; 2 disruptedPods {Time}; 3 disruptionsAllowed int!;"
            "4 currentHealthy int!; 5 desiredHealthy int!; 6 expectedPods int!;"
            "7 conditions []meta.Condition"
        ),
        "Eviction": "1 metadata meta.ObjectMeta; 2 deleteOptions meta.DeleteOptions",
    },
)

_HPA_SPEC = {
    "HorizontalPodAutoscaler": (
        "1 metadata meta.ObjectMeta; 2 spec HorizontalPodAutoscalerSpec;"
        "3 status HorizontalPodAutoscalerStatus"
    ),
    "HorizontalPodAutoscalerSpec": (
        "1 scaleTargetRef CrossVersionObjectReference; 2 minReplicas int!; 3 maxReplicas int!;"
        "4 metrics []MetricSpec; 5 behavior HorizontalPodAutoscalerBehavior"
    ),
    "CrossVersionObjectReference": "1 kind!; 2 name!; 3 apiVersion",
    "MetricSpec": (
        "1 type!; 2 object ObjectMetricSource; 3 pods PodsMetricSource;"
        "4 resource ResourceMetricSource; 7 containerResource ContainerResourceMetricSource;"
        "5 external ExternalMetricSource"
    ),
    "ObjectMetricSource": (
        "1 describedObject CrossVersionObjectReference; 2 target MetricTarget;"
        "3 metric MetricIdentifier"
    ),
    "PodsMetricSource": "1 metric MetricIdentifier; 2 target MetricTarget",
    "ResourceMetricSource": "1 name!; 2 target MetricTarget",
    "ContainerResourceMetricSource": "1 name!; 2 target MetricTarget; 3 container!",
    "ExternalMetricSource": "1 metric MetricIdentifier; 2 target MetricTarget",
    "MetricIdentifier": "1 name!; 2 selector meta.LabelSelector",
    "MetricTarget": (
        "1 type!; 2 value Quantity; 3 averageValue Quantity; 4 averageUtilization int!"
    ),
    "HorizontalPodAutoscalerBehavior": "1 scaleUp HPAScalingRules; 2 scaleDown HPAScalingRules",
    "HPAScalingRules": (
        "3 stabilizationWindowSeconds int!; 1 selectPolicy string!;"
        "2 policies []HPAScalingPolicy; 4 tolerance Quantity"
    ),
    "HPAScalingPolicy": "1 type!; 2 value int!; 3 periodSeconds int!",
}

_HPA_STATUS = {
    "HorizontalPodAutoscalerStatus": (
        "1 observedGeneration int!; 2 lastScaleTime Time; 3 currentReplicas int;"
        "4 desiredReplicas int!; 5 currentMetrics []MetricStatus!;"
        "6 conditions []HorizontalPodAutoscalerCondition"
    ),
    "HorizontalPodAutoscalerCondition": (
        "1 type!; 2 status!; 3 lastTransitionTime Time; 4 reason; 5 message"
    ),
    "MetricStatus": (
        "1 type!; 2 object ObjectMetricStatus; 3 pods PodsMetricStatus;"
        "4 resource ResourceMetricStatus; 7 containerResource ContainerResourceMetricStatus;"
        "5 external ExternalMetricStatus"
    ),
    "ObjectMetricStatus": (
        "1 metric MetricIdentifier; 2 current MetricValueStatus;"
        "3 describedObject CrossVersionObjectReference"
    ),
    "PodsMetricStatus": "1 metric MetricIdentifier; 2 current MetricValueStatus",
    "ResourceMetricStatus": "1 name!; 2 current MetricValueStatus",
    "ContainerResourceMetricStatus": "1 name!; 2 current MetricValueStatus; 3 container!",
    "ExternalMetricStatus": "1 metric MetricIdentifier; 2 current MetricValueStatus",
    "MetricValueStatus": "1 value Quantity; 2 averageValue Quantity; 3 averageUtilization int!",
}

AUTOSCALING = Package(
    name="io.k8s.api.autoscaling.v2",
    alias="autoscaling",
    api_version="autoscaling/v2",
    kinds=("HorizontalPodAutoscaler",),
    messages={**_HPA_SPEC, **_HPA_STATUS},
)

SCHEDULING = Package(
    name="io.k8s.api.scheduling.v1",
    alias="scheduling",
    api_version="scheduling.k8s.io/v1",
    kinds=("PriorityClass",),
    messages={
        "PriorityClass": (
            "1 metadata meta.ObjectMeta; 2 value int!; 3 globalDefault bool; 4 description;"
            "5 preemptionPolicy string!"
        ),
    },
)
