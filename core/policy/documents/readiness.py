"""NodeReadinessPolicy: when a node is ready to serve, beyond the kubelet saying Ready.

    spec:
      nodeSelector: {matchLabels: {accelerator: nvidia}}   # the nodes these rules gate
      taint: {key: kubecrew.io/not-ready, effect: NoSchedule}   # held while a rule fails
      rules:
        - name: device-plugin                  # a Ready pod of this DaemonSet on the node
          daemonSet: {namespace: kube-system, name: nvidia-device-plugin}
        - name: net-agent                      # a Ready pod with these labels on the node
          pod: {namespace: kube-system, selector: {matchLabels: {app: net-agent}}}
        - name: network                        # a node condition with this status
          condition: {type: NetworkReady, status: "True"}

A node joins carrying the taint; the Cluster Operator removes it only when every rule holds on
that node (and the kubelet reports Ready), and puts it back when a rule breaks later. The kubelet's
Ready is never a rule of its own here: it is always required, and never enough.

The document is data the agent reads back (`get_policy`); the policy store's evaluation does not
judge actions with it, since it says when a node may serve, not whether a change may happen.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from core.policy.documents.common import API_VERSION, DnsLabel, Metadata, Name, Strict, unique_names
from core.policy.documents.selectors import LabelSelector

DEFAULT_TAINT_KEY = "kubecrew.io/not-ready"
_TAINT_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


def _taint_key(value: str) -> str:
    if len(value) > 316 or not _TAINT_KEY.match(value):
        raise ValueError(f"taint key {value!r} is not a qualified name such as example.com/name")
    return value


class Taint(Strict):
    key: Annotated[str, AfterValidator(_taint_key)] = DEFAULT_TAINT_KEY
    effect: Literal["NoSchedule", "NoExecute", "PreferNoSchedule"] = "NoSchedule"

    def describe(self) -> str:
        return f"{self.key}:{self.effect}"


class DaemonSetRef(Strict):
    namespace: DnsLabel
    name: Name


class PodRef(Strict):
    namespace: DnsLabel
    selector: LabelSelector

    @model_validator(mode="after")
    def _selects_something(self) -> PodRef:
        if not self.selector.matchLabels and not self.selector.matchExpressions:
            raise ValueError("an empty selector matches any pod; name the pod's labels")
        return self


class NodeCondition(Strict):
    type: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9]*$")]
    status: Literal["True", "False", "Unknown"] = "True"


class ReadinessRule(Strict):
    """One check, exactly one of: a DaemonSet's pod, a labelled pod, a node condition."""

    name: DnsLabel
    description: str = ""
    daemonSet: DaemonSetRef | None = None
    pod: PodRef | None = None
    condition: NodeCondition | None = None

    @model_validator(mode="after")
    def _one_check(self) -> ReadinessRule:
        given = [n for n in ("daemonSet", "pod", "condition") if getattr(self, n) is not None]
        if len(given) != 1:
            found = ", ".join(given) or "none"
            raise ValueError(f"give exactly one of daemonSet, pod or condition (found: {found})")
        return self

    def describe(self) -> str:
        if self.daemonSet is not None:
            ds = self.daemonSet
            return f"a Ready pod of DaemonSet {ds.namespace}/{ds.name} on the node"
        if self.pod is not None:
            return (
                f"a Ready pod in {self.pod.namespace} with labels "
                f"{self.pod.selector.describe()} on the node"
            )
        assert self.condition is not None
        return f"node condition {self.condition.type}={self.condition.status}"


class ReadinessSpec(Strict):
    nodeSelector: LabelSelector = LabelSelector()
    taint: Taint = Taint()
    rules: Annotated[list[ReadinessRule], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique(self) -> ReadinessSpec:
        unique_names([rule.name for rule in self.rules], reserved=("kubelet-ready",))
        return self


class NodeReadinessPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["NodeReadinessPolicy"] = "NodeReadinessPolicy"
    metadata: Metadata
    spec: ReadinessSpec
