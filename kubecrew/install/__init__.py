"""`kubecrew install`: the crew's footprint on a cluster (`footprint`) and one kubeconfig per
agent (`kubeconfigs`)."""
