"""The playbooks: one function per Finding code, turning a Finding into candidate Fixes.

    images.py       set the last good image, or roll back (pull failures, deleted tags)
    resources.py    a memory limit from observed use, or a rollback (OOM kills); HPA requests
    rollbacks.py    rollout undo to the last good revision (crash loops, error logs after a rollout)
    objects.py      create the missing ConfigMap/Secret; recreate a claim with a real class
    network.py      selectors and ports that point at nothing (Service, Ingress, NetworkPolicy)
    scheduling.py   requests no node meets, selectors, taints (tolerate or untaint), cordons
    nodes.py        cordon and drain a failing node
    disruption.py   budgets that block every eviction; suspended CronJobs
    scaling.py      scale back up a Service's backend scaled to 0 replicas
    templates.py    where each kind keeps its pod spec, and patches to it

A playbook reads the Finding's details and the same Snapshot the analyzers read, never the
cluster; it yields Fixes with their own confidence, and `recommend.py` ranks them.
"""
