"""The practice cluster: a Kubernetes-API-compatible server that real kubectl and the official
Python clients use over HTTP exactly as they use a real API server.

It imports nothing from the rest of kubecrew; everything else reaches it only through a kubeconfig.
The API layer (storage, REST, watch, patch, discovery, OpenAPI, RBAC) lives here; controllers and
the simulated kubelet come next.
"""
