"""core/v1 messages: the kinds kubectl creates in the core group, and the whole pod template.

Field numbers are facts from k8s.io/api/core/v1/generated.proto; the spec syntax is described
in `sandbox.protobuf.layout`. Deprecated in-tree volume plugins (cloud disks, gluster, ceph...)
are left out: their fields are skipped like any unknown field.
"""

from __future__ import annotations

from sandbox.protobuf.layout import Package

_OBJECT_KINDS = {
    "Namespace": "1 metadata meta.ObjectMeta; 2 spec NamespaceSpec; 3 status NamespaceStatus",
    "NamespaceSpec": "1 finalizers []",
    "NamespaceStatus": "1 phase; 2 conditions []NamespaceCondition",
    "NamespaceCondition": "1 type!; 2 status!; 4 lastTransitionTime Time; 5 reason; 6 message",
    "ConfigMap": (
        "1 metadata meta.ObjectMeta; 4 immutable bool!; 2 data {string}; 3 binaryData {bytes}"
    ),
    "Secret": (
        "1 metadata meta.ObjectMeta; 5 immutable bool!; 2 data {bytes}; 4 stringData {string};"
        "3 type"
    ),
    "ServiceAccount": (
        "1 metadata meta.ObjectMeta; 2 secrets []ObjectReference;"
        "3 imagePullSecrets []LocalObjectReference; 4 automountServiceAccountToken bool!"
    ),
    "ObjectReference": (
        "1 kind; 2 namespace; 3 name; 4 uid; 5 apiVersion; 6 resourceVersion; 7 fieldPath"
    ),
    "LocalObjectReference": "1 name",
    "TypedLocalObjectReference": "1 apiGroup string!; 2 kind!; 3 name!",
    "TypedObjectReference": "1 apiGroup string!; 2 kind!; 3 name!; 4 namespace string!",
    "ResourceQuota": (
        "1 metadata meta.ObjectMeta; 2 spec ResourceQuotaSpec; 3 status ResourceQuotaStatus"
    ),
    "ResourceQuotaSpec": "1 hard {Quantity}; 2 scopes []; 3 scopeSelector ScopeSelector",
    "ResourceQuotaStatus": "1 hard {Quantity}; 2 used {Quantity}",
    "ScopeSelector": "1 matchExpressions []ScopedResourceSelectorRequirement",
    "ScopedResourceSelectorRequirement": "1 scopeName!; 2 operator!; 3 values []",
}

_SERVICE = {
    "Service": "1 metadata meta.ObjectMeta; 2 spec ServiceSpec; 3 status ServiceStatus",
    "ServiceSpec": (
        "1 ports []ServicePort; 2 selector {string}; 3 clusterIP; 18 clusterIPs []; 4 type;"
        "5 externalIPs []; 7 sessionAffinity; 8 loadBalancerIP; 9 loadBalancerSourceRanges [];"
        "10 externalName; 11 externalTrafficPolicy; 12 healthCheckNodePort int;"
        "13 publishNotReadyAddresses bool; 14 sessionAffinityConfig SessionAffinityConfig;"
        "19 ipFamilies []; 17 ipFamilyPolicy string!; 20 allocateLoadBalancerNodePorts bool!;"
        "21 loadBalancerClass string!; 22 internalTrafficPolicy string!;"
        "23 trafficDistribution string!"
    ),
    "ServicePort": (
        "1 name; 2 protocol; 6 appProtocol string!; 3 port int!; 4 targetPort IntOrString;"
        "5 nodePort int"
    ),
    "SessionAffinityConfig": "1 clientIP ClientIPConfig",
    "ClientIPConfig": "1 timeoutSeconds int!",
    "ServiceStatus": "1 loadBalancer LoadBalancerStatus; 2 conditions []meta.Condition",
    "LoadBalancerStatus": "1 ingress []LoadBalancerIngress",
    "LoadBalancerIngress": "1 ip; 2 hostname; 3 ipMode string!; 4 ports []PortStatus",
    "PortStatus": "1 port int!; 2 protocol!; 3 error string!",
}

