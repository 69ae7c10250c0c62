"""networking.k8s.io/v1 Ingress, as `kubectl create ingress` sends it.

Field numbers are facts from k8s.io/api/networking/v1/generated.proto; the spec syntax is
described in `sandbox.protobuf.layout`.
"""

from __future__ import annotations

from sandbox.protobuf.layout import Package

NETWORKING = Package(
    name="io.k8s.api.networking.v1",
    alias="networking",
    api_version="networking.k8s.io/v1",
    kinds=("Ingress",),
    messages={
        "Ingress": "1 metadata meta.ObjectMeta; 2 spec IngressSpec; 3 status IngressStatus",
        "IngressSpec": (
            "4 ingressClassName string!; 1 defaultBackend IngressBackend; 2 tls []IngressTLS;"
            "3 rules []IngressRule"
        ),
        "IngressBackend": (
            "4 service IngressServiceBackend; 3 resource core.TypedLocalObjectReference"
        ),
        "IngressServiceBackend": "1 name!; 2 port ServiceBackendPort",
        "ServiceBackendPort": "1 name; 2 number int",
        "IngressTLS": "1 hosts []; 2 secretName",
        # Go embeds IngressRuleValue in IngressRule: `http` sits next to `host` in JSON.
        "IngressRule": "1 host; 2 (inline) IngressRuleValue",
        "IngressRuleValue": "1 http HTTPIngressRuleValue",
        "HTTPIngressRuleValue": "1 paths []HTTPIngressPath!",
        "HTTPIngressPath": "1 path; 3 pathType string!; 2 backend IngressBackend",
        "IngressStatus": "1 loadBalancer IngressLoadBalancerStatus",
        "IngressLoadBalancerStatus": "1 ingress []IngressLoadBalancerIngress",
        "IngressLoadBalancerIngress": "1 ip; 2 hostname; 4 ports []IngressPortStatus",
        "IngressPortStatus": "1 port int!; 2 protocol!; 3 error string!",
    },
)
