"""The practice cluster as the CLI sees it from outside: a sandbox home on disk (`home`) and a
small reader of its API that holds nothing but its kubeconfig (`probe`). The sandbox package
itself is never imported for this: a running sandbox is reached over HTTP, as any cluster."""