_POD = {
    "PodTemplateSpec": "1 metadata meta.ObjectMeta; 2 spec PodSpec",
    "PodSpec": (
        "1 volumes []Volume; 20 initContainers []Container; 2 containers []Container!;"
        "34 ephemeralContainers []EphemeralContainer; 3 restartPolicy;"
        "4 terminationGracePeriodSeconds int!; 5 activeDeadlineSeconds int!; 6 dnsPolicy;"
        "7 nodeSelector {string}; 8 serviceAccountName; 9 serviceAccount;"
        "21 automountServiceAccountToken bool!; 10 nodeName; 11 hostNetwork bool;"
        "12 hostPID bool; 13 hostIPC bool; 27 shareProcessNamespace bool!;"
        "14 securityContext PodSecurityContext; 15 imagePullSecrets []LocalObjectReference;"
        "16 hostname; 17 subdomain; 18 affinity Affinity; 19 schedulerName;"
        "22 tolerations []Toleration; 23 hostAliases []HostAlias; 24 priorityClassName;"
        "25 priority int!; 26 dnsConfig PodDNSConfig; 28 readinessGates []PodReadinessGate;"
        "29 runtimeClassName string!; 30 enableServiceLinks bool!; 31 preemptionPolicy string!;"
        "32 overhead {Quantity}; 33 topologySpreadConstraints []TopologySpreadConstraint;"
        "35 setHostnameAsFQDN bool!; 36 os PodOS; 37 hostUsers bool!;"
        "38 schedulingGates []PodSchedulingGate; 39 resourceClaims []PodResourceClaim;"
        "40 resources ResourceRequirements; 41 hostnameOverride string!"
    ),
    "PodSecurityContext": (
        "1 seLinuxOptions SELinuxOptions; 8 windowsOptions WindowsSecurityContextOptions;"
        "2 runAsUser int!; 6 runAsGroup int!; 3 runAsNonRoot bool!; 4 supplementalGroups []int;"
        "12 supplementalGroupsPolicy string!; 5 fsGroup int!; 7 sysctls []Sysctl;"
        "9 fsGroupChangePolicy string!; 10 seccompProfile SeccompProfile;"
        "11 appArmorProfile AppArmorProfile; 13 seLinuxChangePolicy string!"
    ),
    "Sysctl": "1 name!; 2 value!",
    "Toleration": "1 key; 2 operator; 3 value; 4 effect; 5 tolerationSeconds int!",
    "HostAlias": "1 ip!; 2 hostnames []",
    "PodDNSConfig": "1 nameservers []; 2 searches []; 3 options []PodDNSConfigOption",
    "PodDNSConfigOption": "1 name; 2 value string!",
    "PodReadinessGate": "1 conditionType!",
    "PodOS": "1 name!",
    "PodSchedulingGate": "1 name!",
    "PodResourceClaim": (
        "1 name!; 3 resourceClaimName string!; 4 resourceClaimTemplateName string!"
    ),
    "TopologySpreadConstraint": (
        "1 maxSkew int!; 2 topologyKey!; 3 whenUnsatisfiable!; 4 labelSelector meta.LabelSelector;"
        "5 minDomains int!; 6 nodeAffinityPolicy string!; 7 nodeTaintsPolicy string!;"
        "8 matchLabelKeys []"
    ),
}

_AFFINITY = {
    "Affinity": (
        "1 nodeAffinity NodeAffinity; 2 podAffinity PodAffinity; 3 podAntiAffinity PodAntiAffinity"
    ),
    "NodeAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector;"
        "2 preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm"
    ),
    "NodeSelector": "1 nodeSelectorTerms []NodeSelectorTerm!",
    "NodeSelectorTerm": (
        "1 matchExpressions []NodeSelectorRequirement; 2 matchFields []NodeSelectorRequirement"
    ),
    "NodeSelectorRequirement": "1 key!; 2 operator!; 3 values []",
    "PreferredSchedulingTerm": "1 weight int!; 2 preference NodeSelectorTerm",
    "PodAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm;"
        "2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm"
    ),
    "PodAntiAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm;"
        "2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm"
    ),
    "PodAffinityTerm": (
        "1 labelSelector meta.LabelSelector; 2 namespaces []; 3 topologyKey!;"
        "4 namespaceSelector meta.LabelSelector; 5 matchLabelKeys []; 6 mismatchLabelKeys []"
    ),
    "WeightedPodAffinityTerm": "1 weight int!; 2 podAffinityTerm PodAffinityTerm",
}

