"""notify: the first step of the remediation loop, turning what the cluster says into incidents.

Signals come from three sources (`sources`: a Kubernetes watch of Warning events through the kube
server's `watch_events` tool, a scheduled `diagnose` patrol; `alertmanager`: the webhook
receiver). `signals` names each one's incident (the workload and the class of finding), the
`incidents` store merges duplicates durably, and the `desk` calls a handler once per new or
re-opened incident. Agents never hold a Kubernetes client: every cluster read is an MCP tool call.
"""
