"""The simulated kubelet: what happens on a node once a pod is bound to it."""