_CONTAINER = {
    "Container": (
        "1 name!; 2 image; 3 command []; 4 args []; 5 workingDir; 6 ports []ContainerPort;"
        "19 envFrom []EnvFromSource; 7 env []EnvVar; 8 resources ResourceRequirements;"
        "23 resizePolicy []ContainerResizePolicy; 24 restartPolicy string!;"
        "25 restartPolicyRules []ContainerRestartRule; 9 volumeMounts []VolumeMount;"
        "21 volumeDevices []VolumeDevice; 10 livenessProbe Probe; 11 readinessProbe Probe;"
        "22 startupProbe Probe; 12 lifecycle Lifecycle; 13 terminationMessagePath;"
        "20 terminationMessagePolicy; 14 imagePullPolicy; 15 securityContext SecurityContext;"
        "16 stdin bool; 17 stdinOnce bool; 18 tty bool"
    ),
    # Go embeds the container fields in EphemeralContainer; they share field numbers.
    "EphemeralContainer": "1 (inline) Container; 2 targetContainerName",
    "ContainerPort": "1 name; 2 hostPort int; 3 containerPort int!; 4 protocol; 5 hostIP",
    "ContainerResizePolicy": "1 resourceName!; 2 restartPolicy!",
    "ContainerRestartRule": "1 action!; 2 exitCodes ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "1 operator!; 2 values []int",
    "EnvFromSource": "1 prefix; 2 configMapRef ConfigMapEnvSource; 3 secretRef SecretEnvSource",
    "ConfigMapEnvSource": "1 (inline) LocalObjectReference; 2 optional bool!",
    "SecretEnvSource": "1 (inline) LocalObjectReference; 2 optional bool!",
    "EnvVar": "1 name!; 2 value; 3 valueFrom EnvVarSource",
    "EnvVarSource": (
        "1 fieldRef ObjectFieldSelector; 2 resourceFieldRef ResourceFieldSelector;"
        "3 configMapKeyRef ConfigMapKeySelector; 4 secretKeyRef SecretKeySelector;"
        "5 fileKeyRef FileKeySelector"
    ),
    "ObjectFieldSelector": "1 apiVersion; 2 fieldPath!",
    "ResourceFieldSelector": "1 containerName; 2 resource!; 3 divisor Quantity",
    "ConfigMapKeySelector": "1 (inline) LocalObjectReference; 2 key!; 3 optional bool!",
    "SecretKeySelector": "1 (inline) LocalObjectReference; 2 key!; 3 optional bool!",
    "FileKeySelector": "1 volumeName!; 2 path!; 3 key!; 4 optional bool!",
    "ResourceRequirements": (
        "1 limits {Quantity}; 2 requests {Quantity}; 3 claims []ResourceClaim"
    ),
    "ResourceClaim": "1 name!; 2 request",
    "VolumeMount": (
        "1 name!; 2 readOnly bool; 7 recursiveReadOnly string!; 3 mountPath!; 4 subPath;"
        "5 mountPropagation string!; 6 subPathExpr"
    ),
    "VolumeDevice": "1 name!; 2 devicePath!",
    # Go embeds ProbeHandler in Probe: exec, httpGet... sit next to periodSeconds in JSON.
    "Probe": (
        "1 (inline) ProbeHandler; 2 initialDelaySeconds int; 3 timeoutSeconds int;"
        "4 periodSeconds int; 5 successThreshold int; 6 failureThreshold int;"
        "7 terminationGracePeriodSeconds int!"
    ),
    "ProbeHandler": (
        "1 exec ExecAction; 2 httpGet HTTPGetAction; 3 tcpSocket TCPSocketAction; 4 grpc GRPCAction"
    ),
    "ExecAction": "1 command []",
    "HTTPGetAction": "1 path; 2 port IntOrString; 3 host; 4 scheme; 5 httpHeaders []HTTPHeader",
    "HTTPHeader": "1 name!; 2 value!",
    "TCPSocketAction": "1 port IntOrString; 2 host",
    "GRPCAction": "1 port int!; 2 service string!",
    "Lifecycle": "1 postStart LifecycleHandler; 2 preStop LifecycleHandler; 3 stopSignal string!",
    "LifecycleHandler": (
        "1 exec ExecAction; 2 httpGet HTTPGetAction; 3 tcpSocket TCPSocketAction;"
        "4 sleep SleepAction"
    ),
    "SleepAction": "1 seconds int!",
    "SecurityContext": (
        "1 capabilities Capabilities; 2 privileged bool!; 3 seLinuxOptions SELinuxOptions;"
        "10 windowsOptions WindowsSecurityContextOptions; 4 runAsUser int!; 8 runAsGroup int!;"
        "5 runAsNonRoot bool!; 6 readOnlyRootFilesystem bool!; 7 allowPrivilegeEscalation bool!;"
        "9 procMount string!; 11 seccompProfile SeccompProfile;"
        "12 appArmorProfile AppArmorProfile"
    ),
    "Capabilities": "1 add []; 2 drop []",
    "SELinuxOptions": "1 user; 2 role; 3 type; 4 level",
    "WindowsSecurityContextOptions": (
        "1 gmsaCredentialSpecName string!; 2 gmsaCredentialSpec string!;"
        "3 runAsUserName string!; 4 hostProcess bool!"
    ),
    "SeccompProfile": "1 type!; 2 localhostProfile string!",
    "AppArmorProfile": "1 type!; 2 localhostProfile string!",
}

_VOLUMES = {
    # Go embeds VolumeSource in Volume: the source sits next to the name in JSON.
    "Volume": "1 name!; 2 (inline) VolumeSource",
    "VolumeSource": (
        "1 hostPath HostPathVolumeSource; 2 emptyDir EmptyDirVolumeSource;"
        "5 gitRepo GitRepoVolumeSource; 6 secret SecretVolumeSource; 7 nfs NFSVolumeSource;"
        "10 persistentVolumeClaim PersistentVolumeClaimVolumeSource;"
        "16 downwardAPI DownwardAPIVolumeSource; 19 configMap ConfigMapVolumeSource;"
        "26 projected ProjectedVolumeSource; 28 csi CSIVolumeSource;"
        "29 ephemeral EphemeralVolumeSource; 30 image ImageVolumeSource"
    ),
    "HostPathVolumeSource": "1 path!; 2 type string!",
    "EmptyDirVolumeSource": "1 medium; 2 sizeLimit Quantity",
    "GitRepoVolumeSource": "1 repository!; 2 revision; 3 directory",
    "NFSVolumeSource": "1 server!; 2 path!; 3 readOnly bool",
    "SecretVolumeSource": (
        "1 secretName; 2 items []KeyToPath; 3 defaultMode int!; 4 optional bool!"
    ),
    "ConfigMapVolumeSource": (
        "1 (inline) LocalObjectReference; 2 items []KeyToPath; 3 defaultMode int!; 4 optional bool!"
    ),
    "KeyToPath": "1 key!; 2 path!; 3 mode int!",
    "PersistentVolumeClaimVolumeSource": "1 claimName!; 2 readOnly bool",
    "DownwardAPIVolumeSource": "1 items []DownwardAPIVolumeFile; 2 defaultMode int!",
    "DownwardAPIVolumeFile": (
        "1 path!; 2 fieldRef ObjectFieldSelector; 3 resourceFieldRef ResourceFieldSelector;"
        "4 mode int!"
    ),
    "ProjectedVolumeSource": "1 sources []VolumeProjection!; 2 defaultMode int!",
    "VolumeProjection": (
        "1 secret SecretProjection; 2 downwardAPI DownwardAPIProjection;"
        "3 configMap ConfigMapProjection; 4 serviceAccountToken ServiceAccountTokenProjection;"
        "5 clusterTrustBundle ClusterTrustBundleProjection"
    ),
    "SecretProjection": "1 (inline) LocalObjectReference; 2 items []KeyToPath; 4 optional bool!",
    "ConfigMapProjection": (
        "1 (inline) LocalObjectReference; 2 items []KeyToPath; 4 optional bool!"
    ),
    "DownwardAPIProjection": "1 items []DownwardAPIVolumeFile",
    "ServiceAccountTokenProjection": "1 audience; 2 expirationSeconds int!; 3 path!",
    "ClusterTrustBundleProjection": (
        "1 name string!; 2 signerName string!; 3 labelSelector meta.LabelSelector;"
        "5 optional bool!; 4 path!"
    ),
    "CSIVolumeSource": (
        "1 driver!; 2 readOnly bool!; 3 fsType string!; 4 volumeAttributes {string};"
        "5 nodePublishSecretRef LocalObjectReference"
    ),
    "EphemeralVolumeSource": "1 volumeClaimTemplate PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimTemplate": "1 metadata meta.ObjectMeta; 2 spec PersistentVolumeClaimSpec",
    "PersistentVolumeClaimSpec": (
        "1 accessModes []; 4 selector meta.LabelSelector; 2 resources VolumeResourceRequirements;"
        "3 volumeName; 5 storageClassName string!; 6 volumeMode string!;"
        "7 dataSource TypedLocalObjectReference; 8 dataSourceRef TypedObjectReference;"
        "9 volumeAttributesClassName string!"
    ),
    "VolumeResourceRequirements": "1 limits {Quantity}; 2 requests {Quantity}",
    "ImageVolumeSource": "1 reference; 2 pullPolicy",
}

CORE = Package(
    name="io.k8s.api.core.v1",
    alias="core",
    api_version="v1",
    kinds=("Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "ResourceQuota"),
    messages={**_OBJECT_KINDS, **_SERVICE, **_POD, **_AFFINITY, **_CONTAINER, **_VOLUMES},
)
